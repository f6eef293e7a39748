#===- plan.py - The parallel plan as Python objects ----------------------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""The plan the sharding phase chose (`loomc --plan-json`, docs/Search.md) as
objects: the mesh, a layout per argument and result of the training step,
each forward op's strategy, the inserted collectives and the predictions.
`Plan.raw` keeps the whole JSON document for anything not wrapped here."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from loom.errors import LoomError


@dataclass(frozen=True)
class Mesh:
    """A logical device mesh: axis names and sizes, major to minor."""
    name: str
    axes: dict  # axis name -> size, in mesh order
    devices: int

    @property
    def shape(self) -> tuple:
        return tuple(self.axes.values())

    def __str__(self) -> str:
        return ",".join(f"{a}={s}" for a, s in self.axes.items())


@dataclass(frozen=True)
class Layout:
    """`#dist.layout`: per tensor dim the mesh axes splitting it (major to
    minor), and the axes over which the value is a pending sum."""
    dims: tuple  # tuple of tuples of axis names
    partial: tuple = ()

    @property
    def is_replicated(self) -> bool:
        return not self.partial and not any(self.dims)

    def local_shape(self, shape, mesh: Mesh) -> tuple:
        """The per-device block shape of a tensor of global `shape`."""
        return tuple(d // math.prod(mesh.axes[a] for a in axes)
                     for d, axes in zip(shape, self.dims))

    def __str__(self) -> str:
        dims = ", ".join("[" + ", ".join(f'"{a}"' for a in axes) + "]"
                         for axes in self.dims)
        text = f"[{dims}]"
        if self.partial:
            text += " partial=" + ",".join(self.partial)
        return text


@dataclass(frozen=True)
class Value:
    """An argument or result of the step: its name, global shape (when the
    plan records it) and layout."""
    index: int
    name: str
    layout: Layout
    shape: tuple | None = None


@dataclass(frozen=True)
class OpStrategy:
    """A forward op's strategy: mesh axes per sharding-rule factor."""
    index: int
    op: str
    strategy: tuple
    params: tuple = ()


@dataclass(frozen=True)
class Collective:
    """A collective of the partitioned step, with its local input bytes."""
    op: str
    axes: tuple
    bytes: int
    shape: tuple = ()
    dim: int | None = None


@dataclass(frozen=True)
class Predicted:
    """The cost model's prediction for one step on one device."""
    step_time_s: float
    compute_s: float
    comm_s: float
    bubble_s: float
    memory_bytes_per_device: int
    model_flops_per_step: float


@dataclass(frozen=True)
class Pipeline:
    """The pipeline of a plan (docs/Pipeline.md): `stages` stages along the
    mesh axis `axis`, each step split into `micro_batches`; under the
    interleaved 1F1B schedule each stage holds `virtual_stages` chunks of
    layers (1 otherwise)."""
    stages: int
    micro_batches: int
    schedule: str
    axis: str
    virtual_stages: int = 1


@dataclass
class Plan:
    """The plan of one compilation (see the module docstring)."""
    mesh: Mesh
    entry: str
    arguments: list
    results: list
    ops: list
    collectives: list
    predicted: Predicted | None  # None without a cluster (no search)
    raw: dict = field(repr=False)
    pipeline: Pipeline | None = None  # None: one stage

    @property
    def devices(self) -> int:
        """The ranks the program runs on: the mesh's devices, times the
        stages when the mesh is one stage's (the plan of a phase before the
        stages are partitioned has no pipeline axis in its mesh)."""
        if self.pipeline is None or self.pipeline.axis in self.mesh.axes:
            return self.mesh.devices
        return self.mesh.devices * self.pipeline.stages

    @property
    def layouts(self) -> dict:
        """Layout per value name: arguments first, then results (an updated
        parameter has the same name and, being loop-carried, its layout)."""
        out = {}
        for v in self.arguments + self.results:
            out.setdefault(v.name, v.layout)
        return out

    def layout(self, name: str) -> Layout:
        """The layout of the argument or result `name`."""
        layouts = self.layouts
        if name not in layouts:
            raise LoomError(f"the plan has no value named `{name}`")
        return layouts[name]

    @classmethod
    def from_json(cls, document) -> "Plan":
        if isinstance(document, (str, bytes)):
            document = json.loads(document)
        try:
            mesh_json = document["mesh"]
            mesh = Mesh(mesh_json.get("name", "mesh"),
                        {a["name"]: int(a["size"]) for a in mesh_json["axes"]},
                        int(mesh_json["devices"]))

            def value(v):
                return Value(v["index"], v["name"], _layout(v["layout"]),
                             tuple(v["shape"]) if "shape" in v else None)

            # Only a searched plan (one with a cluster) has predictions.
            predicted = document.get("predicted")
            pipeline = document.get("pipeline")
            return cls(
                mesh=mesh, entry=document.get("entry", ""),
                arguments=[value(v) for v in document["arguments"]],
                results=[value(v) for v in document["results"]],
                ops=[OpStrategy(o["index"], o["op"],
                                tuple(tuple(f) for f in o["strategy"]),
                                tuple(o.get("params", ())))
                     for o in document.get("ops", [])],
                collectives=[Collective(c["op"], tuple(c.get("axes", ())),
                                        int(c.get("bytes", 0)),
                                        tuple(c.get("shape", ())),
                                        c.get("dim"))
                             for c in document.get("collectives", [])],
                predicted=None if predicted is None else Predicted(
                    float(predicted["step_time_s"]),
                    float(predicted["compute_s"]), float(predicted["comm_s"]),
                    float(predicted.get("bubble_s", 0.0)),
                    int(predicted["memory_bytes_per_device"]),
                    float(predicted["model_flops_per_step"])),
                raw=document,
                pipeline=None if pipeline is None else Pipeline(
                    int(pipeline["stages"]), int(pipeline["micro_batches"]),
                    str(pipeline["schedule"]), str(pipeline["axis"]),
                    int(pipeline.get("virtual_stages", 1))))
        except (KeyError, TypeError, ValueError) as e:
            raise LoomError(f"malformed plan JSON: {e!r}") from e

    def __str__(self) -> str:
        p = self.predicted
        if self.pipeline is None:
            lines = [f"mesh {self.mesh} ({self.devices} devices)"]
        else:
            q = self.pipeline
            chunks = (f" x {q.virtual_stages} virtual stages"
                      if q.virtual_stages > 1 else "")
            lines = [f"mesh {self.mesh}, pipeline of {q.stages} stages"
                     f"{chunks} on `{q.axis}` ({self.devices} devices), "
                     f"{q.micro_batches} micro-batches, {q.schedule}"]
        if p is not None:
            lines.append(
                f"predicted step {p.step_time_s * 1e3:.3f} ms (compute "
                f"{p.compute_s * 1e3:.3f} ms, comm {p.comm_s * 1e3:.3f} ms), "
                f"memory {p.memory_bytes_per_device / 2**20:.2f} MiB/device")
        lines.append(f"{len(self.collectives)} collectives, "
                     f"{sum(c.bytes for c in self.collectives)} bytes")
        # Parameters and inputs; optimizer states follow their parameter.
        shown = [v for v in self.arguments
                 if not v.name.endswith((".exp_avg", ".exp_avg_sq",
                                         ".momentum_buf")) and v.name != "step"]
        lines += [f"  {v.name}: {v.layout}" for v in shown]
        return "\n".join(lines)


def _layout(j) -> Layout:
    return Layout(tuple(tuple(axes) for axes in j["dims"]),
                  tuple(j.get("partial", ())))
