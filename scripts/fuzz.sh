#!/usr/bin/env bash
# Fuzzes the parsers of untrusted input (docs/fuzzing.md): builds the
# libFuzzer targets of tests/fuzz with clang into build/fuzz and runs each for
# the given number of seconds (default 60), starting from a fresh copy of its
# seed corpus (tests/fuzz/corpus/<target>/), so the repository is never
# modified. Prints one line per target and exits non-zero if any target
# crashed, leaving the input that did it in build/fuzz/crashes/.
#
#   bash scripts/fuzz.sh            # 60 s per target
#   bash scripts/fuzz.sh 600 idx    # 10 minutes, the IDX target only
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(safetensors pytorch idx record_metadata checkpoint remote_protocol onnx)

build=build/fuzz
CC=clang CXX=clang++ cmake -S tests/fuzz -B "$build" -G Ninja >/dev/null
cmake --build "$build"
mkdir -p "$build/crashes" "$build/logs"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
for target in "${targets[@]}"; do
  binary="$build/fuzz_$target"
  [[ -x $binary ]] || { echo "fuzz.sh: no target '$target' (have: safetensors pytorch idx record_metadata checkpoint remote_protocol onnx)" >&2; exit 2; }
  corpus="$work/$target"
  mkdir -p "$corpus"
  [[ -d tests/fuzz/corpus/$target ]] && cp tests/fuzz/corpus/"$target"/* "$corpus"/
  log="$build/logs/$target.log"
  status=0
  # -timeout: one input running longer is a hang; -rss_limit_mb: growing past
  # it is a memory blow-up. Both count as crashes and leave their input.
  "$binary" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/crashes/$target-" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [[ $status -eq 0 ]]; then
    echo "$target: ok, ${runs:-?} runs in ${seconds} s, corpus $(ls "$corpus" | wc -l) inputs"
  else
    failed=1
    crash=$(grep -o "Test unit written to [^ ]*" "$log" | tail -1 | sed 's/Test unit written to //')
    reason=$(grep -m1 -E "^==[0-9]+==ERROR|^SUMMARY|ERROR: libFuzzer|runtime error" "$log" || true)
    echo "$target: FAILED (exit $status) after ${runs:-?} runs: ${reason:-see $log}; input: ${crash:-none}; log: $log"
  fi
done
exit "$failed"
