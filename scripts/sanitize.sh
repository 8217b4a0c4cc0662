#!/usr/bin/env bash
# Runs the suites that exercise burn's own threads -- the cpu device's fusion
# queue (burn_cpu_tests), devices, pools and threads (burn_device_tests),
# the remote client with burn-server processes built the same way
# (burn_remote_tests, whose 1 GiB transfer the preset leaves out) and
# burn::trace (burn_capture_tests: one traced function called from several
# threads) -- under ThreadSanitizer (preset `tsan`), and the first two under
# AddressSanitizer with UBSan (preset `asan`), with ONNX export and import
# (burn_onnx_tests: protobuf messages, the capture graph, files read back),
# burn::trace (recordings replayed with values released as they die, in
# place where nothing else holds them) and the CUDA
# backend's suite where the build
# has it (burn_cuda_tests: its code generator, NVRTC, the kernels run on the
# CPU, the allocator and the driver loader, with the stub-driver entry; the
# fresh root of scripts/fresh-check.sh has no CUDA toolkit, so this is where
# CI runs them). Builds only those suites (and what they start) and the
# library, into build/<preset>.
# Prints one line per suite and exits non-zero if any suite failed or a
# sanitizer reported anything; the full output is in build/<preset>/logs/.
# The sanitizer options and suppressions are the test presets' (ctest
# --preset tsan|asan runs the same way).
#
#   bash scripts/sanitize.sh              # tsan, then asan
#   bash scripts/sanitize.sh tsan         # one preset
#
# Under AddressSanitizer, LeakSanitizer does not follow __tls_get_addr
# (intercept_tls_get_addr=0 in the asan test preset). GCC 12's sanitizer
# runtime takes a dynamic TLS block that happens to start 16 bytes into a
# page for one with the header glibc 2.19 put there, reads the two words
# before it as the block's range, and LeakSanitizer's tracer faults on that
# garbage range at exit ("Tracer caught signal 11", google/sanitizers#1322).
# The CUDA suite dlopens libraries with thread-local storage (NVRTC), so
# where a block lands decided whether the suite passed. The price is that
# dynamic TLS is not scanned for pointers: that can add a leak report,
# never hide one.
#
# Under ThreadSanitizer the suites run with one OpenMP thread: Debian's
# libgomp is not built with ThreadSanitizer, so its barriers are invisible
# and OpenMP regions would be reported as races (tests/tsan.supp holds the one
# suppression, for the tests that ask for more threads on purpose).
set -euo pipefail
cd "$(dirname "$0")/.."

presets=("$@")
[[ ${#presets[@]} -gt 0 ]] || presets=(tsan asan)

failed=0
for preset in "${presets[@]}"; do
  # The Vulkan suite passes under both (cmake --preset tsan|asan
  # -DBURN_VULKAN=ON, then ctest -R burn_vulkan_tests), but takes three (tsan)
  # to six (asan) more minutes than CI's budget has.
  case "$preset" in
    tsan) suites=(burn_cpu_tests burn_device_tests burn_remote_tests burn_capture_tests) ;;
    asan) suites=(burn_cpu_tests burn_device_tests burn_onnx_tests burn_capture_tests) ;;
    *) echo "sanitize.sh: unknown preset '$preset' (expected: tsan, asan)" >&2; exit 2 ;;
  esac
  build=build/$preset
  mkdir -p "$build/logs"
  started=$SECONDS
  # Warnings are errors in the release and full builds; GCC's sanitizer
  # instrumentation adds false positives of its own (maybe-uninitialized,
  # stringop-overflow), so these builds leave warnings as warnings.
  BURN_WERROR=OFF cmake --preset "$preset" >"$build/logs/configure.log" 2>&1 ||
    { echo "sanitize.sh: configuring '$preset' failed, see $build/logs/configure.log" >&2; exit 1; }
  tests=("${suites[@]}")
  if [[ $preset == asan ]] && cmake --build "$build" --target help | grep -q '^burn_cuda_tests:'; then
    suites+=(burn_cuda_tests)
    tests+=(burn_cuda_tests burn_cuda_stub_driver)
  fi
  cmake --build "$build" --target "${suites[@]}" >"$build/logs/build.log" 2>&1 ||
    { tail -30 "$build/logs/build.log" >&2; echo "sanitize.sh: building '$preset' failed, see $build/logs/build.log" >&2; exit 1; }
  echo "$preset: built in $((SECONDS - started)) s"
  # The test preset carries the sanitizer options and suppressions
  # (CMakePresets.json); a report makes the suite's exit status non-zero.
  pattern="^($(IFS='|'; echo "${tests[*]}"))\$"
  log="$build/logs/ctest.log"
  status=0
  ctest --preset "$preset" -R "$pattern" >"$log" 2>&1 || status=$?
  grep -E "^ *[0-9]+/[0-9]+ Test +#" "$log" | sed "s/^ */$preset: /" || true
  if [[ $status -ne 0 ]]; then
    failed=1
    first=$(grep -m1 -E "^(WARNING: ThreadSanitizer|==[0-9]+==ERROR|SUMMARY)|runtime error:|^\[  FAILED" "$log" || true)
    echo "$preset: FAILED: ${first:-see the log}; log: $log"
  fi
done
exit "$failed"
