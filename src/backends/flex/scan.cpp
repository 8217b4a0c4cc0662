// Inclusive scans (cumsum, cumprod, cummax, cummin) along one dim, on the
// [outer, n, inner] view: lines are independent and run in parallel; with
// inner > 1 a tile of inner elements advances together, row by row; with
// inner == 1 a few whole lines advance together, a run of steps each. The
// loops are compiled per ISA (BURN_FLEX_ROW_CLONES); every line is
// accumulated serially in its own order, so results do not depend on it.
#include <algorithm>

#include "backends/flex/element.hpp"
#include "backends/flex/lines.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::flex {
namespace {

using ir::CumulativeOp;

constexpr std::size_t kTile = 64;  // inner elements scanned together (inner > 1)
constexpr std::size_t kLines = 8;  // whole lines scanned together (inner == 1)

// Running sums and products of f32 are kept in double: a scan exposes every
// partial result, so the error would otherwise grow with the position.
template <class T>
using scan_t = std::conditional_t<std::is_same_v<T, float>, double, compute_t<T>>;

// The running value after `acc` takes in v. Max and Min select rather than
// branch, so a tile of them vectorises; a NaN sticks.
template <class T, CumulativeOp Op>
inline scan_t<T> next(scan_t<T> acc, scan_t<T> v) {
  if constexpr (Op == CumulativeOp::Sum) return add(acc, v);
  else if constexpr (Op == CumulativeOp::Prod) return mul(acc, v);
  else return !is_nan(acc) && (is_nan(v) || (Op == CumulativeOp::Max ? v > acc : v < acc)) ? v : acc;
}

// Row by row over a tile of `lanes` inner elements, each a line of its own:
// line j's element r is src[r * src_step + j * src_lane], written to
// dst[r * dst_step + j]. The loop over j vectorises when src_lane is 1.
template <class T, CumulativeOp Op>
BURN_FLEX_ROW_CLONES void scan_tile(const T* src, std::int64_t src_step, std::int64_t src_lane, T* dst,
                                    std::size_t dst_step, std::size_t n, std::size_t lanes) {
  scan_t<T> acc[kTile];
  for (std::size_t r = 0; r < n; ++r, src += src_step, dst += dst_step) {
    const auto put = [&](std::size_t j, scan_t<T> x) {
      acc[j] = r == 0 ? x : next<T, Op>(acc[j], x);
      dst[j] = store<T>(static_cast<compute_t<T>>(acc[j]));
    };
    if (src_lane == 1)
      for (std::size_t j = 0; j < lanes; ++j) put(j, load(src[j]));
    else
      for (std::size_t j = 0; j < lanes; ++j) put(j, load(src[static_cast<std::int64_t>(j) * src_lane]));
  }
}

// `lanes` whole lines of n elements (inner == 1): line j's element r is
// src[j * src_line + r * src_step], written to dst[j * n + r]. One line alone
// is a chain of dependent steps (the CPU waits on each add); taking kRun
// steps of each line in turn gives it independent chains to overlap, and
// each line is still accumulated in its own order.
template <class T, CumulativeOp Op>
BURN_FLEX_ROW_CLONES void scan_lines(const T* src, std::int64_t src_line, std::int64_t src_step, T* dst, std::size_t n,
                                     std::size_t lanes) {
  constexpr std::size_t kRun = 16;  // one 64-byte cache line of f32
  scan_t<T> acc[kLines];
  for (std::size_t j = 0; j < lanes; ++j) {
    acc[j] = load(src[static_cast<std::int64_t>(j) * src_line]);
    dst[j * n] = store<T>(static_cast<compute_t<T>>(acc[j]));
  }
  for (std::size_t r0 = 1; r0 < n; r0 += kRun) {
    const std::size_t r1 = std::min(n, r0 + kRun);
    for (std::size_t j = 0; j < lanes; ++j) {
      const T* s = src + static_cast<std::int64_t>(j) * src_line;
      T* d = dst + j * n;
      scan_t<T> a = acc[j];
      for (std::size_t r = r0; r < r1; ++r) {
        a = next<T, Op>(a, load(s[static_cast<std::int64_t>(r) * src_step]));
        d[r] = store<T>(static_cast<compute_t<T>>(a));
      }
      acc[j] = a;
    }
  }
}

// Scans every line of v into out (row-major [outer, n, inner]).
template <class T, CumulativeOp Op>
void scan(const Lines& v, T* out) {
  const auto* base = reinterpret_cast<const T*>(v.base);
  if (v.inner == 1) {
    const std::size_t groups = (v.outer + kLines - 1) / kLines;
    parallel_for(
        groups,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t g = b; g < e; ++g) {
            const std::size_t o = g * kLines;
            scan_lines<T, Op>(base + static_cast<std::int64_t>(o) * v.outer_stride, v.outer_stride, v.stride,
                              out + o * v.n, v.n, std::min(kLines, v.outer - o));
          }
        },
        std::max<std::size_t>(1, kGrainSize / (v.n * kLines)));
    return;
  }
  const std::size_t tiles = (v.inner + kTile - 1) / kTile;
  parallel_for(
      v.outer * tiles,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t t = b; t < e; ++t) {
          const std::size_t o = t / tiles, j0 = (t % tiles) * kTile;
          scan_tile<T, Op>(
              base + static_cast<std::int64_t>(o) * v.outer_stride + static_cast<std::int64_t>(j0) * v.inner_stride,
              v.stride, v.inner_stride, out + o * v.n * v.inner + j0, v.inner, v.n, std::min(kTile, v.inner - j0));
        }
      },
      std::max<std::size_t>(1, kGrainSize / (v.n * std::min(kTile, v.inner))));
}

}  // namespace

Result kernel(const Context& ctx, const ir::Cumulative& op, Inputs in, Outputs out) {
  const auto x = host::as_cpu_ptr(in[0].primitive);
  host::CpuTensorPtr keep;
  const Lines v = lines_of(ctx, x, op.dim, keep);
  auto y = ctx.output(out[0]);
  if (y->num_elements() == 0) return {y};
  visit_numeric_dtype("cumulative", x->dtype, [&]<class T>() {
    T* dst = y->data<T>();
    switch (op.op) {
      case CumulativeOp::Sum: return scan<T, CumulativeOp::Sum>(v, dst);
      case CumulativeOp::Prod: return scan<T, CumulativeOp::Prod>(v, dst);
      case CumulativeOp::Max: return scan<T, CumulativeOp::Max>(v, dst);
      case CumulativeOp::Min: return scan<T, CumulativeOp::Min>(v, dst);
    }
  });
  return {y};
}

}  // namespace burn::flex
