// The most threads a device's pool may be given. A count from a flag or an
// environment variable can be anything; libgomp crashes trying to start
// 100,000 threads, and ATen takes the count as an int. Four per hardware
// thread (at least 256) leaves room for deliberate oversubscription.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <thread>

#include <fmt/format.h>

namespace burn::detail {

inline std::size_t max_threads() {
  return std::max<std::size_t>(256, std::size_t{4} * std::thread::hardware_concurrency());
}

/// Why `n` threads (from `source`: "BURN_NUM_THREADS=...", "set_num_threads(...)")
/// cannot be used, or an empty string.
inline std::string thread_count_problem(std::size_t n, const std::string& source) {
  if (n == 0) return fmt::format("{}: the thread count must be at least 1", source);
  if (n > max_threads())
    return fmt::format(
        "{}: {} threads is more than the limit of {} (4 per hardware thread of this machine, at "
        "least 256); use a smaller count",
        source, n, max_threads());
  return {};
}

}  // namespace burn::detail
