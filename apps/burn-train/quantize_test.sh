#!/usr/bin/env bash
# Post-training int8 quantization end to end (a ctest, about a minute): a
# short training run with --quantize int8 reports the quantized model's test
# accuracy, within TOLERANCE of the f32 model's, saves it with
# --quantized-model, and the file read back scores exactly as the model in
# memory. The int8 file is smaller than a quarter of the f32 checkpoint's
# model record plus the scales.
# Usage: quantize_test.sh path/to/burn-train
# Exits 4 (burn-train's "Fashion-MNIST not installed") when the data is missing.
set -uo pipefail

bin=${1:?usage: quantize_test.sh path/to/burn-train}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

# Int8 per output channel with calibrated activations costs a few tenths of
# a point on this CNN; one point is the bound the quantization must keep.
readonly TOLERANCE=0.01
log="$dir/run.log"
run "$log" "$bin" --epochs 1 --limit-batches 100 --eval-batch-size 1000 --seed 7 --progress none \
  --checkpoint-dir "$dir/ckpt" --quantize int8 --quantized-model "$dir/model-int8.safetensors"
status=$?
[[ $status -eq 4 ]] && exit 4
[[ $status -eq 0 ]] || fail "the run exited with $status"

f32=$(sed -n 's/^final test accuracy: \(0\.[0-9]*\)$/\1/p' "$log")
int8=$(sed -n 's/^int8 quantized: 4 layers .*test accuracy \(0\.[0-9]*\), test [0-9.]* s$/\1/p' "$log")
back=$(sed -n 's/^int8 model: .*test accuracy \(0\.[0-9]*\) when read back)$/\1/p' "$log")
[[ -n $f32 ]] || fail "no 'final test accuracy' line"
[[ -n $int8 ]] || fail "no 'int8 quantized: 4 layers ... test accuracy' line"
[[ -n $back ]] || fail "no 'int8 model: ... when read back' line"
awk -v q="$int8" -v f="$f32" -v t="$TOLERANCE" 'BEGIN { exit !(q >= f - t) }' ||
  fail "the int8 model reached $int8, the f32 model $f32 (allowed loss $TOLERANCE)"
[[ $back == "$int8" ]] || fail "the int8 model read back scored $back, in memory $int8"

f32_bytes=$(stat -c %s "$dir"/ckpt/model-epoch-1.safetensors)
int8_bytes=$(stat -c %s "$dir/model-int8.safetensors")
(( int8_bytes * 3 < f32_bytes )) ||
  fail "the int8 file has $int8_bytes bytes, the f32 model record $f32_bytes (expected under a third)"
echo "quantize_test: int8 $int8 (read back $back), f32 $f32; $int8_bytes bytes against $f32_bytes"
echo "quantize_test: passed"
