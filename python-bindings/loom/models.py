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

    def __init__(self, family: str, options: dict):
        self.family = family
        self.options = dict(options)
        self._graph_json = None

    def model_options(self) -> dict:
        """The builder's options by their `loom-model` flag names."""
        return {k.replace("_", "-"): str(v) for k, v in self.options.items()
                if v is not None}

    @property
    def graph_json(self) -> str:
        """The model's graph JSON text (built on first use)."""
        if self._graph_json is None:
            self._graph_json = _backend.get().model_graph_json(
                self.family, self.model_options())
        return self._graph_json

    @property
    def graph(self) -> Graph:
        """The model as a `loom.Graph` (to inspect or extend)."""
        return Graph.from_json(self.graph_json)

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"Model({self.family!r}, {opts})"


FAMILIES = ("gpt2", "llama", "transformer", "tfm-lm")


def build(family: str, **options) -> Model:
    """A `family` model (gpt2, llama, transformer, tfm-lm) with the
    `loom-model` flags as keywords (`kv_heads=2` is `--kv-heads 2`). The
    builder runs when the model is compiled (or its `graph` is read), and
    reports a bad configuration as LoomError with its message."""
    if family not in FAMILIES:
        raise LoomError(f"unknown model family `{family}`; expected one of "
                        f"{', '.join(FAMILIES)}")
    for key in options:
        if not key.replace("_", "").isalnum():
            raise LoomError(f"bad model option `{key}`")
    return Model(family, options)


def gpt2(**options) -> Model:
    """nanoGPT's GPT-2 (`layers`, `hidden`, `heads`, `vocab`, `seq`, `batch`,
    `dropout`, `gelu`, `bias` (nanoGPT's: False drops every Linear and
    LayerNorm bias), `tie_embeddings` (False: an untied `lm_head.weight`),
    `dtype`, `preset` (any case, aliases: `"gpt2-medium"`, `"124M"`), ...)."""
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
