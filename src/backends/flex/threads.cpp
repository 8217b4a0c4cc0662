#include "backends/flex/threads.hpp"

#include <omp.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <string>

#include <burn/error.hpp>

#include "device/thread_limit.hpp"

namespace burn::flex {
namespace {

std::size_t initial_pool_size() {
  if (const char* env = std::getenv("BURN_NUM_THREADS"); env && *env) {
    const std::string text = env;
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    // Out of range for size_t, or merely too many: the same advice.
    if (ec == std::errc::result_out_of_range) n = std::numeric_limits<std::size_t>::max();
    if (ec == std::errc::invalid_argument || end != text.data() + text.size() || n == 0)
      throw Error("Device::flex", "BURN_NUM_THREADS=" + text + " is not a positive thread count");
    if (const auto problem = detail::thread_count_problem(n, "BURN_NUM_THREADS=" + text); !problem.empty())
      throw Error("Device::flex", problem);
    omp_set_num_threads(static_cast<int>(n));
    return n;
  }
  // OpenMP's own default, OMP_NUM_THREADS where it is set: libgomp takes any
  // count and crashes at the first parallel region that would start them.
  const auto n = static_cast<std::size_t>(omp_get_max_threads());
  if (const auto problem = detail::thread_count_problem(n, "OMP_NUM_THREADS"); !problem.empty())
    throw Error("Device::flex", problem);
  return n;
}

std::atomic<std::size_t>& size_slot() {
  static std::atomic<std::size_t> size{initial_pool_size()};
  return size;
}

}  // namespace

std::size_t pool_size() { return size_slot().load(std::memory_order_relaxed); }

void set_pool_size(std::size_t n) {
  size_slot().store(n, std::memory_order_relaxed);
  omp_set_num_threads(static_cast<int>(n));
}

}  // namespace burn::flex
