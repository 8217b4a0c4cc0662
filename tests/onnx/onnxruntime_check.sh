#!/usr/bin/env bash
# burn's ONNX exports in ONNX Runtime: writes the test models' exports with
# flex's outputs (the OnnxRuntimeCases test), then runs them, and the PyTorch
# fixtures, in ONNX Runtime from PyPI and compares (onnxruntime_check.py).
#
#   onnxruntime_check.sh path/to/burn_onnx_tests VENV_DIR
#
# The virtual environment (onnxruntime and numpy from PyPI) is made on the
# first run and reused. Exits 4 (ctest: skipped) when it cannot be made, for
# lack of python3-venv or of a connection to PyPI; the reason is printed.
set -uo pipefail

tests=${1:?usage: onnxruntime_check.sh path/to/burn_onnx_tests VENV_DIR}
venv=${2:?usage: onnxruntime_check.sh path/to/burn_onnx_tests VENV_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if ! "$venv/bin/python" -c 'import onnxruntime, numpy' 2>/dev/null; then
  rm -rf "$venv"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    echo "onnxruntime_check: skipped: python3 cannot make a virtual environment (Debian: apt install python3-venv)"
    exit 4
  fi
  if ! pip_log=$(timeout 600 "$venv/bin/pip" install --quiet --disable-pip-version-check onnxruntime numpy 2>&1); then
    rm -rf "$venv"
    echo "$pip_log" | tail -n 5
    echo "onnxruntime_check: skipped: onnxruntime could not be installed from PyPI (pip's last words are above:" \
      "no connection, a proxy's certificate this system does not trust, ...)"
    exit 4
  fi
fi

cases=$(mktemp -d)
trap 'rm -rf "$cases"' EXIT
BURN_ONNX_CASES_DIR=$cases "$tests" --gtest_filter='OnnxRuntimeCases.*' >"$cases.log" 2>&1 || {
  cat "$cases.log"
  echo "onnxruntime_check: writing the cases failed"
  exit 1
}
rm -f "$cases.log"
"$venv/bin/python" "$here/onnxruntime_check.py" "$cases" "$here/fixtures"
