# Helpers the burn-train test scripts share; each sources this file.

# fail MESSAGE...: reports the failure, named after the script, and exits 1.
fail() {
  echo "$(basename "$0" .sh): FAILED: $*" >&2
  exit 1
}

# run LOG COMMAND...: runs COMMAND (for at most 300 s) with its output in
# LOG, shows that output, and returns COMMAND's status.
run() {
  local log=$1
  shift
  timeout 300 "$@" >"$log" 2>&1
  local status=$?
  cat "$log"
  return $status
}

# tensor_bytes FILE: the tensors of a saved model, without the file's header
# (which holds random parameter ids, different in any two runs).
tensor_bytes() {
  local n
  n=$(od -An -t u8 -N8 "$1" | tr -d ' ')
  tail -c +$((9 + n)) "$1"
}

# metrics FILE: the losses and accuracies of a --summary-json file (timings
# differ between runs and are left out).
metrics() { grep -o '"\(loss\|acc\|train_loss\|test_loss\|train_acc\|test_acc\)": *[-0-9.e]*' "$1"; }
