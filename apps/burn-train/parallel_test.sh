#!/usr/bin/env bash
# burn-train data-parallel on 2 local ranks (a ctest, ~1 minute):
#   1. --nproc 2: burn-run starts two ranks; the loss falls, only rank 0
#      prints progress and writes the checkpoint, which records 2 ranks;
#   2. --resume on 2 ranks continues at epoch 2;
#   3. --nproc under burn-run (RANK already set) is refused with status 2;
#   4. --trace on 2 ranks (each step recorded in two parts around the
#      all-reduce of the gradients) trains the weights of the eager 2-rank
#      run, bit for bit;
#   5. so it does with f16 loss scaling, over steps whose gradients overflow.
# Usage: parallel_test.sh path/to/burn-train path/to/burn-run
# Exits 4 (burn-train's "Fashion-MNIST not installed") when the data is missing.
set -uo pipefail

bin=${1:?usage: parallel_test.sh path/to/burn-train path/to/burn-run}
launcher=${2:?usage: parallel_test.sh path/to/burn-train path/to/burn-run}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common=(--limit-batches 20 --eval-batch-size 100 --progress lines --checkpoint-dir "$dir/ckpt")

source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

run "$dir/1.log" "$bin" --nproc 2 --epochs 1 "${common[@]}" --expect-loss-decrease
status=$?
[[ $status -eq 4 ]] && exit 4
[[ $status -eq 0 ]] || fail "the 2-rank run exited with $status"
grep -q '^\[rank 0\] data parallel: 2 ranks' "$dir/1.log" || fail "rank 0 did not report 2 ranks"
grep -q '^\[rank 0\] final test accuracy: 0\.' "$dir/1.log" || fail "no final accuracy from rank 0"
grep -q '^\[rank 1\]' "$dir/1.log" && fail "rank 1 printed (only rank 0 reports)"
grep -q '"world_size": *"2"' "$dir/ckpt/checkpoint.json" || fail "the checkpoint does not record 2 ranks"
[[ -f $dir/ckpt/model-epoch-1.safetensors ]] || fail "no model checkpoint"

run "$dir/2.log" "$bin" --nproc 2 --epochs 2 "${common[@]}" --resume || fail "the resumed 2-rank run exited with $?"
grep -q '^\[rank 0\] resuming from .*: 1 epoch done' "$dir/2.log" || fail "the second run did not resume"
grep -q '^\[rank 0\] epoch 2/2:' "$dir/2.log" || fail "the resumed run did not train epoch 2"
grep -q 'note: the checkpoint was trained on' "$dir/2.log" && fail "the same 2 ranks were reported as a change"

run "$dir/3.log" "$launcher" --nproc 2 -- "$bin" --nproc 2 --epochs 1 "${common[@]}"
status=$?
[[ $status -eq 2 ]] || fail "--nproc under burn-run exited with $status, not 2"
grep -q 'already rank' "$dir/3.log" || fail "--nproc under burn-run was not explained"
traced=(--limit-batches 20 --eval-batch-size 100 --progress none --lr-schedule constant --epochs 1)
run "$dir/4.log" "$bin" --nproc 2 "${traced[@]}" --checkpoint-dir "$dir/eager" || fail "the eager 2-rank run exited with $?"
run "$dir/5.log" "$bin" --nproc 2 "${traced[@]}" --checkpoint-dir "$dir/traced" --trace ||
  fail "the traced 2-rank run exited with $?"
grep -q 'step: traced' "$dir/5.log" || fail "the traced 2-rank run did not say it traced"
cmp <(tensor_bytes "$dir/eager/model-epoch-1.safetensors") <(tensor_bytes "$dir/traced/model-epoch-1.safetensors") ||
  fail "the traced 2-rank run trained other weights than the eager one"
diff <(grep -o 'train loss [0-9.]* acc [0-9.]* | test loss [0-9.]* acc [0-9.]*' "$dir/4.log") \
  <(grep -o 'train loss [0-9.]* acc [0-9.]* | test loss [0-9.]* acc [0-9.]*' "$dir/5.log") ||
  fail "the traced 2-rank run reported other metrics"

# f16 is slow on a CPU (no f16 convolution kernels in oneDNN 2.6): small
# batches, one thread per rank; the scale falls twice in these eight steps.
f16=(--limit-batches 8 --batch-size 16 --threads 1 --eval-batch-size 100 --progress none --lr-schedule constant
  --epochs 1 --precision f16 --device flex)
run "$dir/6.log" "$bin" --nproc 2 "${f16[@]}" --checkpoint-dir "$dir/f16-eager" || fail "the eager f16 run exited with $?"
run "$dir/7.log" "$bin" --nproc 2 "${f16[@]}" --checkpoint-dir "$dir/f16-traced" --trace ||
  fail "the traced f16 run exited with $?"
scale() { grep -o '"loss_scale[a-z_]*": *"[0-9]*"' "$1/checkpoint.json"; }
[[ $(scale "$dir/f16-eager" | head -1) != *'"65536"' ]] || fail "no f16 step overflowed, so no skipped step is tested"
diff <(scale "$dir/f16-eager") <(scale "$dir/f16-traced") || fail "the traced f16 run's loss scale differs"
cmp <(tensor_bytes "$dir/f16-eager/model-epoch-1.safetensors") \
  <(tensor_bytes "$dir/f16-traced/model-epoch-1.safetensors") || fail "the traced f16 run trained other weights"
echo "parallel_test: passed"
