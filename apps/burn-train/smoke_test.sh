#!/usr/bin/env bash
# A quick end-to-end check of burn-train (a ctest candidate, ~1 minute):
#   1. one short epoch: the training loss must fall, a checkpoint is written;
#   2. --resume to two epochs: continues at epoch 2, prunes epoch 1's files;
#   3. --resume with nothing left to train: evaluates the saved model, whose
#      test accuracy must equal the one step 2 reported for the model in
#      memory (the save/load round trip keeps weights and batch-norm statistics);
#      with ONNX in the build it also exports the model, and the file read
#      back must score the same.
# Usage: smoke_test.sh path/to/burn-train
# Exits 4 (burn-train's "Fashion-MNIST not installed") when the data is missing,
# so ctest can report a skip (SKIP_RETURN_CODE 4) instead of a failure.
set -uo pipefail

bin=${1:?usage: smoke_test.sh path/to/burn-train}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common=(--limit-batches 20 --eval-batch-size 100 --progress lines --checkpoint-dir "$dir/ckpt")

source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
final_accuracy() { sed -n 's/^final test accuracy: \(0\.[0-9]*\)$/\1/p' "$1"; }

run "$dir/1.log" "$bin" --epochs 1 "${common[@]}" --expect-loss-decrease
status=$?
[[ $status -eq 4 ]] && exit 4
[[ $status -eq 0 ]] || fail "the first run exited with $status"
[[ -n $(final_accuracy "$dir/1.log") ]] || fail "no 'final test accuracy' line"
# The run's peak resident memory, in MiB, just before the last line.
peak=$(sed -n 's/^peak resident memory: \([0-9]*\)\.[0-9] MiB$/\1/p' "$dir/1.log")
[[ -n $peak && $peak -gt 0 ]] || fail "no 'peak resident memory: N MiB' line"
for f in checkpoint.json model-epoch-1.safetensors optimizer-epoch-1.safetensors; do
  [[ -f $dir/ckpt/$f ]] || fail "the checkpoint lacks $f"
done

run "$dir/2.log" "$bin" --epochs 2 "${common[@]}" --resume || fail "the resumed run exited with $?"
grep -q '^resuming from .*: 1 epoch done' "$dir/2.log" || fail "the second run did not resume from epoch 1"
grep -q '^epoch 1/2:' "$dir/2.log" && fail "the resumed run trained epoch 1 again"
grep -q '^epoch 2/2:' "$dir/2.log" || fail "the resumed run did not train epoch 2"
[[ -f $dir/ckpt/model-epoch-2.safetensors && ! -e $dir/ckpt/model-epoch-1.safetensors ]] ||
  fail "epoch 2's checkpoint did not replace epoch 1's"

# The evaluation-only run also exports the model as ONNX, which burn-train
# reads back and scores: the file must give the trained model's accuracy.
export_args=()
"$bin" --help | grep -q -- '--export-onnx' && export_args=(--export-onnx "$dir/model.onnx")
run "$dir/3.log" "$bin" --epochs 2 "${common[@]}" --resume "${export_args[@]}" ||
  fail "the evaluation-only run exited with $?"
grep -q 'already has 2 epochs' "$dir/3.log" || fail "the third run did not see a finished checkpoint"
a2=$(final_accuracy "$dir/2.log")
a3=$(final_accuracy "$dir/3.log")
[[ -n $a2 && $a2 == "$a3" ]] || fail "the reloaded model's accuracy $a3 differs from the trained model's $a2"
if ((${#export_args[@]})); then
  [[ -s $dir/model.onnx ]] || fail "--export-onnx wrote no file"
  a_onnx=$(sed -n 's/^onnx export: .* (test accuracy \(0\.[0-9]*\) when read back)$/\1/p' "$dir/3.log")
  [[ $a_onnx == "$a3" ]] || fail "the exported ONNX model scores $a_onnx, the trained model $a3"
fi
echo "smoke_test: passed (loss fell, resumed, reloaded accuracy $a3)"
