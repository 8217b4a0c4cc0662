#!/usr/bin/env bash
# GPU checks of the GPU backends:
#
#   bash scripts/gpu-check.sh [options]                     the Vulkan backend (below)
#   bash scripts/gpu-check.sh --backend cuda pack|run ...   the CUDA backend (scripts/gpu-check-cuda.sh)
#
# GPU check of the Vulkan backend, for a Linux machine with a GPU and
# its Vulkan driver (e.g. an NVIDIA H200): builds a Release build with
# BURN_VULKAN=ON (only the two test binaries it runs), runs the Vulkan
# conformance suite on the GPU (the conformance and vulkan suites restricted
# to vulkan devices), then prints an f32 matmul, conv2d and element-wise
# benchmark next to the GPU's peak FLOP/s and memory bandwidth, twice: with
# the vectorised matmul/conv loads and with scalar loads only. Meant to finish
# within ten minutes on a 16-core machine from a clean build directory (the
# build dominates; the script warns when it took longer).
#
#   bash scripts/gpu-check.sh [options]
#     --build-dir DIR     build directory (default build/gpu-check; an existing
#                         one keeps its configuration, with BURN_VULKAN=ON added)
#     --jobs N            build jobs (default: every core)
#     --allow-cpu         accept a CPU adapter (lavapipe): for testing this script
#     --small             small benchmark sizes (matmul 512, 8 x 256^3, conv 4x32x32^2,
#                         4M elements)
#     --peak-gbs X        peak memory bandwidth in GB/s      } instead of the
#     --peak-tflops X     peak f32 (non-tensor) TFLOP/s      } table below
#     --skip-tests        benchmark only
#     --cmake-arg ARG     extra argument for a fresh configure (repeatable)
#
# Exit status: non-zero when the build, an adapter check or a test fails. The
# benchmark never fails on speed; it reports what it measured.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --backend ]]; then
  case "${2:-}" in
    cuda) shift 2; exec bash scripts/gpu-check-cuda.sh "$@" ;;
    vulkan) shift 2 ;;
    *) echo "gpu-check: --backend takes vulkan or cuda" >&2; exit 2 ;;
  esac
fi
started=$(date +%s)

# Nominal peaks by adapter name fragment (first match wins; case-insensitive):
# HBM bandwidth in GB/s, f32 FLOP/s without tensor cores in TFLOP/s.
peak_table="H200=4800,67;H100 PCIe=2000,51;H100=3350,67;A100-SXM4-80GB=2039,19.5;A100=1555,19.5;L40S=864,91.6;RTX 4090=1008,82.6"

build_dir=build/gpu-check
jobs=$(nproc)
allow_cpu=0
small=0
skip_tests=0
cmake_args=()
while (($#)); do
  case "$1" in
    --build-dir) build_dir=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --allow-cpu) allow_cpu=1 ;;
    --small) small=1 ;;
    --peak-gbs) export BURN_BENCH_PEAK_GBS=$2; shift ;;
    --peak-tflops) export BURN_BENCH_PEAK_TFLOPS=$2; shift ;;
    --skip-tests) skip_tests=1 ;;
    --cmake-arg) cmake_args+=("$2"); shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

step() { printf '\n== %s (%ds)\n' "$1" $(($(date +%s) - started)); }
die() { echo "gpu-check: error: $*" >&2; exit 1; }

step "tools"
for tool in cmake ninja glslc; do
  command -v "$tool" >/dev/null || die "$tool is not installed (Debian: apt-get install cmake ninja-build glslc)"
done
[[ -e /usr/include/vulkan/vulkan.h || -n "${VULKAN_SDK:-}" ]] ||
  die "the Vulkan headers are missing (Debian: apt-get install libvulkan-dev, or set VULKAN_SDK)"

step "configure $build_dir"
if [[ -f $build_dir/CMakeCache.txt ]]; then
  cmake -B "$build_dir" -DBURN_VULKAN=ON >/dev/null
else
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBURN_VULKAN=ON -DBURN_BUILD_BENCH=OFF \
    -DBURN_BUILD_EXAMPLES=OFF "${cmake_args[@]}" >/dev/null
fi
grep -E '^CMAKE_BUILD_TYPE' "$build_dir/CMakeCache.txt" || true

step "build (ninja -j$jobs)"
ninja -C "$build_dir" -j "$jobs" burn_vulkan_tests burn_conformance_tests | tail -n 2
tests=$build_dir/tests

export BURN_BENCH_ALLOW_CPU=$allow_cpu
export BURN_BENCH_PEAK_TABLE=$peak_table
step "adapter"
# Fails (with the list of adapters) unless vulkan:0 is a GPU, or --allow-cpu.
"$tests/burn_vulkan_tests" --gtest_also_run_disabled_tests --gtest_filter='GpuBench.DISABLED_Adapter*' \
  --gtest_brief=1 | grep -v '^Running main' || die "no usable Vulkan GPU adapter (see above)"

if ((!skip_tests)); then
  step "conformance suite on vulkan:0"
  # Parametrised cases are named <device>_<dtype>: keep the vulkan ones.
  "$tests/burn_conformance_tests" --gtest_filter='*vulkan*:*Vulkan*' --gtest_brief=1 | grep -v '^Running main'
  step "vulkan suite"
  "$tests/burn_vulkan_tests" --gtest_brief=1 | grep -v '^Running main'
fi

step "benchmark"
if ((small)); then
  export BURN_BENCH_MATMUL=512 BURN_BENCH_BATCHED=8,256 BURN_BENCH_CONV=4,32,32 BURN_BENCH_ELEMENTS=$((4 << 20))
  export BURN_BENCH_REPS=3
fi
bench() {
  "$tests/burn_vulkan_tests" --gtest_also_run_disabled_tests --gtest_filter='GpuBench.DISABLED_MatmulAndElementwise*' \
    --gtest_brief=1 | grep -v '^Running main'
}
bench
step "benchmark again with scalar loads (what the vectorised matmul/conv loads bring)"
BURN_VULKAN_SCALAR_LOADS=1 bench

elapsed=$(($(date +%s) - started))
step "done in ${elapsed}s"
((elapsed <= 600)) || echo "gpu-check: warning: took more than the ten minutes it should" >&2
