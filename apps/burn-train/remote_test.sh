#!/usr/bin/env bash
# burn-train on a remote device reaches the same model, bit for bit, as on
# the server's device locally: a burn-server on 127.0.0.1 hosts flex:0, the
# same short run trains once on local flex, once on remote:.../flex:0 and
# once more there with --trace (each step one program the server keeps), and
# the saved weights and the reported losses must be identical.
# Usage: remote_test.sh path/to/burn-train path/to/burn-server
# Exits 4 when Fashion-MNIST is missing (ctest reports a skip).
set -uo pipefail

train=${1:?usage: remote_test.sh BURN_TRAIN BURN_SERVER}
server=${2:?usage: remote_test.sh BURN_TRAIN BURN_SERVER}
# Re-run under tests/remote/with_server.sh, which starts the server, names its
# flex:0 in BURN_TEST_REMOTE, stops it afterwards and shows its log on failure.
if [[ -z ${BURN_TEST_REMOTE:-} ]]; then
  exec "$(dirname "$0")/../../tests/remote/with_server.sh" "$server" "$0" "$train" "$server"
fi
remote="remote:$BURN_TEST_REMOTE"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

# --denormals keep: the server computes with IEEE denormals, so the local run
# must too (burn-train flushes them on its own threads by default).
common=(--epochs 1 --limit-batches 8 --eval-batch-size 200 --workers 0 --progress none --seed 7 --denormals keep)
"$train" "${common[@]}" --device flex --checkpoint-dir "$dir/local" --summary-json "$dir/local.json" \
  >"$dir/local.log" 2>&1
status=$?
[[ $status -eq 4 ]] && exit 4
[[ $status -eq 0 ]] || { cat "$dir/local.log"; fail "the local run exited with $status"; }
"$train" "${common[@]}" --device "$remote" --checkpoint-dir "$dir/remote" --summary-json "$dir/remote.json" \
  >"$dir/remote.log" 2>&1 || { cat "$dir/remote.log"; fail "the remote run failed"; }
"$train" "${common[@]}" --device "$remote" --trace --checkpoint-dir "$dir/traced" --summary-json "$dir/traced.json" \
  >"$dir/traced.log" 2>&1 || { cat "$dir/traced.log"; fail "the traced remote run failed"; }

# The model's tensors; the optimiser's file is ordered by the parameter ids,
# which differ between runs, so it is compared through the losses only.
for f in model-epoch-1.safetensors; do
  [[ -s $dir/local/$f && -s $dir/remote/$f && -s $dir/traced/$f ]] || fail "a run did not write $f"
  cmp <(tensor_bytes "$dir/local/$f") <(tensor_bytes "$dir/remote/$f") ||
    fail "the tensors of $f trained on $remote differ from those trained on local flex"
  cmp <(tensor_bytes "$dir/local/$f") <(tensor_bytes "$dir/traced/$f") ||
    fail "the tensors of $f trained on $remote with --trace differ from those trained on local flex"
done
[[ -n $(metrics "$dir/local.json") ]] || fail "no loss in the summary JSON"
diff <(metrics "$dir/local.json") <(metrics "$dir/remote.json") || fail "the losses differ"
diff <(metrics "$dir/local.json") <(metrics "$dir/traced.json") || fail "the losses of the traced run differ"
grep 'final test accuracy' "$dir/local.log"
echo "remote_test: $remote trained the same weights and losses as local flex, step by step and traced"
