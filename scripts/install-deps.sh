#!/usr/bin/env bash
# Installs the Debian 12 packages burn-cpp needs that are missing, from a
# minimal root on (no compiler, no git, no Python needed beforehand).
#
#   bash scripts/install-deps.sh            what the README's two commands need
#   bash scripts/install-deps.sh fuzz       plus clang for scripts/fuzz.sh
#   bash scripts/install-deps.sh lint       plus clang-format and clang-tidy for scripts/lint.sh
#                                           and scripts/tidy.sh
#   bash scripts/install-deps.sh ci         plus ccache, the compiler cache .ci/run keeps between runs
#   bash scripts/install-deps.sh --list [fuzz] [lint] [ci]
#                                           print the packages (one line) and exit,
#                                           for a user without root to hand to an admin
#
# Runs apt-get as root, through sudo for a normal user, and does nothing (and
# needs no privileges) when everything is already installed.
set -euo pipefail

# Installed without recommends, so everything a build step needs is listed,
# including what Debian's CMake configs of our dependencies look for.
packages=(
  cmake ninja-build g++ pkg-config   # build
  libfmt-dev                         # formatting
  libdnnl-dev                        # oneDNN: matmul, convolution, pooling on flex
  ocl-icd-opencl-dev                 # OpenCL headers and loader: libdnnl-dev's CMake config requires them
  libhwy-dev                         # Highway: run-time-dispatched SIMD for flex elementwise math
  zlib1g-dev                         # gzip-compressed datasets (IDX files)
  nlohmann-json3-dev                 # safetensors headers
  libre2-dev                         # key-remap rules on load: linear-time regular expressions
  libzip-dev                         # torch.save archives (.pt/.pth): load_pytorch, load_module
  libboost-dev                       # Boost.Beast/Asio (header-only): the remote backend's websocket transport
  libssl-dev                         # OpenSSL: TLS for the remote backend's connections
  libgloo-dev                        # Gloo: the collectives of data-parallel training (burn::collective)
  libonnx-dev libprotobuf-dev        # ONNX's schema, checker and shape inference (burn::onnx export and import)
  libtorch-dev                       # LibTorch: Device::libtorch() (preset `full`, which CI tests with)
  libvulkan-dev glslc                # Vulkan backend: loader and headers, GLSL -> SPIR-V at build time
  mesa-vulkan-drivers                # lavapipe: the CPU Vulkan driver the Vulkan tests run on
  dataset-fashion-mnist              # the main job's data (/usr/share/datasets/fashion-mnist)
  libgtest-dev libgmock-dev          # tests
  python3-venv ca-certificates       # tests/onnx/onnxruntime_check.sh: ONNX Runtime from PyPI in a venv
  libbenchmark-dev                   # bench/
  python3-dev                        # bench/: torch.compile (Inductor) builds its kernels against Python's headers
  python3-torch python3-torchvision  # tests and examples: PyTorch's own modules make the weights and outputs burn must match
)
fuzz_packages=(
  clang libclang-rt-14-dev           # libFuzzer and the sanitizer runtimes (scripts/fuzz.sh)
)
lint_packages=(
  clang-format                       # the formatting check (scripts/lint.sh; version 14 in Debian 12)
  clang-tidy                         # static checks (scripts/tidy.sh; version 14 in Debian 12)
)
ci_packages=(
  ccache                             # .ci/run's compiler cache, shared with the fresh root (docs/ci.md)
)

list_only=0
for arg in "$@"; do
  case "$arg" in
    fuzz) packages+=("${fuzz_packages[@]}") ;;
    lint) packages+=("${lint_packages[@]}") ;;
    ci) packages+=("${ci_packages[@]}") ;;
    --list) list_only=1 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps.sh: unknown argument '$arg' (expected: fuzz, lint, ci, --list, --help)" >&2; exit 2 ;;
  esac
done
if ((list_only)); then
  echo "${packages[*]}"
  exit 0
fi

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  echo "install-deps.sh: this script installs Debian packages (Debian 12); on another system install the" >&2
  echo "equivalents of: ${packages[*]}" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null; then
    echo "install-deps.sh: these Debian packages are missing: ${missing[*]}" >&2
    echo "Installing them needs root: run 'bash scripts/install-deps.sh' as root, or ask an administrator to run" >&2
    echo "  apt-get install --no-install-recommends ${missing[*]}" >&2
    echo "and then run this command again (it installs nothing when everything is there)." >&2
    exit 1
  fi
  sudo_cmd=(sudo DEBIAN_FRONTEND=noninteractive)
fi

echo "installing ${#missing[@]} Debian packages: ${missing[*]}"
# apt's and dpkg's chatter (hundreds of lines) goes to a log shown only when
# something fails.
log=$(mktemp "${TMPDIR:-/tmp}/burn-install-deps.XXXXXX.log")
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
started=$SECONDS
if ! "${sudo_cmd[@]}" apt-get update >"$log" 2>&1 ||
   ! "${sudo_cmd[@]}" apt-get install -y --no-install-recommends -o Dpkg::Use-Pty=0 "${missing[@]}" >>"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "install-deps.sh: apt-get failed (its last lines are above); the packages needed are: ${missing[*]}" >&2
  exit 1
fi
echo "installed in $((SECONDS - started)) s"
