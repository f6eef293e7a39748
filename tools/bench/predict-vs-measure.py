#!/usr/bin/env python3
"""Predicted step time (calibrated cost model) against the measured host run.

    /usr/bin/python3 tools/bench/predict-vs-measure.py --calibration-dir DIR
        [--loom-bin build/bin] [--work DIR] [--steps 8] [--quick]

DIR holds `np1.json`, `np2.json` and `np4.json`, each written by
`mpirun -np N loom-calibrate -o DIR/npN.json` (a calibration describes N
ranks running at once on this machine, so a plan on N devices is priced by
the file measured with N ranks). For each plan of the table below, the
script builds the model with `loom-model`, compiles it with
`loomc --cluster DIR/npN.json --devices N [flags] --emit host --plan-json`,
reads `predicted.step_time_s` from the plan, trains `--steps` steps with the
emitted `launch.sh` on the byte-level tokens of the text in the repository,
and takes the median of the logged step times after the first two (first
touch). It prints one Markdown row per plan: plan, mesh, predicted,
measured, measured / predicted.

This measures; it asserts nothing (timings never gate tests). --quick runs
the first two plans (1 device, dp=2) for three steps each: the test-sized
run of test/Integration/Host/predict-vs-measure.test, which checks that the
table comes out, never its numbers.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The quickstart's GPT (docs/Recipes.md) and one four times wider per layer.
MODELS = {
    "gpt-small": ["--layers", "2", "--hidden", "128", "--heads", "4",
                  "--vocab", "256", "--seq", "64", "--batch", "8"],
    "gpt-wide": ["--layers", "4", "--hidden", "256", "--heads", "8",
                 "--vocab", "256", "--seq", "128", "--batch", "8"],
}

# (model, devices, mesh): one device, data and tensor parallelism, both.
# Meshes are fixed so that the program measured and the plan predicted are
# the same plan even when they come from different builds (--emit-bin).
PLANS = [
    ("gpt-small", 1, None),
    ("gpt-small", 2, "dp=2"),
    ("gpt-small", 2, "tp=2"),
    ("gpt-small", 4, "dp=4"),
    ("gpt-small", 4, "dp=2,tp=2"),
    ("gpt-wide", 1, None),
    ("gpt-wide", 2, "dp=2"),
    ("gpt-wide", 2, "tp=2"),
    ("gpt-wide", 4, "dp=2,tp=2"),
]


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"predict-vs-measure: {' '.join(cmd)} failed "
                 f"({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout


def default_bin():
    found = shutil.which("loomc")
    return os.path.dirname(found) if found else os.path.join(ROOT, "build",
                                                             "bin")


def strategies(plan):
    """The per-op strategies of a plan JSON, to check two plans agree."""
    return json.dumps(plan.get("ops"), sort_keys=True)


def measure(args, work, tokens, index, model, devices, mesh, steps):
    """Emits the plan with --emit-bin's loomc and trains it; returns the
    median step time and the emitting plan JSON."""
    model_file = os.path.join(work, f"{model}.mlir")
    out = os.path.join(work, f"plan{index}")
    plan_json = os.path.join(work, f"plan{index}-emitted.json")
    cluster = args.emit_cluster or os.path.join(args.calibration_dir,
                                                f"np{devices}.json")
    mesh_flags = ["--mesh", mesh] if mesh else []
    run([f"{args.emit_bin}/loomc", model_file, "--cluster", cluster,
         "--devices", str(devices), *mesh_flags, "--emit", "host",
         "--emit-dtypes", "f32", "--plan-json", plan_json, "-o", out])
    log = run([os.path.join(out, "launch.sh"), "--data", tokens,
               "--steps", str(steps)])
    times = [float(m.group(1)) / 1e3 for m in
             re.finditer(r"^step \d+ \| loss \S+ \| ([0-9.]+) ms", log,
                         re.MULTILINE)]
    if len(times) < steps:
        sys.exit(f"predict-vs-measure: expected {steps} step lines, got "
                 f"{len(times)}:\n{log}")
    with open(plan_json) as f:
        plan = json.load(f)
    return statistics.median(times[2:] if len(times) > 2 else times), times, plan


def predict(args, work, index, model, devices, mesh):
    """The calibrated prediction of the same plan with --loom-bin's loomc."""
    model_file = os.path.join(work, f"{model}.mlir")
    plan_json = os.path.join(work, f"plan{index}-predicted.json")
    mesh_flags = ["--mesh", mesh] if mesh else []
    run([f"{args.loom_bin}/loomc", model_file, "--cluster",
         os.path.join(args.calibration_dir, f"np{devices}.json"),
         "--devices", str(devices), *mesh_flags, "--compile-to=partition",
         "--plan-json", plan_json, "-o", os.path.join(work, "rank.mlir")])
    with open(plan_json) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calibration-dir", required=True)
    parser.add_argument("--loom-bin", default=default_bin(),
                        help="the tools' directory (default: where loomc is "
                        "on PATH, else build/bin of this checkout)")
    parser.add_argument("--emit-bin", default=None,
                        help="the build whose loomc emits the programs "
                        "(default: --loom-bin)")
    parser.add_argument("--emit-cluster", default=None,
                        help="the cluster the emitting loomc plans with "
                        "(default: the calibration; give `host` for a build "
                        "that predates calibrations)")
    parser.add_argument("--work", default=None)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--phase", choices=["all", "measure", "predict"],
                        default="all",
                        help="measure: train and keep the times in "
                        "WORK/measured.json; predict: price them")
    args = parser.parse_args()
    args.emit_bin = args.emit_bin or args.loom_bin
    work = args.work or tempfile.mkdtemp(prefix="predict-vs-measure-")
    os.makedirs(work, exist_ok=True)
    plans = PLANS[:2] if args.quick else PLANS
    steps = 3 if args.quick else args.steps
    measured_file = os.path.join(work, "measured.json")

    if args.phase in ("all", "measure"):
        tokens = os.path.join(work, "tokens.bin")
        run([f"{args.emit_bin}/loom-data", "encode", "--input",
             os.path.join(ROOT, "test/Inputs/data/coriolanus.txt"),
             "--output", tokens])
        measured = {}
        for index, (model, devices, mesh) in enumerate(plans):
            model_file = os.path.join(work, f"{model}.mlir")
            if not os.path.exists(model_file):
                run([f"{args.emit_bin}/loom-model", "gpt2", *MODELS[model],
                     "-o", model_file])
            median, times, plan = measure(args, work, tokens, index, model,
                                          devices, mesh, steps)
            measured[str(index)] = {"median_s": median, "times_s": times,
                                    "strategies": strategies(plan)}
            print(f"measured plan {index} ({model}, {devices}, {mesh}): "
                  f"{median * 1e3:.2f} ms", file=sys.stderr, flush=True)
        with open(measured_file, "w") as f:
            json.dump(measured, f)
    if args.phase == "measure":
        return
    with open(measured_file) as f:
        measured = json.load(f)

    print("| plan | devices | mesh | predicted step | measured step (median) | "
          "measured / predicted | same strategies |")
    print("|---|---|---|---|---|---|---|")
    for index, (model, devices, mesh) in enumerate(plans):
        plan = predict(args, work, index, model, devices, mesh)
        predicted = plan["predicted"]["step_time_s"]
        result = measured[str(index)]
        same = "yes" if strategies(plan) == result["strategies"] else "no"
        print(f"| {model} | {devices} | {mesh or '-'} | "
              f"{predicted * 1e3:.2f} ms | {result['median_s'] * 1e3:.2f} ms | "
              f"{result['median_s'] / predicted:.2f} | {same} |", flush=True)


if __name__ == "__main__":
    main()
