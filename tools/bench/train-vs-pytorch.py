#!/usr/bin/env python3
"""Times a GPT-2 training step of Loom's emitted program against PyTorch.

    /usr/bin/python3 tools/bench/train-vs-pytorch.py [--preset 124m]
        [--batch 4] [--seq 256] [--steps 4] [--threads 1,2]
        [--device cpu|cuda] [--precision f32|bf16-mixed] [--torch-sdpa]
        [--work DIR] [--loom-bin build/bin] [--build-only | --prebuilt]

Builds `loom-model gpt2 --preset P --batch B --seq S`, compiles it for one
device with `loomc --emit host` (or `--emit cuda` with --device cuda), and
trains it `--steps` steps on the text shipped in the repository; then trains
the same architecture written in plain PyTorch (nanoGPT's modules, AdamW,
the same batch shape and byte-level tokens) for as many steps. Both run in
this one invocation, one after the other for each thread count, pinned to
the same CPUs (`taskset`) with that many BLAS/OpenMP threads, so their
ratio is measured under the same machine load.

Reported per engine: the median step time over steps 2..N (step 1 pays for
first-touch allocations in both), tokens/s, achieved model TFLOP/s, and MFU:
model FLOPs per second over the peak. The model FLOPs of a step are
3 x forward, forward = per token 24·L·H² (the layers' matmuls) + 4·L·S·H
(scores and weighted values, no causal discount) + 2·V·H (the tied LM head),
the PaLM convention. The peak on a CPU is the best f32 GEMM rate PyTorch
reaches here with the same threads (2048³, best of 5); on a GPU it is the
device's dense f32 peak given with --peak-tflops (Loom runs f32 without
TF32, so that is the honest peak).

With --precision bf16-mixed both engines train in bf16 mixed precision
with f32 master weights: Loom's program is `loomc --precision bf16-mixed`
(docs/MixedPrecision.md), PyTorch's step runs the forward and the loss
under `torch.autocast(device_type=DEVICE, dtype=torch.bfloat16)` with f32
parameters, the backward outside it, and AdamW in f32, as autocast is meant
to be used. The peak is then a bf16 one: on a CPU the best bf16 GEMM rate
PyTorch reaches here, on a GPU the device's dense bf16 peak given with
--peak-tflops (989 TFLOP/s on an H100/H200 SXM). --torch-sdpa makes
PyTorch's attention `F.scaled_dot_product_attention(is_causal=True)`
(FlashAttention on a GPU, as nanoGPT uses it; PyTorch 2.0 and later)
instead of the written-out softmax(QK^T)V of the default.

On a GPU machine without Loom's toolchain (tools/gpu-check.sh), the Loom
side is made elsewhere: `--build-only` writes the graph, the tokens and the
program into --work and stops; `--prebuilt` then runs no Loom tool and uses
what --work holds.

Prints a Markdown table (docs/Performance.md records one). Needs PyTorch
(Debian's python3-torch for the CPU).
"""

import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--preset", default="124m")
parser.add_argument("--batch", type=int, default=4)
parser.add_argument("--seq", type=int, default=256)
parser.add_argument("--steps", type=int, default=4)
parser.add_argument("--threads", default="1,2",
                    help="comma-separated CPU thread counts to compare")
parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
parser.add_argument("--precision", choices=["f32", "bf16-mixed"],
                    default="f32")
parser.add_argument("--peak-tflops", type=float, default=None,
                    help="the device's dense peak in the run's precision "
                         "(f32, or bf16 for bf16-mixed; with --device cuda)")
parser.add_argument("--torch-sdpa", action="store_true",
                    help="PyTorch's attention through "
                         "F.scaled_dot_product_attention")
parser.add_argument("--work", default="/tmp/loom-train-vs-pytorch")
parser.add_argument("--loom-bin", default=str(ROOT / "build" / "bin"))
stage = parser.add_mutually_exclusive_group()
stage.add_argument("--build-only", action="store_true",
                   help="build Loom's program into --work and stop")
stage.add_argument("--prebuilt", action="store_true",
                   help="use the program, graph and tokens in --work; "
                        "run no Loom tool")
parser.add_argument("--worker", action="store_true",
                    help=argparse.SUPPRESS)  # internal: one PyTorch run
args = parser.parse_args()

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    if args.build_only:  # Loom's side alone needs no PyTorch
        torch = None
    else:
        sys.exit("train-vs-pytorch: error: PyTorch is not installed for "
                 f"{sys.executable} (Debian: apt-get install python3-torch)")

if (torch is not None and args.torch_sdpa and
        not hasattr(F, "scaled_dot_product_attention")):
    sys.exit("train-vs-pytorch: error: --torch-sdpa needs PyTorch 2.0 or "
             f"later (F.scaled_dot_product_attention); this is "
             f"{torch.__version__}")

work = pathlib.Path(args.work)
work.mkdir(parents=True, exist_ok=True)
tool = pathlib.Path(args.loom_bin)


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit(f"train-vs-pytorch: error: {' '.join(map(str, cmd))} "
                 f"failed:\n{result.stdout}{result.stderr}")
    return result.stdout


# --- the model and its FLOPs ----------------------------------------------
model_mlir = work / f"gpt-{args.preset}-b{args.batch}-s{args.seq}.mlir"
# The worker reads the graph its parent wrote.
if not args.worker and not args.prebuilt:
    run([tool / "loom-model", "gpt2", "--preset", args.preset,
         "--batch", str(args.batch), "--seq", str(args.seq), "-o", model_mlir])
if not model_mlir.exists():
    sys.exit(f"train-vs-pytorch: error: {model_mlir} is missing (make it with "
             "--build-only)")
text = model_mlir.read_text()


wte = re.search(r'tensor<(\d+)x(\d+)xf32> \{loom\.param = #loom\.param<'
                r'"transformer\.wte\.weight"', text)
attention = re.search(r"loom\.attention [^:]*: \(tensor<\d+x(\d+)x", text)
if not wte or not attention:
    sys.exit(f"train-vs-pytorch: error: {model_mlir} is not a loom-model "
             "gpt2 graph (no transformer.wte.weight or loom.attention)")
vocab, hidden = int(wte.group(1)), int(wte.group(2))
heads = int(attention.group(1))
layers = len(set(re.findall(r'"transformer\.h\.(\d+)\.', text)))
tokens = args.batch * args.seq
forward = tokens * (24 * layers * hidden ** 2 +
                    4 * layers * args.seq * hidden + 2 * vocab * hidden)
model_flops = 3 * forward

# --- Loom ---------------------------------------------------------------------
data = work / "tokens.bin"
if not args.worker and not args.prebuilt:
    run([tool / "loom-data", "encode", "--input",
         ROOT / "test" / "Inputs" / "data" / "coriolanus.txt", "--output",
         data])
# Built once per configuration; remove --work to rebuild after changing Loom.
# f32 programs keep the names they always had.
suffix = "" if args.precision == "f32" else f"-{args.precision}"
program = (work /
           f"loom-{args.device}-{args.preset}-b{args.batch}-s{args.seq}{suffix}")
env = dict(os.environ)
if args.prebuilt and not (program / "launch.sh").exists():
    sys.exit(f"train-vs-pytorch: error: {program} holds no program (make it "
             "with --build-only)")
if not args.worker and not (program / "launch.sh").exists():
    print(f"building Loom's program ({args.device}) ...", file=sys.stderr)
    run([tool / "loomc", model_mlir, "--devices", "1", "--emit",
         "host" if args.device == "cpu" else "cuda", "--emit-dtypes", "f32",
         "--precision", args.precision, "-o", program], env=env)
if args.build_only:
    sys.exit(0)


def pinned(threads):
    """Runs a command on the first `threads` CPUs with that many BLAS/OpenMP
    threads, so that both engines get the same cores, no more."""
    prefix = []
    if args.device == "cpu":
        prefix = ["taskset", "-c", f"0-{threads - 1}"]
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    return prefix, env


def loom_steps(threads):
    prefix, env = pinned(threads)
    log = run(prefix + [program / "launch.sh", "--data", data, "--steps",
                        str(args.steps), "--log-every", "1"], env=env)
    return [float(m) / 1e3 for m in re.findall(r"\| ([0-9.]+) ms \|", log)]


def torch_worker(threads):
    """This script again, in a process of its own pinned like Loom's, which
    runs the PyTorch steps and the GEMM peak and prints them as JSON."""
    prefix, env = pinned(threads)
    out = run(prefix + [sys.executable, __file__, "--worker",
                        "--preset", args.preset, "--batch", str(args.batch),
                        "--seq", str(args.seq), "--steps", str(args.steps),
                        "--threads", str(threads), "--device", args.device,
                        "--precision", args.precision,
                        *(["--torch-sdpa"] if args.torch_sdpa else []),
                        "--work", str(work), "--loom-bin", str(tool)], env=env)
    return json.loads(out.strip().splitlines()[-1])


# --- PyTorch --------------------------------------------------------------
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = torch.nn.LayerNorm(hidden)
        self.c_attn = torch.nn.Linear(hidden, 3 * hidden)
        self.c_proj = torch.nn.Linear(hidden, hidden)
        self.ln_2 = torch.nn.LayerNorm(hidden)
        self.c_fc = torch.nn.Linear(hidden, 4 * hidden)
        self.mlp_proj = torch.nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(hidden, 2)
        q, k, v = (t.view(b, s, heads, hidden // heads).transpose(1, 2)
                   for t in (q, k, v))
        if args.torch_sdpa:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) / (hidden // heads) ** 0.5
            causal = torch.ones(s, s, dtype=torch.bool,
                                device=x.device).triu(1)
            a = scores.masked_fill(causal, float("-inf")).softmax(-1) @ v
        x = x + self.c_proj(a.transpose(1, 2).reshape(b, s, hidden))
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(h)


class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, hidden)
        self.wpe = torch.nn.Embedding(args.seq, hidden)
        self.h = torch.nn.ModuleList(Block() for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(hidden)

    def forward(self, ids, labels):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1],
                                                  device=ids.device))
        for block in self.h:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.T
        return F.cross_entropy(logits.view(-1, vocab), labels.view(-1))


def torch_steps(threads):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    device = torch.device(args.device)
    model = GPT().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4,
                                  weight_decay=0.1)
    stream = torch.tensor(list(data.read_bytes()[1024:]), dtype=torch.int64)
    # A batch longer than the text repeats it, as Loom's loader wraps around.
    stream = stream.repeat(tokens // len(stream) + 2)
    times = []
    for step in range(args.steps):
        start = (step * tokens) % (len(stream) - tokens - 1)
        ids = stream[start:start + tokens].view(args.batch, args.seq)
        labels = stream[start + 1:start + tokens + 1].view(args.batch, args.seq)
        ids, labels = ids.to(device), labels.to(device)
        if args.device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        # bf16-mixed: the forward and the loss under autocast (f32
        # parameters, bf16 matmuls), the backward and AdamW outside it.
        with torch.autocast(device_type=args.device, dtype=torch.bfloat16,
                            enabled=args.precision == "bf16-mixed"):
            loss = model(ids, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if args.device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return times


def gemm_peak(threads):
    torch.set_num_threads(threads)
    a = torch.randn(2048, 2048,
                    dtype=torch.bfloat16 if args.precision == "bf16-mixed"
                    else torch.float32)
    a @ a  # warm-up: thread pool, caches
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t0)
    return 2 * 2048 ** 3 / best


# --- the table ------------------------------------------------------------
if args.worker:
    threads = int(args.threads)
    peak = gemm_peak(threads) if args.device == "cpu" else None
    print(json.dumps({"times": torch_steps(threads), "peak": peak}))
    sys.exit(0)

print(f"GPT-2 {args.preset}: {layers} layers, hidden {hidden}, {heads} "
      f"heads, vocabulary {vocab}; batch {args.batch} x seq {args.seq} = "
      f"{tokens} tokens; {model_flops / 1e12:.3f} TFLOP per step (model "
      f"FLOPs); {args.steps} steps, median of steps 2..{args.steps}; "
      f"device {args.device}; precision {args.precision}"
      f"{'; PyTorch attention: scaled_dot_product_attention' if args.torch_sdpa else ''}")
print()
print("| engine | threads (CPUs) | step time | tokens/s | TFLOP/s | peak "
      "TFLOP/s | MFU |")
print("| --- | --: | --: | --: | --: | --: | --: |")
thread_counts = [int(t) for t in args.threads.split(",")] \
    if args.device == "cpu" else [1]
for threads in thread_counts:
    reference = torch_worker(threads)
    if args.device == "cpu":
        peak = reference["peak"]
    else:
        peak = args.peak_tflops * 1e12 if args.peak_tflops else float("nan")
    torch_engine = f"PyTorch {torch.__version__}"
    if args.precision == "bf16-mixed":
        torch_engine += " (bf16 autocast)"
    for engine, times in (("Loom (emitted program)", loom_steps(threads)),
                          (torch_engine, reference["times"])):
        if len(times) != args.steps:
            sys.exit(f"train-vs-pytorch: error: {engine} logged "
                     f"{len(times)} steps, expected {args.steps}")
        t = statistics.median(times[1:])
        rate = model_flops / t
        print(f"| {engine} | {threads} | {t * 1e3:,.0f} ms | "
              f"{tokens / t:,.0f} | {rate / 1e12:.3f} | {peak / 1e12:.3f} | "
              f"{100 * rate / peak:.1f} % |", flush=True)
