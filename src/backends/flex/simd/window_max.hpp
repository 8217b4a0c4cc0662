// The maximum over pooling windows of channel-interleaved rows (the inner
// loop of max pooling on channels-last and channel-blocked activations),
// with the instruction set chosen at run time (Highway: SSE4, AVX2,
// AVX-512): one vector of channels per load, where the baseline build
// compares four.
#pragma once

#include <cstddef>

namespace burn::flex::simd {

/// One output row of a max pool whose pixels hold `n` interleaved channels.
/// `rows` are the `n_rows` input rows the row's windows cover (every tap of
/// the depth and height axes); output pixel ow's window takes columns
/// first[ow], first[ow] + step, ... below end[ow] of each. Input pixel iw
/// starts at float iw * in_pixel of its row, output pixel ow at
/// out + ow * out_pixel:
///
///   out[ow * out_pixel + c] = max over r, iw of rows[r][iw * in_pixel + c]
///
/// for ow < n_out and c < n. A NaN wins: the first NaN a channel meets is its
/// result, as in PyTorch's max pooling. An empty window gives -inf.
struct PoolRow {
  const float* const* rows;
  std::size_t n_rows;
  const std::size_t* first;
  const std::size_t* end;
  std::size_t step, in_pixel, n_out, n;
  float* out;
  std::size_t out_pixel;
};

void window_max_row(const PoolRow& row);

}  // namespace burn::flex::simd
