#!/usr/bin/env bash
# PyTorch → burn at test time: exports the fixture models and five of
# torchvision's (ResNet-18, MobileNetV3-small, SqueezeNet 1.1, ShuffleNetV2,
# RegNetY-400MF) with the PyTorch installed on this machine (Debian's python3-torch
# and python3-torchvision, which scripts/install-deps.sh installs), then
# imports each into burn on every device and compares with PyTorch's outputs
# (the OnnxTorchFixtures.ModelsThePyTorchHereExportsNowMatchIt test).
#
#   torch_live_check.sh path/to/burn_onnx_tests OUT_DIR
#
# The interpreter is $BURN_TEST_PYTHON, else Debian's /usr/bin/python3 (as the
# record tests'). Exits 4 (ctest: skipped), saying why, where it has no torch
# or torchvision.
set -uo pipefail

tests=${1:?usage: torch_live_check.sh path/to/burn_onnx_tests OUT_DIR}
out=${2:?usage: torch_live_check.sh path/to/burn_onnx_tests OUT_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${BURN_TEST_PYTHON:-/usr/bin/python3}

if ! "$python" -c 'import torch, torchvision' 2>/dev/null; then
  echo "torch_live_check: skipped: $python cannot import torch and torchvision" \
    "(Debian: apt install python3-torch python3-torchvision, as scripts/install-deps.sh does)"
  exit 4
fi

rm -rf "$out"
mkdir -p "$out"
if ! "$python" "$here/fixtures/make_torch_fixtures.py" "$out" --torchvision >"$out/export.log" 2>&1; then
  tail -n 20 "$out/export.log"
  echo "torch_live_check: PyTorch's export failed (its log is above)"
  exit 1
fi
grep -E '^(torch|[a-z_0-9]+:)' "$out/export.log"
BURN_ONNX_LIVE_FIXTURES=$out "$tests" --gtest_filter='OnnxTorchFixtures.ModelsThePyTorchHereExportsNowMatchIt'
