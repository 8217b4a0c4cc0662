// Compiled once per instruction set by Highway's foreach_target; the
// dispatch picks the best one the CPU supports on first use.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/flex/simd/window_max.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <limits>

#include "backends/flex/simd/window_max.hpp"

HWY_BEFORE_NAMESPACE();
namespace burn::flex::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void window_max_row_f32(const PoolRow& row) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto lowest = hn::Set(d, -std::numeric_limits<float>::infinity());
  // A value replaces the running maximum when it is larger or NaN; a NaN
  // maximum is never replaced (no comparison with it is true).
  auto step = [](auto best, auto v) { return hn::IfThenElse(hn::Or(hn::Gt(v, best), hn::IsNaN(v)), v, best); };
  for (std::size_t ow = 0; ow < row.n_out; ++ow) {
    const std::size_t from = row.first[ow] * row.in_pixel, to = row.end[ow] * row.in_pixel,
                      by = row.step * row.in_pixel;
    float* out = row.out + ow * row.out_pixel;
    std::size_t c = 0;
    for (; c + lanes <= row.n; c += lanes) {
      auto best = lowest;
      for (std::size_t r = 0; r < row.n_rows; ++r) {
        const float* in = row.rows[r] + c;
        for (std::size_t i = from; i < to; i += by) best = step(best, hn::LoadU(d, in + i));
      }
      hn::StoreU(best, d, out + c);
    }
    // The channels past the last whole vector, one at a time (a partial
    // load could read past the end of the input on targets without masked
    // loads).
    for (; c < row.n; ++c) {
      float best = -std::numeric_limits<float>::infinity();
      for (std::size_t r = 0; r < row.n_rows; ++r)
        for (std::size_t i = from; i < to; i += by) {
          const float v = row.rows[r][i + c];
          if (v > best || v != v) best = v;
        }
      out[c] = best;
    }
  }
}

}  // namespace burn::flex::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace burn::flex::simd {

HWY_EXPORT(window_max_row_f32);

void window_max_row(const PoolRow& row) { HWY_DYNAMIC_DISPATCH(window_max_row_f32)(row); }

}  // namespace burn::flex::simd
#endif
