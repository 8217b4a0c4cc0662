#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main
# job — burn-train, a CNN trained on Fashion-MNIST for 5 epochs on the default
# device, with a progress bar and a checkpoint per epoch. Arguments go to
# burn-train (`bash scripts/main.sh --help`, `--device ndarray`, `--resume`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target burn-train
# flex and cpu compute on OpenMP threads (oneDNN's pool). libgomp's default
# busy-waits up to 300,000 spins between parallel regions, which collapses
# when other processes compete for the cores (150 batches: 19-47 s against
# 5.5 s sleeping); sleeping at once (OMP_WAIT_POLICY=passive) wakes a thread
# per region and cost a quarter of the speed on an idle machine. A short spin
# keeps both: 300 batches idle took 3.5 s with GOMP_SPINCOUNT=1000, 3.3-3.5 s
# busy-waiting and 4.3-4.7 s passive; 150 batches against two busy processes
# took 5.1-5.2 s with it and 4.2-5.4 s passive. Your own OMP_WAIT_POLICY or
# GOMP_SPINCOUNT wins.
if [[ -z "${OMP_WAIT_POLICY:-}" && -z "${GOMP_SPINCOUNT:-}" ]]; then
  export GOMP_SPINCOUNT=1000
fi
exec ./build/release/apps/burn-train/burn-train --checkpoint-dir "${BURN_CHECKPOINT_DIR:-checkpoints}" "$@"
