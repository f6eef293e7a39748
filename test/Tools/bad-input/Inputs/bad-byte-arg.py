"""Runs a command with byte 0xFF in its arguments, which a lit RUN line
cannot write: every `\\xFF` (four characters) in an argument becomes the
byte.

  bad-byte-arg.py COMMAND ARG...
"""

import os
import sys


def main():
    args = [os.fsencode(arg).replace(b"\\xFF", b"\xff") for arg in sys.argv[1:]]
    os.execvp(args[0], args)


if __name__ == "__main__":
    main()
