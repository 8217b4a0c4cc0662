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

void window_max_f32(const float* const* taps, std::size_t n_taps, std::size_t n, float* out) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto lowest = hn::Set(d, -std::numeric_limits<float>::infinity());
  // A value replaces the running maximum when it is larger or NaN; a NaN
  // maximum is never replaced (no comparison with it is true).
  auto step = [](auto best, auto v) { return hn::IfThenElse(hn::Or(hn::Gt(v, best), hn::IsNaN(v)), v, best); };
  std::size_t c = 0;
  for (; c + lanes <= n; c += lanes) {
    auto best = lowest;
    for (std::size_t t = 0; t < n_taps; ++t) best = step(best, hn::LoadU(d, taps[t] + c));
    hn::StoreU(best, d, out + c);
  }
  // The channels past the last whole vector, one at a time (a partial
  // load could read past the end of the input on targets without masked
  // loads).
  for (; c < n; ++c) {
    float best = -std::numeric_limits<float>::infinity();
    for (std::size_t t = 0; t < n_taps; ++t) {
      const float v = taps[t][c];
      if (v > best || v != v) best = v;
    }
    out[c] = best;
  }
}

}  // namespace burn::flex::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace burn::flex::simd {

HWY_EXPORT(window_max_f32);

void window_max(const float* const* taps, std::size_t n_taps, std::size_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(window_max_f32)(taps, n_taps, n, out);
}

}  // namespace burn::flex::simd
#endif
