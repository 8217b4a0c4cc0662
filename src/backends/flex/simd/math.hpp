// Vectorised transcendental functions for contiguous f32 / f64 runs, with
// the instruction set chosen at run time (Highway: SSE4, AVX2, AVX-512).
// Results are within a few ULP of std:: and agree on every special value
// (inf, -inf, NaN, zero, out-of-range arguments): Highway's kernels are
// only defined on finite, in-range inputs, so those lanes are patched here.
#pragma once

#include <cstddef>

namespace burn::flex::simd {

/// Erf: within 6 ULP of the correctly rounded erf in f32 (math.cpp); f64
/// runs std::erf.
enum class MathFn { Exp, Expm1, Log, Log1p, Tanh, Erf };

/// out[i] = f(in[i]) for i < n; `out` may equal `in`.
void apply(MathFn f, const float* in, float* out, std::size_t n);
void apply(MathFn f, const double* in, double* out, std::size_t n);

}  // namespace burn::flex::simd
