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
