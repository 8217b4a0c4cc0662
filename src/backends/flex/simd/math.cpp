// Compiled once per instruction set by Highway's foreach_target; the
// dispatch picks the best one the CPU supports on first use.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/flex/simd/math.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "backends/flex/simd/math.hpp"

HWY_BEFORE_NAMESPACE();
namespace burn::flex::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class T>
struct Limits {
  // exp(x) overflows above this; Highway's Exp is defined only up to 104 (f32).
  static constexpr T kExpMax = sizeof(T) == 4 ? T(88.72283935546875) : T(709.782712893384);
};

// exp in f32 in about half the instructions of Highway's Exp, which the
// exp of a large tensor is bound by (not by memory). k = round(x / ln 2)
// comes from one multiply-add onto 1.5 * 2^23, which rounds x / ln 2 to an
// integer (to nearest, even on ties) and leaves it in the sum's low mantissa
// bits; e^x = e^r 2^k with r = x - k ln 2 (Cody-Waite, Highway's two-part
// ln 2) and e^r - 1 from Highway's polynomial (e^r within about 1 ULP).
//
// Two forms give the same bits for every input (checked over all 2^32
// floats when this was written; FlexSimdMath tests hold them to it):
// - a vector whose lanes all have |x| < 87 adds k to the exponent field of
//   p = e^r: p 2^k exactly, as e^x lies between 2^-125.6 and 2^125.6 (a
//   normal float);
// - any other vector clamps x to [-104, 89], where the scaling below
//   underflows to 0 and overflows to inf by itself, and scales by 2^k in one
//   VSCALEFPS on AVX-512 and elsewhere in two exact steps, 2^floor(k/2) (the
//   product stays normal) then 2^(k - floor(k/2)), which round once, as
//   VSCALEFPS does. A NaN lane fails the range test and is passed through.
// The first is about 40 % of the second's instructions and has no long
// chain after the polynomial. In flex's loop, on a core of a Zen 3 EPYC:
// 0.32 ns an element, against 0.53 for the second form as it was before
// the multiply-add rounding (the out-of-order window, not the FMA units,
// bounded it).
template <class V>
struct ExpReduced {
  V k_shifted;  // kExpShifter + k
  V k;
  V q;  // e^r - 1
};

// Adding it rounds a float below 2^22 in magnitude to an integer k, which
// the sum's bits hold as kExpShifterBits + k.
constexpr float kExpShifter = 12582912.0f;  // 1.5 * 2^23
constexpr std::int32_t kExpShifterBits = 0x4B400000;

template <class D, class V>
HWY_INLINE ExpReduced<V> exp_reduce(D d, V x) {
  const V shifter = hn::Set(d, kExpShifter);
  const V k_shifted = hn::MulAdd(x, hn::Set(d, 1.44269504088896341f), shifter);
  const V k = hn::Sub(k_shifted, shifter);
  V r = hn::MulAdd(k, hn::Set(d, -0.693145751953125f), x);
  r = hn::MulAdd(k, hn::Set(d, -1.428606765330187045e-6f), r);
  return {k_shifted, k, hn::impl::ExpImpl<float>().ExpPoly(d, r)};
}

// Out of line, so that the short path stays small enough to inline.
template <class D, class V>
HWY_NOINLINE V exp_f32_full_range(D d, V x) {
  const V xc = hn::Min(hn::Max(x, hn::Set(d, -104.0f)), hn::Set(d, 89.0f));
  const auto [k_shifted, k, q] = exp_reduce(d, xc);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const V y{_mm512_scalef_ps(hn::Add(q, hn::Set(d, 1.0f)).raw, k.raw)};
#else
  const hn::RebindToSigned<D> di;
  const auto ki = hn::Sub(hn::BitCast(di, k_shifted), hn::Set(di, kExpShifterBits));  // k
  const auto half = hn::ShiftRight<1>(ki);                                            // floor(k / 2)
  const auto one = hn::Set(di, 127 << 23);
  const V lower = hn::BitCast(d, hn::Add(hn::ShiftLeft<23>(half), one));
  const V upper = hn::BitCast(d, hn::Add(hn::ShiftLeft<23>(hn::Sub(ki, half)), one));
  // (q + 1) 2^floor(k/2) in one rounding: the product is normal, so it
  // rounds as q + 1 does.
  const V y = hn::Mul(hn::MulAdd(q, lower, lower), upper);
#endif
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

template <class D, class V>
HWY_INLINE V exp_f32(D d, V x) {
  if (HWY_LIKELY(hn::AllTrue(d, hn::Lt(hn::Abs(x), hn::Set(d, 87.0f))))) {
    const hn::RebindToSigned<D> di;
    const auto [k_shifted, k, q] = exp_reduce(d, x);
    const V p = hn::Add(q, hn::Set(d, 1.0f));
    // k_shifted's bits are kExpShifterBits + k, and kExpShifterBits << 23
    // is 0 modulo 2^32: shifting them gives k << 23.
    return hn::BitCast(d, hn::Add(hn::BitCast(di, p), hn::ShiftLeft<23>(hn::BitCast(di, k_shifted))));
  }
  return exp_f32_full_range(d, x);
}

template <class D, class V>
HWY_INLINE V exp_checked(D d, V x) {
  using T = hn::TFromD<D>;
  if constexpr (sizeof(T) == 4) {
    return exp_f32(d, x);
  } else {
    const V hi = hn::Set(d, Limits<T>::kExpMax);
    V r = hn::Exp(d, hn::Min(x, hi));  // x < -1000 (and -inf) already give 0
    r = hn::IfThenElse(hn::Gt(x, hi), hn::Set(d, std::numeric_limits<T>::infinity()), r);
    return hn::IfThenElse(hn::IsNaN(x), x, r);
  }
}

template <class D, class V>
V expm1_checked(D d, V x) {
  using T = hn::TFromD<D>;
  const V hi = hn::Set(d, Limits<T>::kExpMax);
  V r = hn::Expm1(d, hn::Min(x, hi));  // very negative x (and -inf) give -1
  r = hn::IfThenElse(hn::Gt(x, hi), hn::Set(d, std::numeric_limits<T>::infinity()), r);
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

// Highway's logs take (0, max] (log1p: [0, max]); other lanes get a safe
// argument and their IEEE result afterwards.
template <bool kPlusOne, class D, class V>
V log_checked(D d, V x) {
  using T = hn::TFromD<D>;
  const V zero = hn::Zero(d), one = hn::Set(d, T(1));
  const V inf = hn::Set(d, std::numeric_limits<T>::infinity());
  const V arg = kPlusOne ? hn::Add(x, one) : x;  // where the log's pole and domain sit
  const auto ok = hn::And(hn::Gt(arg, zero), hn::Lt(x, inf));
  V r = kPlusOne ? hn::Log1p(d, hn::IfThenElse(ok, x, zero)) : hn::Log(d, hn::IfThenElse(ok, x, one));
  r = hn::IfThenElse(hn::Eq(arg, zero), hn::Neg(inf), r);
  r = hn::IfThenElse(hn::Lt(arg, zero), hn::Set(d, std::numeric_limits<T>::quiet_NaN()), r);
  r = hn::IfThenElse(hn::Eq(x, inf), inf, r);
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

template <class D, class V>
V tanh_checked(D d, V x) {
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Tanh(d, x));  // defined on all finite x; ±inf -> ±1
}

// erf in f32: x P(x^2) / Q(x^2) with |x| clamped to 3.92, beyond which erf
// rounds to 1 in f32 (its distance from 1 is below half an ULP there). P
// and Q, of degree 5 in x^2 with positive coefficients (no cancellation),
// were fitted for the smallest largest relative error on [0, 3.92]
// (1.9e-8, a third of an f32 ULP; iteratively reweighted least squares
// against mpmath's erf). With f32 rounding the result is within 6 ULP of
// the correctly rounded erf, 2 or fewer for 99 % of inputs (every 3e-6 on
// [-7, 7]; the worst are near |x| = 3.8, where erf is within 1e-6 of 1);
// +-0, +-inf (+-1) and NaN are exact. Two short independent chains and a
// division: the form it replaced (1 - erfc with erfc through exp, a Taylor
// series below 0.5; within 3 ULP) was bound by one long chain of dependent
// multiply-adds and took five times as long (1M values on one core of an
// AMD EPYC, Zen 3: 0.44 against 2.17 ms).
// The polynomial with coefficients c (highest power first) at t, by
// Horner's rule: one multiply-add per coefficient.
template <class D, class V, std::size_t N>
V horner(D d, V t, const float (&c)[N]) {
  V r = hn::Set(d, c[0]);
  for (std::size_t i = 1; i < N; ++i) r = hn::MulAdd(r, t, hn::Set(d, c[i]));
  return r;
}

template <class D, class V>
V erf_f32(D d, V x) {
  static constexpr float kP[] = {2.0526798224229648e-6f, 2.847331775658428e-4f,  3.7559827651281797e-3f,
                                 5.271877314121915e-2f,  1.9017279623394903e-1f, 1.1283791472999671f};
  static constexpr float kQ[] = {3.8110942514435475e-5f, 1.1603346410827397e-3f, 1.4949705522828082e-2f,
                                 1.140134278715287e-1f,  5.018690207936755e-1f,  1.0f};
  const V z = hn::Min(hn::Abs(x), hn::Set(d, 3.92f));
  const V t = hn::Mul(z, z);
  const V r = hn::Min(hn::Mul(z, hn::Div(horner(d, t, kP), horner(d, t, kQ))), hn::Set(d, 1.0f));
  return hn::IfThenElse(hn::IsNaN(x), x, hn::CopySign(r, x));
}

// How far ahead of the loop its input and output are prefetched. These
// loops spend tens of instructions per vector, and on a large tensor the
// hardware prefetcher alone left them waiting on memory: the exp of 16M
// floats in place took twice as long without (8.0 against 4.0 ms on two
// threads of an AVX-512 Xeon).
constexpr std::size_t kPrefetchBytes = 4096;

template <class T>
void apply_impl(MathFn f, const T* in, T* out, std::size_t n) {
  const hn::ScalableTag<T> d;
  const std::size_t lanes = hn::Lanes(d);
  constexpr std::size_t kAhead = kPrefetchBytes / sizeof(T);
  auto run = [&](auto&& op) {
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
      const std::size_t ahead = std::min(i + kAhead, n - 1);  // stays inside the buffers
      hwy::Prefetch(in + ahead);
      if (out != in) hwy::Prefetch(out + ahead);
      hn::StoreU(op(d, hn::LoadU(d, in + i)), d, out + i);
    }
    if (i < n) {  // the tail through a padded buffer, so no lane reads past the end
      HWY_ALIGN T buf[hn::MaxLanes(d)] = {};
      for (std::size_t k = 0; i + k < n; ++k) buf[k] = in[i + k];
      hn::Store(op(d, hn::Load(d, buf)), d, buf);
      for (std::size_t k = 0; i + k < n; ++k) out[i + k] = buf[k];
    }
  };
  switch (f) {
    case MathFn::Exp: return run([](auto dd, auto v) { return exp_checked(dd, v); });
    case MathFn::Expm1: return run([](auto dd, auto v) { return expm1_checked(dd, v); });
    case MathFn::Log: return run([](auto dd, auto v) { return log_checked<false>(dd, v); });
    case MathFn::Log1p: return run([](auto dd, auto v) { return log_checked<true>(dd, v); });
    case MathFn::Tanh: return run([](auto dd, auto v) { return tanh_checked(dd, v); });
    case MathFn::Erf:
      if constexpr (sizeof(T) == 4) {
        return run([](auto dd, auto v) { return erf_f32(dd, v); });
      } else {
        for (std::size_t i = 0; i < n; ++i) out[i] = std::erf(in[i]);  // f64 keeps std::erf
        return;
      }
  }
}

void apply_f32(MathFn f, const float* in, float* out, std::size_t n) { apply_impl(f, in, out, n); }
void apply_f64(MathFn f, const double* in, double* out, std::size_t n) { apply_impl(f, in, out, n); }

}  // namespace burn::flex::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace burn::flex::simd {

HWY_EXPORT(apply_f32);
HWY_EXPORT(apply_f64);

void apply(MathFn f, const float* in, float* out, std::size_t n) { HWY_DYNAMIC_DISPATCH(apply_f32)(f, in, out, n); }
void apply(MathFn f, const double* in, double* out, std::size_t n) { HWY_DYNAMIC_DISPATCH(apply_f64)(f, in, out, n); }

}  // namespace burn::flex::simd
#endif
