#!/usr/bin/env bash
# Mixed precision end to end (a ctest, about a minute): the same batches with
# the same seed trained in f32, under bf16 autocast and under f16 autocast
# with loss scaling; each 16-bit run must say what it ran and reach the f32
# run's test accuracy within TOLERANCE (the full-length comparison is in
# docs/precision.md). A checkpointed f16 run resumes with its loss scale.
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

# The loss scaler's state survives a checkpoint: a resumed f16 run goes on
# from the saved scale and count of good steps (10 batches per epoch; the
# scale grows only after 2000 good steps, so the count is what moves).
short=(--limit-batches 10 --eval-batch-size 1000 --seed 7 --progress none --precision f16 --checkpoint-dir "$dir/ckpt")
loss_scale_setting() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" "$dir/ckpt/checkpoint.json"; }
run "$dir/f16-epoch1.log" "$bin" --epochs 1 "${short[@]}" || fail "the first f16 checkpointed run exited with $?"
[[ $(loss_scale_setting loss_scale) == 65536 ]] || fail "checkpoint.json has loss_scale '$(loss_scale_setting loss_scale)', not 65536"
[[ $(loss_scale_setting loss_scale_good_steps) == 10 ]] ||
  fail "checkpoint.json counts $(loss_scale_setting loss_scale_good_steps) good steps after 10 batches"
run "$dir/f16-epoch2.log" "$bin" --epochs 2 --resume "${short[@]}" || fail "the resumed f16 run exited with $?"
grep -q "^resuming from .*: 1 epoch done, loss scale 65536 after 10 good steps$" "$dir/f16-epoch2.log" ||
  fail "the resumed run did not restore the loss scale: $(grep resuming "$dir/f16-epoch2.log")"
[[ $(loss_scale_setting loss_scale_good_steps) == 20 ]] ||
  fail "after resuming, checkpoint.json counts $(loss_scale_setting loss_scale_good_steps) good steps, not 20"
echo "precision_test: passed"
