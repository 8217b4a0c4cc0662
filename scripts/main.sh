#!/usr/bin/env bash
# The README's first command: install what is missing, build, run the main job
# on the default device (BURN_DEVICE=ndarray picks another).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target burn-demo burn-info
./build/release/examples/burn-demo "$@"
