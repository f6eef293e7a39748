"""Writes the bad inputs of the bad-input tests that a shell line cannot.

  edit-json.py dup-manifest DIR       repeats `step` in DIR/manifest.json
  edit-json.py dup-safetensors OUT    a safetensors file whose header names
                                      tensor `w` twice
  edit-json.py deep-ir OUT N          textual IR with an attribute nested N
                                      brackets deep, one bracket per line
  edit-json.py bad-utf8-graph IN OUT  IN (graph JSON) with byte 0xFF in the
                                      first parameter name
  edit-json.py bad-utf8-onnx IN OUT   IN (an ONNX model) with byte 0xFF in
                                      the name `ln.weight`, everywhere it
                                      occurs (the same length, so the
                                      protobuf stays well-formed)
  edit-json.py set-manifest DIR PATH JSON
                                      sets field PATH (`data.position`) of
                                      DIR/manifest.json to the JSON value
"""

import json
import struct
import sys


def main():
    what = sys.argv[1]
    if what == "dup-manifest":
        path = sys.argv[2] + "/manifest.json"
        text = open(path).read()
        # The second `step` says another step: last-wins would resume there.
        text = text.replace("{", '{\n  "step": 999999,', 1)
        open(path, "w").write(text)
    elif what == "set-manifest":
        path = sys.argv[2] + "/manifest.json"
        manifest = json.load(open(path))
        keys = sys.argv[3].split(".")
        target = manifest
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = json.loads(sys.argv[4])
        json.dump(manifest, open(path, "w"), indent=2)
    elif what == "dup-safetensors":
        header = ('{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
                  '"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}')
        header = header.encode()
        with open(sys.argv[2], "wb") as f:
            f.write(struct.pack("<Q", len(header)) + header + bytes(8))
    elif what == "deep-ir":
        n = int(sys.argv[3])
        with open(sys.argv[2], "w") as f:
            f.write('"test.op"() {a =\n' + "[\n" * n + "]\n" * n +
                    "} : () -> ()\n")
    elif what == "bad-utf8-graph":
        data = open(sys.argv[2], "rb").read()
        data = data.replace(b'"transformer.wte.weight"',
                            b'"transformer.wte\xff.weight"', 1)
        open(sys.argv[3], "wb").write(data)
    elif what == "bad-utf8-onnx":
        data = open(sys.argv[2], "rb").read()
        if b"ln.weight" not in data:
            sys.exit("no `ln.weight` in " + sys.argv[2])
        open(sys.argv[3], "wb").write(data.replace(b"ln.weight", b"ln\xffweight"))
    else:
        sys.exit("unknown edit " + what)


if __name__ == "__main__":
    main()
