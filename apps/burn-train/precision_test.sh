#!/usr/bin/env bash
# Mixed precision end to end (a ctest, about a minute): the same batches with
# the same seed trained in f32, under bf16 autocast and under f16 autocast
# with loss scaling; each 16-bit run must say what it ran and reach the f32
# run's test accuracy within TOLERANCE (the full-length comparison is in
# docs/precision.md).
# Usage: precision_test.sh path/to/burn-train
# Exits 4 (burn-train's "Fashion-MNIST not installed") when the data is missing.
set -uo pipefail

bin=${1:?usage: precision_test.sh path/to/burn-train}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

# 100 batches of 64 and the whole test set: about 0.8 accuracy, where runs
# with different rounding but the same data order differ by well under a
# point.
readonly TOLERANCE=0.015
common=(--epochs 1 --limit-batches 100 --eval-batch-size 1000 --seed 7 --progress none --expect-loss-decrease)
accuracy() { sed -n 's/^final test accuracy: \(0\.[0-9]*\)$/\1/p' "$1"; }

run "$dir/f32.log" "$bin" "${common[@]}"
status=$?
[[ $status -eq 4 ]] && exit 4
[[ $status -eq 0 ]] || fail "the f32 run exited with $status"
reference=$(accuracy "$dir/f32.log")
[[ -n $reference ]] || fail "no 'final test accuracy' line in the f32 run"

for precision in bf16 f16; do
  run "$dir/$precision.log" "$bin" "${common[@]}" --precision "$precision" ||
    fail "the $precision run exited with $?"
  grep -q "^precision: $precision autocast" "$dir/$precision.log" || fail "the $precision run did not say it used autocast"
  got=$(accuracy "$dir/$precision.log")
  [[ -n $got ]] || fail "no 'final test accuracy' line in the $precision run"
  awk -v a="$got" -v b="$reference" -v t="$TOLERANCE" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }' ||
    fail "$precision reached test accuracy $got, the f32 run $reference (allowed difference $TOLERANCE)"
  echo "precision_test: $precision $got, f32 $reference"
done
grep -q "loss scaling" "$dir/f16.log" || fail "the f16 run did not scale the loss"
echo "precision_test: passed"
