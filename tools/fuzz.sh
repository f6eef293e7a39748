#!/usr/bin/env bash
#===- tools/fuzz.sh - Run every libFuzzer target for a while -----------------===#
#
#   tools/fuzz.sh SECONDS [TARGET...]
#
# Builds the fuzz targets in build-fuzz/ (configured with
# -DLOOM_ENABLE_FUZZERS=ON, which instruments Loom's code for coverage and
# AddressSanitizer; CI never builds it), then runs each target for SECONDS
# on its seed corpus (test/Fuzz/corpus/<name>/, the graph JSON target on
# test/Target/GraphJSON/Inputs, the ONNX target on test/Target/ONNX/Inputs,
# the IR parser target on the dialect and pass tests' .mlir files, split at
# their `// -----` markers)
# grown by earlier runs and prints one line per target:
# executions, executions per second, coverage (edges and features: libFuzzer's
# cov and ft), corpus size and findings. Crash inputs are
# kept in build-fuzz/fuzz-findings/<name>/. Targets (default: all):
#   graph-json ir-parser onnx parallel-config strategy-file cluster-spec
#   safetensors token-file manifest
# graph-json, ir-parser and onnx need every dialect instrumented (a long
# first build; onnx is left out of the default list where libonnx-dev is
# missing); the others build from the analysis and runtime libraries alone.
# Exits non-zero when a target found something. docs/Testing.md
# ("Fuzzing") records runs.
#
#===----------------------------------------------------------------------===#
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-}
if [[ ! $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: tools/fuzz.sh SECONDS [TARGET...]" >&2
  exit 2
fi
shift
targets=("$@")
if [[ ${#targets[@]} == 0 ]]; then
  targets=(graph-json ir-parser parallel-config strategy-file cluster-spec
    safetensors token-file manifest)
  [[ -f /usr/include/onnx/onnx_pb.h ]] && targets=(onnx "${targets[@]}")
fi
build=${LOOM_FUZZ_BUILD_DIR:-$root/build-fuzz}

if [[ ! -f $build/build.ninja ]]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DLOOM_ENABLE_FUZZERS=ON -DLOOM_ENABLE_CUDA=OFF \
    -DLOOM_ENABLE_CUDA_EMULATOR=OFF -DLOOM_ENABLE_PYTHON=OFF > /dev/null ||
    exit 1
fi
for name in "${targets[@]}"; do
  ninja -C "$build" "loom-$name-fuzzer" > "$build/fuzz-build-$name.log" 2>&1 || {
    echo "fuzz: error: building loom-$name-fuzzer failed (see $build/fuzz-build-$name.log)" >&2
    exit 1
  }
done

# Loom's instrumented code and Debian's uninstrumented libMLIR share LLVM's
# allocators; docs/Testing.md ("Fuzzing") explains these options.
export ASAN_OPTIONS=allow_user_poisoning=0:detect_container_overflow=0:detect_leaks=0

printf '%-16s %12s %7s %8s %8s %7s  %s\n' target executions exec/s edges features \
  corpus findings
found=0
for name in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$name findings=$build/fuzz-findings/$name
  mkdir -p "$corpus" "$findings"
  if [[ $name == graph-json ]]; then
    # The good and bad graph files.
    find "$root/test/Target/GraphJSON/Inputs" -name '*.json' -exec cp {} "$corpus"/ \;
  elif [[ $name == ir-parser ]]; then
    # Each split of the dialect and pass tests' inputs, one module a file.
    for file in "$root"/test/Dialect/*/*.mlir "$root"/test/Transforms/*.mlir \
      "$root"/test/Target/GraphJSON/Inputs/every-op.mlir; do
      awk -v out="$corpus/$(basename "$(dirname "$file")")-$(basename "$file" .mlir)" \
        '/^\/\/ -----/ { n++; next } { print > (out "-" n+0 ".mlir") }' "$file"
    done
  elif [[ $name == onnx ]]; then
    # The good and bad ONNX files of the lit tests.
    find "$root/test/Target/ONNX/Inputs" -name '*.onnx' -exec cp {} "$corpus"/ \;
  else
    cp "$root/test/Fuzz/corpus/$name"/* "$corpus"/
  fi
  extra=()
  [[ $name == graph-json ]] && extra=(-dict="$root/test/Fuzz/graph-json.dict")
  log=$build/fuzz-$name.log
  "$build/bin/loom-$name-fuzzer" "$corpus" "${extra[@]}" \
    -max_total_time="$seconds" -max_len=65536 -timeout=20 -rss_limit_mb=4096 \
    -artifact_prefix="$findings/" -print_final_stats=1 > "$log" 2>&1
  status=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$')
  edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  features=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  units=$(find "$corpus" -type f | wc -l)
  crashes=$(find "$findings" -type f | wc -l)
  verdict=none
  if [[ $status != 0 || $crashes != 0 ]]; then
    verdict="$crashes input(s) in $findings (log: $log)"
    found=1
  fi
  printf '%-16s %12s %7s %8s %8s %7s  %s\n' "$name" "${execs:-?}" "${rate:-?}" \
    "${edges:-?}" "${features:-?}" "$units" "$verdict"
done
exit $found
