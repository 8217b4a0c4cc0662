#include "backends/flex/threads.hpp"

#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include <burn/error.hpp>

namespace burn::flex {
namespace {

std::size_t initial_pool_size() {
  if (const char* env = std::getenv("BURN_NUM_THREADS"); env && *env) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (*end != '\0' || n < 1)
      throw Error("Device::flex", std::string("BURN_NUM_THREADS=") + env + " is not a positive thread count");
    omp_set_num_threads(static_cast<int>(n));
    return static_cast<std::size_t>(n);
  }
  return static_cast<std::size_t>(omp_get_max_threads());
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
