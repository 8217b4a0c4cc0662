#!/usr/bin/env bash
# The README's second command: install what is missing, build everything and
# run every test (ctest prints the summary).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release
cmake --build --preset release
ctest --preset release "$@"
