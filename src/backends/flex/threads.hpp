// The number of threads flex kernels split work across: one process-wide
// value (OpenMP's own thread-count setting is per calling thread, so flex
// keeps its own), initialised from BURN_NUM_THREADS or OpenMP's default.
#pragma once

#include <cstddef>

namespace burn::flex {

std::size_t pool_size();
/// Also sets the calling thread's OpenMP count, which oneDNN follows.
void set_pool_size(std::size_t n);

}  // namespace burn::flex
