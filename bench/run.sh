#!/usr/bin/env bash
# burn (flex, and cpu where built) vs PyTorch on the CPU, one table. Usage:
#   bench/run.sh                 # build dir build/release (the Release preset)
#   BUILD_DIR=build-bench bench/run.sh
#   OUT_DIR=/tmp/x bench/run.sh  # keep the raw JSON somewhere else
#   FILTER='gelu|layer_norm_16m' bench/run.sh   # only rows matching this regex (both sides)
# Rows "<name>@cpu" of burn-flex-bench run on Device::cpu() (a build with
# BURN_CPU=ON) and land in the "ours cpu" column of the same row.
# Needs Google Benchmark (libbenchmark-dev) and, for PyTorch, python3-torch
# (installed with apt-get if missing and we are root).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-$root/build/release}
[[ $build = /* ]] || build=$root/$build
out=${OUT_DIR:-$build/bench-results}
filter=${FILTER:-}
python=/usr/bin/python3
mkdir -p "$out"

if ! "$python" -c 'import torch' 2>/dev/null; then
  if [[ $(id -u) -eq 0 ]]; then
    apt-get install -y python3-torch
  else
    echo "[run.sh] PyTorch is missing: apt-get install -y python3-torch" >&2
    exit 1
  fi
fi

if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBURN_BUILD_BENCH=ON -DBURN_CPU=ON
fi
cache_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
if [[ $cache_type != Release ]]; then
  echo "[run.sh] $build is a '$cache_type' build; benchmarks need Release (set BUILD_DIR)" >&2
  exit 1
fi
cmake -DBURN_BUILD_BENCH=ON "$build" >/dev/null
ninja -C "$build" -j "$(nproc)" burn-flex-bench

echo "[run.sh] burn (flex, cpu) ..." >&2
"$build/bench/burn-flex-bench" --benchmark_format=json --benchmark_out="$out/ours.json" \
  --benchmark_out_format=json --benchmark_report_aggregates_only=true --benchmark_filter="${filter:-.}" >/dev/null

echo "[run.sh] PyTorch as installed ..." >&2
"$python" "$here/torch_bench.py" --filter "$filter" >"$out/torch_installed.json"

echo "[run.sh] PyTorch tuned (OPENBLAS_CORETYPE=SkylakeX OMP_WAIT_POLICY=passive) ..." >&2
OPENBLAS_CORETYPE=SkylakeX OMP_WAIT_POLICY=passive "$python" "$here/torch_bench.py" --filter "$filter" \
  >"$out/torch_tuned.json"

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
"$python" "$here/report.py" "$out/ours.json" "$out/torch_installed.json" "$out/torch_tuned.json" | tee "$out/table.md"
