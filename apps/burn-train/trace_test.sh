#!/usr/bin/env bash
# burn-train --trace trains the same model as the step run operation by
# operation, bit for bit (a ctest, ~30 s). On a 1,000-image slice of
# Fashion-MNIST (15 batches of 64 and a last one of 40, recorded again for
# its size), on cpu and flex:
#   1. two epochs eager and two traced: the same saved weights and the same
#      losses and accuracies;
#   2. one eager epoch, then --resume --trace for the second: the same as
#      two eager epochs (the optimiser's saved state goes into the recorded
#      step);
#   3. bf16 autocast inside the recorded step, on cpu: the same as eager;
#   4. f16 with loss scaling on flex, over a step whose gradients overflow
#      (skipped, the scale halved): the same as eager.
# Usage: trace_test.sh path/to/burn-train
# Exits 4 when Fashion-MNIST is missing (ctest reports a skip).
set -uo pipefail

train=${1:?usage: trace_test.sh path/to/burn-train}
source_dir=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

[[ -s $source_dir/train-images-idx3-ubyte.gz && -s $source_dir/t10k-images-idx3-ubyte.gz ]] || {
  echo "trace_test: Fashion-MNIST is not in $source_dir (apt-get install dataset-fashion-mnist)"
  exit 4
}

# slice NAME COUNT ITEM_BYTES HEADER_BYTES: the first COUNT items of an
# MNIST-format file, its item count rewritten (a big-endian u32 at byte 4).
slice() {
  local name=$1 count=$2 item=$3 header=$4
  {
    gzip -dc "$source_dir/$name.gz" | head -c 4
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((count >> 24 & 255)) $((count >> 16 & 255)) \
      $((count >> 8 & 255)) $((count & 255)))"
    gzip -dc "$source_dir/$name.gz" | tail -c +9 | head -c $((header - 8 + count * item))
  } >"$dir/data/$name"
}
mkdir -p "$dir/data"
slice train-images-idx3-ubyte 1000 784 16
slice train-labels-idx1-ubyte 1000 1 8
slice t10k-images-idx3-ubyte 500 784 16
slice t10k-labels-idx1-ubyte 500 1 8


# train NAME ARGS...: a run whose checkpoints go to $dir/NAME and summary to $dir/NAME.json.
train() {
  local name=$1
  shift
  timeout 300 "$train" --data-dir "$dir/data" --eval-batch-size 250 --workers 0 --progress none --seed 11 \
    --checkpoint-dir "$dir/$name" --summary-json "$dir/$name.json" "$@" >"$dir/$name.log" 2>&1 ||
    { cat "$dir/$name.log"; fail "burn-train $* failed"; }
}
# same A B LAST_EPOCH: runs A and B saved the same weights and reported the same metrics.
same() {
  local f=model-epoch-$3.safetensors
  [[ -s $dir/$1/$f && -s $dir/$2/$f ]] || fail "$1 or $2 did not write $f"
  cmp <(tensor_bytes "$dir/$1/$f") <(tensor_bytes "$dir/$2/$f") || fail "the weights of $2 differ from those of $1"
  [[ -n $(metrics "$dir/$1.json") ]] || fail "no loss in $1's summary"
  diff <(metrics "$dir/$1.json") <(metrics "$dir/$2.json") || fail "the metrics of $2 differ from those of $1"
}

for device in cpu flex; do
  train "$device-eager" --device "$device" --epochs 2
  train "$device-traced" --device "$device" --epochs 2 --trace
  grep -q "step: traced" "$dir/$device-traced.log" || fail "the traced run on $device did not say it traced"
  same "$device-eager" "$device-traced" 2
  echo "trace_test: $device: two epochs traced give the eager weights and metrics"
done

# A constant rate: a cosine schedule planned for one epoch would not be the
# two-epoch run's.
train cpu-constant --device cpu --epochs 2 --lr-schedule constant
train cpu-resumed --device cpu --epochs 1 --lr-schedule constant
train cpu-resumed --device cpu --epochs 2 --lr-schedule constant --resume --trace
same cpu-constant cpu-resumed 2
echo "trace_test: an eager checkpoint resumed with --trace continues as the eager run"

train cpu-bf16-eager --device cpu --epochs 1 --precision bf16
train cpu-bf16-traced --device cpu --epochs 1 --precision bf16 --trace
same cpu-bf16-eager cpu-bf16-traced 1
echo "trace_test: bf16 autocast traced gives the eager weights and metrics"

# f16 runs slowly on a CPU (oneDNN 2.6 has no f16 convolution kernels for
# it): a few small batches, enough for the fifth step to overflow.
f16=(--device flex --epochs 1 --precision f16 --batch-size 16 --limit-batches 8)
train flex-f16-eager "${f16[@]}"
train flex-f16-traced "${f16[@]}" --trace
grep -q '"loss_scale": *"32768"' "$dir/flex-f16-eager/checkpoint.json" ||
  fail "no step of the f16 run was skipped, so the test does not cover a skipped traced step"
same flex-f16-eager flex-f16-traced 1
cmp <(grep -o '"loss_scale[a-z_]*": *"[0-9]*"' "$dir/flex-f16-eager/checkpoint.json") \
  <(grep -o '"loss_scale[a-z_]*": *"[0-9]*"' "$dir/flex-f16-traced/checkpoint.json") ||
  fail "the traced f16 run's loss scale differs from the eager one's"
echo "trace_test: f16 with loss scaling traced, a step skipped, gives the eager weights and scale"
grep 'final test accuracy' "$dir/cpu-traced.log"
