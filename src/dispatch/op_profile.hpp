// An opt-in per-op timer for finding where a program's time goes:
// `BURN_PROFILE_OPS=1 ./program` prints, at exit, a table of backend time per
// op name (calls, total ms, share) to stderr. Off by default; when off the
// cost is one predictable branch per op.
#pragma once

#include <burn/backend/backend.hpp>

#include <chrono>
#include <string_view>

namespace burn::detail::profile {

/// Whether BURN_PROFILE_OPS was set when the process started.
bool enabled() noexcept;

/// Adds one call of `op` taking `elapsed` to the table.
void record(std::string_view op, std::chrono::nanoseconds elapsed);

/// Runs `run` on `backend`. With the profile on, also records its time
/// under `name()`: synchronous backends finish inside `run`, asynchronous
/// ones are synced before the clock stops, so the time is this run's own.
template <class Name, class Run>
void run_timed(backend::Backend& backend, Name&& name, Run&& run) {
  if (!enabled()) {
    run();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  run();
  if (auto* stream = backend.stream()) stream->sync();
  record(name(), std::chrono::steady_clock::now() - start);
}

}  // namespace burn::detail::profile
