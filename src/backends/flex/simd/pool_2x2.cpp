// Compiled once per instruction set by Highway's foreach_target; the
// dispatch picks the best one the CPU supports on first use.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/flex/simd/pool_2x2.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "backends/flex/simd/pool_2x2.hpp"

HWY_BEFORE_NAMESPACE();
namespace burn::flex::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR
// One lane: a value at a time, by the same rule.
void pool_2x2_rows_f32(const float* x, float* out, std::int64_t* at, const Pool2x2Shape& shape, std::size_t row_begin,
                       std::size_t row_end) {
  const std::size_t in_w = shape.in_w, ow_count = shape.out_w;
  for (std::size_t row = row_begin; row < row_end; ++row) {
    const std::size_t plane = row / shape.out_h, oh = row % shape.out_h;
    const float* r0 = x + plane * shape.in_h * in_w + 2 * oh * in_w;
    pool_2x2_row_exact(r0, r0 + in_w, out + row * ow_count, at ? at + row * ow_count : nullptr, ow_count,
                       static_cast<std::int64_t>(2 * oh * in_w), static_cast<std::int64_t>(in_w));
  }
}
#else
void pool_2x2_rows_f32(const float* x, float* out, std::int64_t* at, const Pool2x2Shape& shape, std::size_t row_begin,
                       std::size_t row_end) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Half<decltype(di)> dh;
  const hn::Rebind<std::int64_t, decltype(dh)> dl;
  const std::size_t lanes = hn::Lanes(d), half = hn::Lanes(dl);
  const std::size_t in_w = shape.in_w, ow_count = shape.out_w;
  const auto width = static_cast<std::int32_t>(in_w);
  // Window value k's offset from the window's corner: 0, 1, in_w, in_w + 1.
  const auto offset_b = hn::Set(di, 1), offset_d = hn::Set(di, width), offset_e = hn::Set(di, width + 1);
  const auto two_iota = hn::ShiftLeft<1>(hn::Iota(di, 0));
  // A partial vector's inputs near the end of x are copied here, so no load
  // reads past it.
  const float* const x_end = x + (row_end + shape.out_h - 1) / shape.out_h * shape.in_h * in_w;
  constexpr std::size_t kTail = std::size_t{2} * HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN float tail0[kTail];
  HWY_ALIGN float tail1[kTail];
  for (std::size_t row = row_begin; row < row_end; ++row) {
    const std::size_t plane = row / shape.out_h, oh = row % shape.out_h;
    const float* r0 = x + plane * shape.in_h * in_w + 2 * oh * in_w;
    const float* r1 = r0 + in_w;
    float* o = out + row * ow_count;
    std::int64_t* a = at ? at + row * ow_count : nullptr;
    const auto corner0 = static_cast<std::int32_t>(2 * oh * in_w);
    for (std::size_t ow = 0; ow < ow_count; ow += lanes) {
      const std::size_t n = std::min(lanes, ow_count - ow);
      const float* p0 = r0 + 2 * ow;
      const float* p1 = r1 + 2 * ow;
      // A partial vector reads past its row into the next (unused lanes);
      // only near the end of the input is it copied out first.
      if (n < lanes && p1 + 2 * lanes > x_end) {
        std::fill(tail0, tail0 + 2 * lanes, 0.0f);
        std::fill(tail1, tail1 + 2 * lanes, 0.0f);
        std::memcpy(tail0, p0, 2 * n * sizeof(float));
        std::memcpy(tail1, p1, 2 * n * sizeof(float));
        p0 = tail0;
        p1 = tail1;
      }
      hn::Vec<decltype(d)> va, vb, vd, ve;
      hn::LoadInterleaved2(d, p0, va, vb);
      hn::LoadInterleaved2(d, p1, vd, ve);
      auto best = va;
      auto pos = hn::Zero(di);
      auto step = [&](hn::Vec<decltype(d)> v, hn::Vec<decltype(di)> offset) {
        const auto take = hn::Or(hn::Gt(v, best), hn::IsNaN(v));
        best = hn::IfThenElse(take, v, best);
        pos = hn::IfThenElse(hn::RebindMask(di, take), offset, pos);
      };
      step(vb, offset_b);
      step(vd, offset_d);
      step(ve, offset_e);
      if (n == lanes) hn::StoreU(best, d, o + ow);
      else hn::BlendedStore(best, hn::FirstN(d, n), d, o + ow);
      if (!a) continue;
      const auto corner = hn::Add(hn::Set(di, corner0 + static_cast<std::int32_t>(2 * ow)), two_iota);
      const auto flat = hn::Add(corner, pos);
      const auto lower = hn::PromoteTo(dl, hn::LowerHalf(dh, flat));
      const auto upper = hn::PromoteTo(dl, hn::UpperHalf(dh, flat));
      if (n == lanes) {
        hn::StoreU(lower, dl, a + ow);
        hn::StoreU(upper, dl, a + ow + half);
      } else {
        hn::BlendedStore(lower, hn::FirstN(dl, std::min(n, half)), dl, a + ow);
        if (n > half) hn::BlendedStore(upper, hn::FirstN(dl, n - half), dl, a + ow + half);
      }
    }
  }
}
#endif

}  // namespace burn::flex::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace burn::flex::simd {

HWY_EXPORT(pool_2x2_rows_f32);

void pool_2x2_rows(const float* x, float* out, std::int64_t* at, const Pool2x2Shape& shape, std::size_t row_begin,
                   std::size_t row_end) {
  HWY_DYNAMIC_DISPATCH(pool_2x2_rows_f32)(x, out, at, shape, row_begin, row_end);
}

}  // namespace burn::flex::simd
#endif
