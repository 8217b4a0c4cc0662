// The maximum over a pooling window of channel-interleaved rows (the inner
// loop of max pooling on channels-last and channel-blocked activations),
// with the instruction set chosen at run time (Highway: SSE4, AVX2,
// AVX-512): one vector of channels per load, where the baseline build
// compares four.
#pragma once

#include <cstddef>

namespace burn::flex::simd {

/// out[c] = max over t < n_taps of taps[t][c], for c < n. A NaN wins: the
/// first NaN a channel meets is its result, as in PyTorch's max pooling.
/// With no taps every channel is -inf.
void window_max(const float* const* taps, std::size_t n_taps, std::size_t n, float* out);

}  // namespace burn::flex::simd
