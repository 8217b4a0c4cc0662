#!/usr/bin/env bash
# Runs a test binary with a burn-server on 127.0.0.1 hosting flex:0, named to
# the suite by BURN_TEST_REMOTE (tests/support/burn_test.hpp adds that device
# to every parametrised suite). The server is stopped when the run ends.
#
#   with_server.sh BURN_SERVER TEST_BINARY [ARGS...]
set -euo pipefail
server=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/burn-with-server.XXXXXX")
pid=
cleanup() {
  if [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
"$server" --listen 127.0.0.1:0 --port-file "$dir/port" --device flex:0 >"$dir/server.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  [[ -s $dir/port ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [[ ! -s $dir/port ]]; then
  echo "with_server.sh: burn-server did not start within 30 s; its log:" >&2
  cat "$dir/server.log" >&2
  exit 1
fi
status=0
BURN_TEST_REMOTE="127.0.0.1:$(cat "$dir/port")/flex:0" "$@" || status=$?
if ((status != 0)); then
  echo "with_server.sh: the server's log:" >&2
  tail -n 40 "$dir/server.log" >&2
fi
exit "$status"
