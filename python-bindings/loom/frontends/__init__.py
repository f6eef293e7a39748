#===- __init__.py - Frontends: other frameworks' models as loom.Graph -----===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""Frontends turn another framework's model into a `loom.Graph`
(docs/Frontends.md). `loom.frontends.torch.from_torch` traces a PyTorch
module; it is exported as `loom.from_torch`. Frontends import their
framework lazily, so `import loom` never needs it."""
