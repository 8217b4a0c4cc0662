#!/usr/bin/env bash
# The README's second command: install what is missing, build everything and
# run every test (ctest prints the summary). It uses the `full` preset
# (build/full): the release build plus every backend CI covers (LibTorch,
# Vulkan and wgpu on lavapipe, remote with burn-server, the collectives over
# Gloo with burn-run), so each op suite runs on every device and the
# differential test compares flex against LibTorch.
# The main job keeps the lean `release` preset.
set -euo pipefail
cd "$(dirname "$0")/.."
# ctest runs two test processes at once, each with flex's OpenMP threads, on
# CI's two cores; libgomp's default busy-waiting between parallel regions then
# burns the cores the other process needs (measured on the differential test
# under load: 86 s busy-waiting against 20 s passive). Sleep instead, unless
# you chose a policy yourself (scripts/main.sh does the same).
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
bash scripts/install-deps.sh
cmake --preset full
cmake --build --preset full
ctest --preset full "$@"
