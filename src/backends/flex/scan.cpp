// Inclusive scans (cumsum, cumprod, cummax, cummin) along one dim, on the
// [outer, n, inner] view: lines are independent and run in parallel; with
// inner > 1 a tile of inner elements advances together, row by row.
#include <algorithm>

#include "backends/flex/element.hpp"
#include "backends/flex/lines.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::flex {
namespace {

using ir::CumulativeOp;

constexpr std::size_t kTile = 64;

// Running sums and products of f32 are kept in double: a scan exposes every
// partial result, so the error would otherwise grow with the position.
template <class T>
using scan_t = std::conditional_t<std::is_same_v<T, float>, double, compute_t<T>>;

template <class T, CumulativeOp Op>
inline void step(scan_t<T>& acc, scan_t<T> v) {
  if constexpr (Op == CumulativeOp::Sum)
    acc = add(acc, v);
  else if constexpr (Op == CumulativeOp::Prod)
    acc = mul(acc, v);
  else if (!is_nan(acc) && (is_nan(v) || (Op == CumulativeOp::Max ? v > acc : v < acc)))
    acc = v;  // NaN sticks
}

template <class T, CumulativeOp Op>
void scan(const Lines& v, T* out) {
  const auto* base = reinterpret_cast<const T*>(v.base);
  const auto at = [&](std::size_t o, std::size_t r, std::size_t j) {
    return static_cast<scan_t<T>>(
        load(base[static_cast<std::int64_t>(o) * v.outer_stride + static_cast<std::int64_t>(r) * v.stride +
                  static_cast<std::int64_t>(j) * v.inner_stride]));
  };
  const std::size_t tiles = (v.inner + kTile - 1) / kTile;
  parallel_for(
      v.outer * tiles,
      [&](std::size_t b, std::size_t e) {
        scan_t<T> acc[kTile];
        for (std::size_t t = b; t < e; ++t) {
          const std::size_t o = t / tiles, j0 = (t % tiles) * kTile, jn = std::min(kTile, v.inner - j0);
          T* dst = out + o * v.n * v.inner + j0;
          for (std::size_t r = 0; r < v.n; ++r, dst += v.inner) {
            for (std::size_t j = 0; j < jn; ++j) {
              const scan_t<T> x = at(o, r, j0 + j);
              if (r == 0)
                acc[j] = x;
              else
                step<T, Op>(acc[j], x);
              dst[j] = store<T>(static_cast<compute_t<T>>(acc[j]));
            }
          }
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, v.n * std::min(kTile, v.inner))));
}

}  // namespace

Result kernel(const Context& ctx, const ir::Cumulative& op, Inputs in, Outputs out) {
  const auto x = cpu::as_cpu_ptr(in[0].primitive);
  cpu::CpuTensorPtr keep;
  const Lines v = lines_of(ctx, x, op.dim, keep);
  auto y = ctx.output(out[0]);
  if (y->num_elements() == 0) return {y};
  visit_numeric_dtype("cumulative", x->dtype, [&]<class T>() {
    T* dst = y->data<T>();
    switch (op.op) {
      case CumulativeOp::Sum:
        return scan<T, CumulativeOp::Sum>(v, dst);
      case CumulativeOp::Prod:
        return scan<T, CumulativeOp::Prod>(v, dst);
      case CumulativeOp::Max:
        return scan<T, CumulativeOp::Max>(v, dst);
      case CumulativeOp::Min:
        return scan<T, CumulativeOp::Min>(v, dst);
    }
  });
  return {y};
}

}  // namespace burn::flex
