// 2 x 2, stride-2 max pooling of row-major f32 planes (the pooling of a
// small CNN in training, with the flat arg-max indices its backward reads),
// with the instruction set chosen at run time (Highway: SSE4, AVX2,
// AVX-512). A vector of output columns at a time: each lane takes the
// maximum of its window's four values, the two rows' even and odd columns
// deinterleaved on load. Short rows (14 or 7 outputs) are one partial
// vector, where the scalar loop the compiler vectorises only by whole
// vectors ran every output alone.
#pragma once

#include <cstddef>
#include <cstdint>

namespace burn::flex::simd {

/// The shape of one pooling: planes of in_h x in_w inputs and out_h x
/// out_w outputs, out_h <= in_h / 2 and out_w <= in_w / 2 (floor mode,
/// no padding), in_h * in_w < 2^31.
struct Pool2x2Shape {
  std::size_t in_h, in_w, out_h, out_w;
};

/// One output row, a value at a time, under pool_2x2_rows' rule (a later
/// value replaces the running maximum when larger or NaN): out[ow] and at[ow]
/// (at may be null) for the windows whose top-left corner is r0[2 ow], the
/// row below being r1, at0 the flat index of r0[0] within its plane and
/// width the plane's row length. f64, rows the fast loop saw a NaN in, and
/// the one-lane target run it.
template <class T>
void pool_2x2_row_exact(const T* r0, const T* r1, T* out, std::int64_t* at, std::size_t ow_count, std::int64_t at0,
                        std::int64_t width) {
  for (std::size_t ow = 0; ow < ow_count; ++ow) {
    const auto c = static_cast<std::int64_t>(2 * ow);
    T best = r0[c];
    std::int64_t pos = at0 + c;
    auto step = [&](T v, std::int64_t p) {
      if (v > best || v != v) {
        best = v;
        pos = p;
      }
    };
    step(r0[c + 1], at0 + c + 1);
    step(r1[c], at0 + width + c);
    step(r1[c + 1], at0 + width + c + 1);
    out[ow] = best;
    if (at) at[ow] = pos;
  }
}

/// Output rows [row_begin, row_end) of the flattened (plane, output row)
/// range: out[r][ow] is the maximum of the window's x[2 oh][2 ow],
/// x[2 oh][2 ow + 1], x[2 oh + 1][2 ow], x[2 oh + 1][2 ow + 1] in that order,
/// a later value replacing the running maximum when larger or NaN (a NaN
/// wins: the last one). `at`, when not null, gets the flat index of the
/// chosen value within its plane (PyTorch's max_pool2d indices).
void pool_2x2_rows(const float* x, float* out, std::int64_t* at, const Pool2x2Shape& shape, std::size_t row_begin,
                   std::size_t row_end);

}  // namespace burn::flex::simd
