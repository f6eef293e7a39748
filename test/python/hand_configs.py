"""Megatron-style hand configs priced by the search's cost model, against the
plan the search finds by itself (docs/Performance.md, "Searched plans
against hand configs").

A hand config is what an expert writes for Megatron-LM: tensor parallelism
t in {1, 2, 4, 8} inside a node, p pipeline stages, d = devices / (t p)
data-parallel replicas, a micro-batch of mbs samples (M = batch / (d mbs)
micro-batches per step) and full activation recompute on or off. It is
given to `loomc` as the MindSpore-style parallel config Loom reads
(`data_parallel`, `model_parallel`, `pipeline_stage`, `micro_batch_num`,
`recompute`): the config fixes the mesh, the stages, the micro-batches and
Megatron's column/row-parallel linears and vocab-parallel embedding and
head; the same search prices it (filling in what the config leaves open,
such as ZeRO-1, with the cheaper choice: the expert is given the benefit of
the doubt). The automatic plan is `loomc --cluster C --devices N` with
nothing else: the whole plan space.

Used as a benchmark script (the table) and by test_hand_configs.py (a few
cases asserted):

    LOOM_TOOLS_DIR=build/bin python3 test/python/hand_configs.py \
        --model gpt2:gpt3-175b --cluster dgx-a100-80g --devices 1024
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

TOOLS = Path(os.environ.get("LOOM_TOOLS_DIR", "build/bin"))

# The device types of the cluster presets: GPUs per node (t stays inside).
DEVICES_PER_NODE = {"dgx-a100-80g": 8, "dgx-h100": 8}


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True,
                          text=True)


def build_model(family_preset, out, extra=()):
    family, preset = family_preset.split(":")
    result = run(TOOLS / "loom-model", family, "--preset", preset, *extra,
                 "--format", "json", "-o", out)
    if result.returncode:
        raise RuntimeError(result.stderr)
    graph = json.loads(Path(out).read_text())
    shapes = {t["name"]: t["shape"] for t in graph["tensors"]}
    layers = max(int(part) for name in shapes for part in name.split(".")
                 if part.isdigit()) + 1
    return shapes["input_ids"][0], layers


def price(model, cluster, workdir, *flags):
    """The plan JSON of `loomc MODEL --cluster C FLAGS` (None when no plan
    fits or the config is refused), and loomc's error."""
    plan = Path(workdir) / "plan.json"
    if plan.exists():
        plan.unlink()
    result = run(TOOLS / "loomc", model, "--cluster", cluster,
                 "--compile-to=sharding", *flags, "--plan-json", plan,
                 "-o", Path(workdir) / "out.mlir")
    if result.returncode:
        return None, result.stderr.strip().splitlines()[-1:]
    return json.loads(plan.read_text()), None


def hand_configs(devices, batch, layers, per_node, mbs_choices=(1, 2, 4)):
    """Every Megatron-style config of the grid that fits the devices and
    the batch."""
    for t in (1, 2, 4, 8):
        if t > per_node or devices % t:
            continue
        p = 1
        while p <= min(layers, devices // t):
            if (devices // t) % p == 0:
                d = devices // (t * p)
                if batch % d == 0:
                    micro = sorted({batch // (d * mbs) for mbs in mbs_choices
                                    if (batch // d) % mbs == 0
                                    and batch // (d * mbs) <= 256}) \
                        if p > 1 else [1]
                    for m in micro:
                        for recompute in (False, True):
                            yield {"data_parallel": d, "model_parallel": t,
                                   "pipeline_stage": p, "micro_batch_num": m,
                                   "recompute": recompute}
            p *= 2


def describe(config):
    return ("t={model_parallel} p={pipeline_stage} d={data_parallel} "
            "M={micro_batch_num}{r}").format(
                r=" recompute" if config["recompute"] else "", **config)


def compare(model_spec, cluster, devices, extra=(), mbs_choices=(1, 2, 4),
            log=None):
    """The automatic plan and the best hand config of the grid, both priced
    by the same cost model."""
    with tempfile.TemporaryDirectory() as workdir:
        model = Path(workdir) / "model.json"
        batch, layers = build_model(model_spec, model, extra)
        auto, error = price(model, cluster, workdir, "--devices", devices)
        if auto is None:
            raise RuntimeError(f"automatic plan: {error}")
        hands = []
        for config in hand_configs(devices, batch, layers,
                                   DEVICES_PER_NODE.get(cluster, 8),
                                   mbs_choices):
            plan, _ = price(model, cluster, workdir, "--parallel-config",
                            json.dumps(config))
            if plan is None:
                continue
            hands.append((plan["predicted"]["step_time_s"], config))
            if log:
                print(f"  {describe(config)}: "
                      f"{plan['predicted']['step_time_s']:.4g} s", file=log)
        hands.sort(key=lambda h: h[0])
        return auto, hands


def describe_auto(plan):
    axes = " x ".join(f"{a['name']}={a['size']}" for a in plan["mesh"]["axes"])
    pipeline = plan.get("pipeline")
    text = axes
    if pipeline and pipeline.get("stages", 1) > 1:
        text = f"pp={pipeline['stages']} x {axes}, M={pipeline['micro_batches']}"
    choices = plan.get("plan", {})
    if choices.get("zero"):
        text += ", ZeRO-1"
    if choices.get("recompute"):
        text += ", recompute"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True,
                        help="family:preset, e.g. gpt2:gpt3-175b")
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--devices", type=int, required=True)
    parser.add_argument("--batch", type=int, help="override the batch")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    extra = ["--batch", str(args.batch)] if args.batch else []
    auto, hands = compare(args.model, args.cluster, args.devices, extra,
                          log=sys.stderr if args.verbose else None)
    step = auto["predicted"]["step_time_s"]
    if not hands:
        print(f"| {args.model} | {args.cluster} | {args.devices} | "
              f"{describe_auto(auto)} | {step:.4g} s | no hand config fits "
              f"| | |")
        return
    best_time, best = hands[0]
    print(f"| {args.model} | {args.cluster} | {args.devices} | "
          f"{describe_auto(auto)} | {step:.4g} s | {describe(best)} | "
          f"{best_time:.4g} s | {best_time / step:.3f} | {len(hands)} |")


if __name__ == "__main__":
    main()
