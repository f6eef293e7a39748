#===- errors.py - The one exception type of the loom package -------------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""`LoomError`: every problem the package reports, with Loom's message."""


class LoomError(RuntimeError):
    """Loom rejected an input or failed; the message holds its diagnostics
    (the C API's error message, or a tool's stderr)."""
