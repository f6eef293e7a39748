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
the doubt). The automatic plan is the search over the whole plan space
(`pipeline-stages=0`, what `loomc --cluster C --devices N` runs). Both are
priced on the step `loomc --compile-to=autodiff` builds, by
`dist-search-strategy` with `split-step=false`: the model the search ranks
plans by (each micro-batch's ops at its own shapes, the rest of it 1/M of
the batch's), so that a grid of a hundred
configs on GPT-3 175B takes minutes, not hours (loomc splits the step into
the micro-batches of the chosen plan and prices it again, docs/Search.md,
"The plan space").

Used as a benchmark script (the table) and by test_hand_configs.py (a few
cases asserted):

    LOOM_TOOLS_DIR=build/bin python3 test/python/hand_configs.py \
        --model gpt2:gpt3-175b --cluster dgx-a100-80g --devices 1024

prints one row of the table: model, cluster, devices, the automatic plan
and its step, the best hand config and its step, their ratio (>= 1: the
automatic plan is never worse), and how many hand configs had a plan.
"""

import argparse
import json
import os
import re
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


PLAN = re.compile(r"dist\.plan = #dist\.plan<zero = (\d+), recompute = "
                  r"(true|false), step_time_s = ([0-9.e+-]+)")
PIPELINE = re.compile(r"dist\.pipeline = #dist\.pipeline<stages = (\d+), "
                      r"micro_batches = (\d+)")
MESH = re.compile(r"dist\.mesh @\w+ shape \[([0-9, ]*)\] axes \[([^\]]*)\]")


def autodiff(model, workdir):
    """The training step the search prices, built once per model."""
    step = Path(workdir) / "step.mlir"
    result = run(TOOLS / "loomc", model, "--compile-to=autodiff", "-o", step)
    if result.returncode:
        raise RuntimeError(result.stderr)
    return step


def price(step, cluster, workdir, **options):
    """The search's plan for `step` under these pass options (None when no
    plan fits or the config is refused): `dist-search-strategy` with
    `split-step=false`, so that every plan, the automatic one included, is
    priced as the search ranks plans (a micro-batch's ops at its own
    shapes) without splitting the step for each."""
    out = Path(workdir) / "searched.mlir"
    option_text = " ".join(f"{k.replace('_', '-')}={v}"
                           for k, v in options.items())
    result = run(TOOLS / "loom-opt", step,
                 f"-dist-search-strategy=cluster={cluster} split-step=false "
                 f"{option_text}", "-o", out)
    if result.returncode:
        return None
    text = out.read_text()
    plan = PLAN.search(text)
    mesh = MESH.search(text)
    pipeline = PIPELINE.search(text)
    sizes = [int(x) for x in mesh.group(1).split(",")]
    names = [n.strip().strip('"') for n in mesh.group(2).split(",")]
    return {"step_time_s": float(plan.group(3)),
            "zero": int(plan.group(1)), "recompute": plan.group(2) == "true",
            "mesh": list(zip(names, sizes)),
            "stages": int(pipeline.group(1)) if pipeline else 1,
            "micro_batches": int(pipeline.group(2)) if pipeline else 1}


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
    """The automatic plan and every hand config of the grid that has a
    plan, both priced by the same search, cheapest first."""
    with tempfile.TemporaryDirectory() as workdir:
        model = Path(workdir) / "model.json"
        batch, layers = build_model(model_spec, model, extra)
        step = autodiff(model, workdir)
        auto = price(step, cluster, workdir, devices=devices,
                     pipeline_stages=0)
        if auto is None:
            raise RuntimeError("no automatic plan")
        hands = []
        config_path = Path(workdir) / "config.json"
        for config in hand_configs(devices, batch, layers,
                                   DEVICES_PER_NODE.get(cluster, 8),
                                   mbs_choices):
            config_path.write_text(json.dumps(config))
            plan = price(step, cluster, workdir,
                         parallel_config=config_path,
                         pipeline_stages=config["pipeline_stage"],
                         micro_batches=config["micro_batch_num"])
            if plan is None:
                continue
            hands.append((plan["step_time_s"], config))
            if log:
                print(f"  {describe(config)}: {plan['step_time_s']:.4g} s",
                      file=log)
        hands.sort(key=lambda h: h[0])
        return auto, hands


def describe_auto(plan):
    text = " x ".join(f"{name}={size}" for name, size in plan["mesh"])
    if plan["stages"] > 1:
        text = f"pp={plan['stages']} x {text}, M={plan['micro_batches']}"
    if plan["zero"]:
        text += ", ZeRO-1"
    if plan["recompute"]:
        text += ", recompute"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True,
                        help="family:preset, e.g. gpt2:gpt3-175b")
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--devices", type=int, required=True)
    parser.add_argument("--batch", type=int, help="override the batch")
    parser.add_argument("--mbs", default="1,2,4",
                        help="micro-batch sizes of the grid (samples)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    extra = ["--batch", str(args.batch)] if args.batch else []
    mbs = tuple(int(x) for x in args.mbs.split(","))
    auto, hands = compare(args.model, args.cluster, args.devices, extra, mbs,
                          log=sys.stderr if args.verbose else None)
    step = auto["step_time_s"]
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
