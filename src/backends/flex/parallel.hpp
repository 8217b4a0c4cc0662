// Intra-op parallelism on the process's one OpenMP pool (shared with oneDNN).
#pragma once

#include <algorithm>
#include <cstddef>

#include <omp.h>

#include "backends/flex/kernels.hpp"

namespace burn::flex {

/// Runs f(begin, end) over [0, n) split across threads; serial below
/// `grain` elements per thread so small ops pay no threading cost.
template <class F>
void parallel_for(std::size_t n, F&& f, std::size_t grain = kGrainSize) {
  const int max_threads = omp_get_max_threads();
  const std::size_t wanted = std::min<std::size_t>(static_cast<std::size_t>(max_threads), n / std::max<std::size_t>(grain, 1));
  if (wanted <= 1 || omp_in_parallel()) {
    if (n) f(std::size_t{0}, n);
    return;
  }
  const int threads = static_cast<int>(wanted);
#pragma omp parallel num_threads(threads)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t chunk = (n + wanted - 1) / wanted;
    const std::size_t begin = std::min(n, t * chunk);
    const std::size_t end = std::min(n, begin + chunk);
    if (begin < end) f(begin, end);
  }
}

}  // namespace burn::flex
