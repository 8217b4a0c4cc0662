// An opt-in per-op timer for finding where a program's time goes:
// `BURN_PROFILE_OPS=1 ./program` prints, at exit, a table of backend time per
// op name (calls, total ms, share) to stderr. Off by default; when off the
// cost is one predictable branch per op.
#pragma once

#include <chrono>
#include <string_view>

namespace burn::detail::profile {

/// Whether BURN_PROFILE_OPS was set when the process started.
bool enabled() noexcept;

/// Adds one call of `op` taking `elapsed` to the table.
void record(std::string_view op, std::chrono::nanoseconds elapsed);

}  // namespace burn::detail::profile
