// Intra-op parallelism on the process's one OpenMP pool (shared with oneDNN).
// Kernels never create threads of their own.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>

#include "backends/flex/kernels.hpp"
#include "backends/flex/threads.hpp"

namespace burn::flex {

/// How many threads a loop of `n` items gets: one per `grain` items, at most
/// the pool's size, and 1 inside an enclosing parallel region (no nesting).
inline std::size_t thread_count(std::size_t n, std::size_t grain = kGrainSize) {
  if (omp_in_parallel()) return 1;
  const std::size_t max_threads = pool_size();
  return std::max<std::size_t>(1, std::min(max_threads, n / std::max<std::size_t>(grain, 1)));
}

/// Runs f(begin, end) over [0, n) split into contiguous chunks, one per
/// thread; serial below `grain` items per thread so small ops pay no
/// threading cost. An exception thrown by f is caught inside the region and
/// rethrown after it (throwing out of an OpenMP region would terminate).
template <class F>
void parallel_for(std::size_t n, F&& f, std::size_t grain = kGrainSize) {
  const std::size_t wanted = thread_count(n, grain);
  if (wanted <= 1) {
    if (n) f(std::size_t{0}, n);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
#pragma omp parallel num_threads(static_cast <int>(wanted))
  {
    // The runtime may grant fewer threads than asked: split by what we got.
    const auto threads = static_cast<std::size_t>(omp_get_num_threads());
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t chunk = (n + threads - 1) / threads;
    const std::size_t begin = std::min(n, t * chunk);
    const std::size_t end = std::min(n, begin + chunk);
    if (begin < end) {
      try {
        f(begin, end);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace burn::flex
