#!/usr/bin/env bash
# burn-train refuses, before it trains, what it could not finish, and does
# not trust a damaged checkpoint (a ctest, ~20 s):
#   1. batch sizes beyond the data or the memory, thread and epoch counts out
#      of range, outputs it cannot write: refused up front with the flag named;
#   2. a killed run's temporary checkpoint files are removed by the next run;
#   3. a checkpoint whose model file lost a bit, or whose index is edited, is
#      refused on --resume.
# Usage: bad_input_test.sh path/to/burn-train
# Exits 4 (burn-train's "Fashion-MNIST not installed") when the data is missing.
set -uo pipefail

bin=${1:?usage: bad_input_test.sh path/to/burn-train}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

# expect STATUS TEXT ARGS...: burn-train ARGS must exit with STATUS within
# 60 s and print TEXT (a fixed string) on stdout or stderr.
expect() {
  local want=$1 text=$2
  shift 2
  timeout 60 "$bin" --progress none "$@" >"$dir/out.log" 2>&1
  local status=$?
  [[ $status -eq 4 ]] && exit 4
  if [[ $status -ne $want ]] || ! grep -qF -- "$text" "$dir/out.log"; then
    cat "$dir/out.log" >&2
    fail "burn-train $* exited with $status (expected $want) or did not say: $text"
  fi
}

# 1. Refused up front.
expect 2 "--batch-size 18446744073709551615 is larger than the training set (60000 images)" \
  --batch-size 18446744073709551615
expect 2 "--eval-batch-size 18446744073709551615 is larger than the test set (10000 images)" \
  --eval-batch-size 18446744073709551615
available_kib=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB$/\1/p' /proc/meminfo)
if [[ -n $available_kib && $available_kib -lt 40000000 ]]; then
  # 60,000 images' activations take about 44 GB.
  expect 2 "--batch-size 60000 needs about" --batch-size 60000
fi
expect 2 "--epochs 2000000 is out of range; use at most 1000000" --epochs 2000000
expect 1 "4294967297 threads is more than the limit" --threads 4294967297
touch "$dir/a-file"
expect 2 "--checkpoint-dir $dir/a-file/ckpt" --checkpoint-dir "$dir/a-file/ckpt"
expect 2 "the directory '$dir/missing' does not exist" --summary-json "$dir/missing/summary.json"
expect 2 "--summary-json $dir is a directory" --summary-json "$dir"
expect 2 "--precision must be f32, bf16 or f16, got 'int8'" --precision int8
expect 2 "--quantize must be int8, got 'int4'" --quantize int4
expect 2 "--denormals must be flush or keep, got 'zero'" --denormals zero
expect 2 "--quantized-model needs --quantize int8" --quantized-model "$dir/q.safetensors"
expect 2 "--quantized-model $dir is a directory" --quantize int8 --quantized-model "$dir"

# 2. A checkpoint, then a run killed while writing one: its temporary file
# (named after a process that no longer exists) goes at the next start.
common=(--limit-batches 2 --eval-batch-size 500 --checkpoint-dir "$dir/ckpt")
expect 0 "final test accuracy" --epochs 1 "${common[@]}"
stale="$dir/ckpt/.model-epoch-2.safetensors.tmp-4194305-0-ab12"
echo partial >"$stale"
expect 0 "removed 1 temporary file a killed run left" --epochs 1 "${common[@]}" --resume
[[ -e $stale ]] && fail "the stale temporary file was not removed"

# 3. Damage is refused on --resume: one flipped bit in the model file, an
# edited epoch count, an edited loss scale.
cp "$dir/ckpt/model-epoch-1.safetensors" "$dir/model.bak"
model="$dir/ckpt/model-epoch-1.safetensors"
offset=$(($(stat -c %s "$model") - 5))
byte=$(od -An -tu1 -j "$offset" -N1 "$model" | tr -d ' ')
printf "\\$(printf '%03o' $((byte ^ 1)))" | dd of="$model" bs=1 seek="$offset" conv=notrunc status=none
expect 1 "model-epoch-1.safetensors' is damaged: its CRC-32 is" --epochs 2 "${common[@]}" --resume
cp "$dir/model.bak" "$dir/ckpt/model-epoch-1.safetensors"
sed -i 's/"epochs_done": 1/"epochs_done": -1/' "$dir/ckpt/checkpoint.json"
expect 1 '"epochs_done" must be a whole number from 1 to 1000000' --epochs 2 "${common[@]}" --resume
f16=(--limit-batches 2 --eval-batch-size 500 --precision f16 --checkpoint-dir "$dir/ckpt16")
expect 0 "final test accuracy" --epochs 1 "${f16[@]}"
sed -i 's/"loss_scale": "[^"]*"/"loss_scale": "not a number"/' "$dir/ckpt16/checkpoint.json"
expect 1 "checkpoint.json has a malformed loss scale" --epochs 2 "${f16[@]}" --resume
echo "bad_input_test: passed"
