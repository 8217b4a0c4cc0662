#!/usr/bin/env bash
# Installs the Debian packages burn-cpp needs that are missing (Debian 12).
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config   # build
  libfmt-dev                         # formatting
  libdnnl-dev                        # oneDNN: matmul, convolution, pooling on flex
  libhwy-dev                         # Highway: run-time-dispatched SIMD for flex elementwise math
  zlib1g-dev                         # gzip-compressed datasets (IDX files)
  nlohmann-json3-dev                 # safetensors headers
  libtorch-dev                       # LibTorch: Device::libtorch() (preset `full`, which CI tests with)
  libvulkan-dev glslc                # Vulkan backend: loader and headers, GLSL -> SPIR-V at build time
  mesa-vulkan-drivers                # lavapipe: the CPU Vulkan driver the Vulkan tests run on
  dataset-fashion-mnist              # the main job's data (/usr/share/datasets/fashion-mnist)
  libgtest-dev libgmock-dev          # tests
  libbenchmark-dev                   # bench/
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "installing: ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "error: run as root or install sudo to install ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
