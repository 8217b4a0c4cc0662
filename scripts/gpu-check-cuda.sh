#!/usr/bin/env bash
# GPU check of the CUDA backend, in two halves, because the GPU machine
# (an NVIDIA H200 lent for minutes) has the CUDA toolkit but none of burn's
# Debian packages:
#
#   bash scripts/gpu-check.sh --backend cuda pack [options]     here
#       builds a Release configuration with BURN_CUDA=ON (flex, ndarray, cpu,
#       autodiff, collectives; no LibTorch, Vulkan or remote), then packs the
#       test suites, burn-info, burn-train and every shared library they load
#       except glibc's and the driver's into one archive (build/gpu-bundle/
#       cuda.tar.xz, about 17 MiB) and copies Fashion-MNIST (Debian's
#       dataset-fashion-mnist, 30 MiB) beside it: small enough to travel to
#       the GPU machine with the working tree (64 MiB in all).
#   bash scripts/gpu-check.sh --backend cuda run [options]      on the GPU machine
#       unpacks the archive, checks that cuda:0 is a GPU, and runs the CUDA
#       suite (device tests, the NVRTC compile of every kernel, the fusion
#       fuzz on cuda:0), the conformance, autodiff, nn and modules suites
#       restricted to their cuda cases, each compared with the CPU backends
#       in the same process, NCCL on one rank and the traced steps of the
#       trace suite against eager ones, side by side; then one
#       Fashion-MNIST epoch of burn-train
#       on cuda:0, and last the benchmark: burn-cuda-bench next to PyTorch on
#       the same GPU (bench/cuda_compare.py). Meant to finish within ten
#       minutes on an H200.
#
# Options:
#   --build-dir DIR   pack: build directory (default build/gpu-check-cuda)
#   --jobs N          pack: build jobs (default: every core)
#   --bundle FILE     the archive (default build/gpu-bundle/cuda.tar.xz)
#   --allow-no-gpu    run: go on without a GPU (the cuda cases then skip or are
#                     absent): for testing this script on a machine without one
#   --small           run: the benchmark at small sizes
#   --skip-bench      run: no benchmark
#   --skip-train      run: no Fashion-MNIST epoch
#   --suite-limit S   run: seconds each suite may take (default 300)
#
# Exit status: non-zero when the build, the GPU check or a suite fails.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

mode=${1:-}
[[ $mode == pack || $mode == run ]] || {
  echo "gpu-check (cuda): say 'pack' (here) or 'run' (on the GPU machine); see --help" >&2
  [[ $mode == -h || $mode == --help ]] && awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 2
}
shift
build_dir=build/gpu-check-cuda
jobs=$(nproc)
bundle=build/gpu-bundle/cuda.tar.xz
allow_no_gpu=0
small=0
skip_bench=0
skip_train=0
suite_limit=300
while (($#)); do
  case "$1" in
    --build-dir) build_dir=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --bundle) bundle=$2; shift ;;
    --allow-no-gpu) allow_no_gpu=1 ;;
    --small) small=1 ;;
    --skip-bench) skip_bench=1 ;;
    --skip-train) skip_train=1 ;;
    --suite-limit) suite_limit=$2; shift ;;
    *) echo "gpu-check (cuda): unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

step() { printf '\n== %s (%ds)\n' "$1" $(($(date +%s) - started)); }
die() { echo "gpu-check (cuda): error: $*" >&2; exit 1; }

# The suites the run half runs (all of the CUDA suite but its CPU emulation,
# the cuda cases of the others, the small trace suite whole).
suites=(burn_cuda_tests burn_conformance_tests burn_autodiff_tests burn_nn_tests burn_modules_tests burn_collective_tests
  burn_capture_tests)
# The training data travels beside the archive: it is compressed already.
dataset=$(dirname "$bundle")/fashion-mnist
# One epoch of the main job must reach this test accuracy (the CPU devices
# reach 0.89 after one epoch with the defaults: Device::cpu(), seed 42).
min_epoch_accuracy=0.80

if [[ $mode == pack ]]; then
  for tool in cmake ninja xz ldd strip; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
  fashion=/usr/share/datasets/fashion-mnist
  [[ -f $fashion/train-images-idx3-ubyte.gz ]] ||
    die "Fashion-MNIST is not in $fashion: apt-get install dataset-fashion-mnist (scripts/install-deps.sh)"
  step "configure $build_dir"
  mkdir -p "$build_dir"
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBURN_CUDA=ON -DBURN_LIBTORCH=OFF \
    -DBURN_VULKAN=OFF -DBURN_WGPU=OFF -DBURN_REMOTE=OFF -DBURN_COLLECTIVE=ON -DBURN_BUILD_BENCH=ON \
    -DBURN_BUILD_EXAMPLES=ON >"$build_dir/configure.log" 2>&1 ||
    { tail -20 "$build_dir/configure.log" >&2; die "configuring failed (the CUDA toolkit's headers are needed)"; }
  grep -q 'burn: CUDA backend' "$build_dir/configure.log" ||
    die "the CUDA backend is not in $build_dir (see $build_dir/configure.log)"

  step "build (ninja -j$jobs)"
  ninja -C "$build_dir" -j "$jobs" "${suites[@]}" burn-info burn-cuda-bench burn-train | tail -n 1

  step "pack $bundle"
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/cuda-check/bin" "$stage/cuda-check/lib"
  binaries=("$build_dir/tools/burn-info" "$build_dir/bench/burn-cuda-bench" "$build_dir/apps/burn-train/burn-train")
  for s in "${suites[@]}"; do binaries+=("$build_dir/tests/$s"); done
  cp "${binaries[@]}" "$stage/cuda-check/bin/"
  # Every library the binaries load but glibc's (the GPU machine has its
  # own, and mixing loaders breaks); the driver and NVRTC are not linked
  # (they are opened at run time from the GPU machine's installation).
  ldd "${binaries[@]}" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux-x86-64)\.so' |
    while read -r lib; do cp -L "$lib" "$stage/cuda-check/lib/"; done
  git rev-parse HEAD >"$stage/cuda-check/commit" 2>/dev/null || echo unknown >"$stage/cuda-check/commit"
  mkdir -p "$(dirname "$bundle")"
  # Every binary carries all of burn (linked statically): stripped, and
  # compressed as one stream with xz's largest dictionary, the copies cost
  # little (about 17 MiB in all, against 30 MiB in blocks).
  strip "$stage"/cuda-check/bin/*
  tar -C "$stage" -cf - cuda-check | xz -T1 -9 >"$bundle.part"
  mv "$bundle.part" "$bundle"
  rm -rf "$dataset"
  cp -r "$fashion" "$dataset"
  ls "$stage/cuda-check/lib" | tr '\n' ' ' | sed 's/^/libraries: /'
  echo
  echo "bundle: $bundle, $(($(stat -c %s "$bundle") / 1024 / 1024)) MiB, and $dataset"
  echo "on the GPU machine (carry $(dirname "$bundle")): bash scripts/gpu-check.sh --backend cuda run"
  step "done"
  exit 0
fi

# ---- run ------------------------------------------------------------------------
[[ -f $bundle ]] || die "no bundle at $bundle: make it with 'bash scripts/gpu-check.sh --backend cuda pack' and carry its folder"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step "unpack $bundle"
xz -dc "$bundle" | tar -C "$work" -xf -
bin=$work/cuda-check/bin
export LD_LIBRARY_PATH="$work/cuda-check/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "built from commit $(cat "$work/cuda-check/commit")"
# The driver and NVRTC come from the GPU machine's own installation; add
# their usual folders when the loader's cache does not know them.
if ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [[ -d $dir ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir"
  done
fi
# cuBLASLt and cuDNN (and NVRTC) also come with PyTorch's wheels
# (site-packages/nvidia/*/lib): the fallback where the system lacks them.
wheel_dirs=$(python3 -c 'import glob, os, nvidia; print("\n".join(d for r in nvidia.__path__ for d in glob.glob(os.path.join(r, "*", "lib"))))' 2>/dev/null || true)
for lib in libnvrtc.so libcublasLt.so libcudnn.so libnccl.so; do
  ldconfig -p 2>/dev/null | grep -q "$lib" && continue
  for dir in $wheel_dirs; do
    if compgen -G "$dir/$lib.*" >/dev/null; then
      export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir"
      break
    fi
  done
done
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  for dir in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu/nvidia; do
    [[ -d $dir ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir"
  done
fi
command -v nvidia-smi >/dev/null && nvidia-smi -L || true

step "devices"
"$bin/burn-info" | sed -n '/^Devices:/,$p'
if ! "$bin/burn-info" | grep -q '^  cuda:0 '; then
  ((allow_no_gpu)) || die "cuda:0 is not there (burn-info above says why); --allow-no-gpu to go on anyway"
  echo "no CUDA device: going on (--allow-no-gpu); the cuda cases skip or are absent"
fi

failed=0
# The suites run side by side (the GPU machine has cores to spare and each
# suite spends much of its time in NVRTC), each under a time limit so that a
# hang shows as a failure instead of eating the machine's minutes; their
# logs are printed one after another once all are done.
logs=$work/logs
mkdir -p "$logs"
start_suite() {
  local name=$1
  shift
  (
    status=0
    timeout "$suite_limit" "$bin/$name" --gtest_brief=1 "$@" >"$logs/$name.log" 2>&1 || status=$?
    echo "$status" >"$logs/$name.status"
  ) &
}
# The emulation tests run the kernels on the CPU: CI's work, not the GPU's.
# CudaFusion.* runs the fusion fuzz on cuda:0 against an unfused backend.
start_suite burn_cuda_tests --gtest_filter='-CudaKernelsOnTheCpu.*:CudaFusionOnTheCpu.*'
# Parametrised cases are named <device>_<dtype>: keep the cuda ones.
for s in burn_conformance_tests burn_autodiff_tests burn_nn_tests burn_modules_tests; do
  start_suite "$s" --gtest_filter='*cuda*:*Cuda*'
done
# NCCL with one rank on cuda:0 (two ranks need two GPUs).
start_suite burn_collective_tests --gtest_filter='Nccl.*'
# Traced steps against eager ones on every device, cuda:0 among them.
start_suite burn_capture_tests
step "suites started side by side (each within ${suite_limit}s)"
wait
for s in "${suites[@]}"; do
  step "$s"
  grep -v '^Running main' "$logs/$s.log" || true
  status=$(cat "$logs/$s.status")
  if ((status == 124)); then
    failed=1
    echo "gpu-check (cuda): $s did not finish within ${suite_limit}s"
  elif ((status != 0)); then
    failed=1
    echo "gpu-check (cuda): $s FAILED (status $status)"
  fi
done

if ((!skip_train)); then
  step "Fashion-MNIST: one epoch of burn-train on cuda:0"
  if [[ ! -f $dataset/train-images-idx3-ubyte.gz ]]; then
    failed=1
    echo "gpu-check (cuda): no Fashion-MNIST at $dataset (pack copies it there)"
  elif ! "$bin/burn-info" | grep -q '^  cuda:0 '; then
    echo "no CUDA device: the epoch is skipped (--allow-no-gpu)"
  else
    log=$work/train.log
    status=0
    timeout 300 "$bin/burn-train" --device cuda --epochs 1 --progress lines --data-dir "$dataset" \
      --summary-json "$work/train.json" --expect-loss-decrease 2>&1 | tee "$log" || status=$?
    accuracy=$(sed -n 's/^final test accuracy: //p' "$log")
    if ((status != 0)) || [[ -z $accuracy ]]; then
      failed=1
      echo "gpu-check (cuda): the epoch FAILED (status $status)"
    elif ! awk -v a="$accuracy" -v m="$min_epoch_accuracy" 'BEGIN { exit !(a >= m) }'; then
      failed=1
      echo "gpu-check (cuda): the epoch reached $accuracy, below $min_epoch_accuracy"
    fi
  fi
fi

if ((!skip_bench)); then
  step "benchmark: burn and PyTorch on the same GPU"
  status=0
  bench_args=(--burn "$bin/burn-cuda-bench")
  if ((small)); then bench_args+=(--small); fi
  python3 bench/cuda_compare.py "${bench_args[@]}" || status=$?
  if ((status == 2 && allow_no_gpu)); then
    echo "no CUDA device for one side: benchmark skipped (--allow-no-gpu)"
  elif ((status != 0)); then
    failed=1
    echo "gpu-check (cuda): the benchmark FAILED"
  fi
fi

elapsed=$(($(date +%s) - started))
step "done in ${elapsed}s"
((elapsed <= 600)) || echo "gpu-check (cuda): warning: took more than the ten minutes it should" >&2
exit "$failed"
