#===- models.py - Loom's model builders from Python ----------------------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""The model builders of `loom-model` (docs/Models.md): GPT-2, Llama, the
encoder-decoder Transformer and the TransformerEncoder LM. Each function
takes the builder's flags as keywords (`layers=2, hidden=64, heads=4`,
`preset="124m"`) and returns a `Model` that `loom.compile` accepts."""

from __future__ import annotations

from loom import _backend
from loom.errors import LoomError
from loom.graph import Graph


class Model:
    """A built model: its family, options and graph JSON text."""

    def __init__(self, family: str, options: dict, graph_json: str):
        self.family = family
        self.options = dict(options)
        self.graph_json = graph_json

    @property
    def graph(self) -> Graph:
        """The model as a `loom.Graph` (to inspect or extend)."""
        return Graph.from_json(self.graph_json)

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"Model({self.family!r}, {opts})"


def _flags(options: dict) -> list:
    flags = []
    for key, value in options.items():
        if value is None:
            continue
        if not key.replace("_", "").isalnum():
            raise LoomError(f"bad model option `{key}`")
        flags.append(f"--{key.replace('_', '-')}={value}")
    return flags


def build(family: str, **options) -> Model:
    """Builds `family` (gpt2, llama, transformer, tfm-lm) with the
    `loom-model` flags given as keywords; raises LoomError for a bad
    configuration, with the builder's message."""
    text = _backend.get().build_model(family, [*_flags(options),
                                               "--format=json"])
    return Model(family, options, text)


def gpt2(**options) -> Model:
    """nanoGPT's GPT-2 (`layers`, `hidden`, `heads`, `vocab`, `seq`, `batch`,
    `dropout`, `gelu`, `dtype`, `preset`, ...)."""
    return build("gpt2", **options)


def llama(**options) -> Model:
    """Llama (adds `kv_heads`, `ffn`, `rope_theta`, `norm_eps`)."""
    return build("llama", **options)


def transformer(**options) -> Model:
    """The encoder-decoder Transformer (adds `decoder_layers`, `tgt_seq`)."""
    return build("transformer", **options)


def tfm_lm(**options) -> Model:
    """The TransformerEncoder language model of the PyTorch seed."""
    return build("tfm-lm", **options)
