// Backward of 2-D interpolation. Every mode is separable and linear in x:
// y = A_h X A_w^T per plane, with A [out, in] holding each output position's
// taps along one axis. So dx = A_h^T G A_w, with A built on the host using the
// forward's source-coordinate and weight rules (PyTorch's nearest, bilinear
// and bicubic with A = -0.75 and clamped borders).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "autodiff/rules/module_util.hpp"

namespace burn::autodiff {
namespace {

using module_rules::AxisMap;

// The continuous source position of output `o` (PyTorch's
// area_pixel_compute_source_index): corner-aligned, or half-pixel centres
// where bilinear clamps a negative position to 0 and bicubic keeps it (its
// taps are clamped instead).
double source_position(std::size_t o, std::size_t in, std::size_t out, bool align_corners, bool cubic) {
  const double dst = static_cast<double>(o);
  if (align_corners) return out > 1 ? dst * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  const double src = (dst + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5;
  return cubic ? src : std::max(src, 0.0);
}

// Keys' cubic convolution weight at distance t in [0, 2], A = -0.75.
double cubic_weight(double t) {
  constexpr double A = -0.75;
  if (t <= 1.0) return ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
  return ((A * t - 5.0 * A) * t + 8.0 * A) * t - 4.0 * A;
}

// One axis's interpolation matrix; taps landing on the same (clamped) input
// add up, as the forward's sum over them does.
AxisMap interpolation_matrix(ir::InterpolateMode mode, std::size_t in, std::size_t out, bool align_corners) {
  AxisMap map{out, in, std::vector<double>(out * in, 0.0)};
  const auto last = static_cast<std::int64_t>(in) - 1;
  for (std::size_t o = 0; o < out; ++o) {
    double* row = map.m.data() + o * in;
    switch (mode) {
      case ir::InterpolateMode::Nearest:
        // floor(o * in / out), exact in integers.
        row[std::min(o * in / out, in - 1)] += 1.0;
        break;
      case ir::InterpolateMode::Bilinear: {
        const double src = source_position(o, in, out, align_corners, false);
        const auto lo = std::min(static_cast<std::int64_t>(src), last);  // src >= 0: floor
        const auto hi = std::min(lo + 1, last);
        const double frac = src - static_cast<double>(lo);
        row[lo] += 1.0 - frac;
        row[hi] += frac;
        break;
      }
      case ir::InterpolateMode::Bicubic: {
        const double src = source_position(o, in, out, align_corners, true);
        const double base = std::floor(src);
        const double t = src - base;
        const double w[4] = {cubic_weight(t + 1.0), cubic_weight(t), cubic_weight(1.0 - t), cubic_weight(2.0 - t)};
        for (std::int64_t k = 0; k < 4; ++k) {
          const std::int64_t at = std::clamp<std::int64_t>(static_cast<std::int64_t>(base) - 1 + k, 0, last);
          row[at] += w[k];
        }
        break;
      }
    }
  }
  return map;
}

}  // namespace

SavedValues saved(const ir::Interpolate&) { return kKeepNothing; }
Grads rule(const ir::Interpolate& op, const VjpArgs& a) {
  Grads out(a.inputs.size());
  if (!wants(a, 0)) return out;
  const TensorRef& x = a.inputs[0];
  if (a.cotangents.empty() || !a.cotangents[0] || module_rules::numel(x) == 0) {
    out[0] = zeros_like(x);
    return out;
  }
  const Shape& xs = x->spec.shape;
  const std::vector<AxisMap> maps{interpolation_matrix(op.mode, xs[2], op.output_size[0], op.align_corners),
                                  interpolation_matrix(op.mode, xs[3], op.output_size[1], op.align_corners)};
  out[0] = module_rules::apply_transposed(*a.cotangents[0], maps);
  return out;
}

}  // namespace burn::autodiff
