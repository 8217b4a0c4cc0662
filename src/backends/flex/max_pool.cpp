// Max pooling with PyTorch's semantics: padding is never selected, a value
// wins when greater than the current maximum or NaN (so NaN propagates),
// and indices are flat positions in the input channel's spatial volume.
// One loop for every dtype: oneDNN's max pooling neither reports PyTorch
// indices nor promises NaN propagation, and the op is memory-bound anyway.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include "backends/flex/blocked_layout.hpp"
#include "backends/flex/element.hpp"
#include "backends/flex/parallel.hpp"
#include "backends/flex/simd/pool_2x2.hpp"
#include "backends/flex/window.hpp"

namespace burn::flex {
namespace {

using host::CpuTensor;

template <class T>
void max_pool(const CpuTensor& x, CpuTensor& y, std::int64_t* indices, const dnn::Window3& w) {
  using C = compute_t<T>;
  constexpr bool kFloat = !std::is_integral_v<T>;
  // An empty window (not produced by valid shapes) keeps this value and its first position.
  const C lowest = kFloat ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
  const dnn::AxisWindows wd = dnn::axis_windows(w, 0), wh = dnn::axis_windows(w, 1), ww = dnn::axis_windows(w, 2);
  const std::size_t planes = x.shape[0] * x.shape[1], in_vol = w.in_volume(), out_vol = w.out_volume();
  const std::size_t rows = planes * w.out[0] * w.out[1];
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  const std::size_t dd = w.d[0], dh = w.d[1], dw = w.d[2];
  parallel_for(
      rows,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t row = begin; row < end; ++row) {
          const std::size_t oh = row % w.out[1], od = (row / w.out[1]) % w.out[0], plane = row / (w.out[0] * w.out[1]);
          const T* xp = src + plane * in_vol;
          const std::size_t out_at = plane * out_vol + (od * w.out[1] + oh) * w.out[2];
          const std::size_t d_lo = wd.first[od], d_hi = wd.end[od], h_lo = wh.first[oh], h_hi = wh.end[oh];
          // Visits the window's input positions in row-major order; f returns false to stop.
          auto scan = [&](std::size_t w_lo, std::size_t w_hi, auto&& f) {
            for (std::size_t id = d_lo; id < d_hi; id += dd)
              for (std::size_t ih = h_lo; ih < h_hi; ih += dh) {
                const std::size_t base = (id * w.in[1] + ih) * w.in[2];
                for (std::size_t iw = w_lo; iw < w_hi; iw += dw)
                  if (!f(base + iw, static_cast<C>(xp[base + iw]))) return;
              }
          };
          for (std::size_t ow = 0; ow < w.out[2]; ++ow) {
            const std::size_t w_lo = ww.first[ow], w_hi = ww.end[ow];
            // First pass without data-dependent branches (random data would
            // mispredict them): the maximum and whether a NaN was seen.
            C best = lowest;
            bool nan = false;
            scan(w_lo, w_hi, [&](std::size_t, C v) {
              best = v > best ? v : best;
              if constexpr (kFloat) nan |= v != v;
              return true;
            });
            if (nan) best = std::numeric_limits<C>::quiet_NaN();
            std::size_t best_at = (d_lo * w.in[1] + h_lo) * w.in[2] + w_lo;
            if (indices) {
              // PyTorch's rule picks the first maximum, or the last NaN when
              // there is one (every NaN replaces the current winner).
              if (nan) {
                scan(w_lo, w_hi, [&](std::size_t at, C v) {
                  if (v != v) best_at = at;
                  return true;
                });
              } else {
                scan(w_lo, w_hi, [&](std::size_t at, C v) {
                  if (v != best) return true;
                  best_at = at;
                  return false;
                });
              }
            }
            dst[out_at + ow] = convert_element<T>(best);
            if (indices) indices[out_at + ow] = static_cast<std::int64_t>(best_at);
          }
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, w.out[2] * w.k_volume())));
}

// The common case — f32 / f64, at most two spatial axes, no dilation — as a
// single branch-free pass: each output row keeps a running maximum (and its
// position) and every kernel tap updates a contiguous range of it, which
// vectorises. The update rule is the generic loop's: strictly greater wins
// (first maximum), a NaN always wins (the last NaN).
// One tap over output columns [lo, hi): column ow reads x[ow * stride].
// kExact applies the full rule (a NaN always wins); the fast form is a plain
// maximum (one maxss / blend, no branch for random data to mispredict) that
// only reports whether it saw a NaN, so the caller can redo that row exactly.
template <class T, bool kIndices, bool kExact>
inline bool update_row(const T* x, std::int64_t stride, std::size_t lo, std::size_t hi, std::int64_t at0, T* best,
                       std::int64_t* at) {
  bool nan = false;
  for (std::size_t ow = lo; ow < hi; ++ow) {
    const std::int64_t off = static_cast<std::int64_t>(ow) * stride;
    const T v = x[off];
    const T b = best[ow];
    bool take = v > b;
    if constexpr (kExact) take = take || v != v;
    else nan |= v != v;
    if constexpr (kIndices) {  // an integer blend: compilers keep it branch-free
      const std::int64_t m = -static_cast<std::int64_t>(take);
      at[ow] = ((at0 + off) & m) | (at[ow] & ~m);
    }
    best[ow] = take ? v : b;
  }
  return nan;
}

template <class T>
void max_pool_rows(const CpuTensor& x, CpuTensor& y, std::int64_t* indices, const dnn::Window3& w) {
  const std::size_t planes = x.shape[0] * x.shape[1];
  const std::size_t H = w.in[1], W = w.in[2], OH = w.out[1], OW = w.out[2];
  const auto sh = static_cast<std::int64_t>(w.s[1]), ph = static_cast<std::int64_t>(w.p[1]);
  const auto sw = static_cast<std::int64_t>(w.s[2]), pw = static_cast<std::int64_t>(w.p[2]);
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  parallel_for(
      planes * OH,
      [&](std::size_t begin, std::size_t end) {
        std::vector<T> best(OW);
        std::vector<std::int64_t> at(OW);
        for (std::size_t row = begin; row < end; ++row) {
          const std::size_t plane = row / OH, oh = row % OH;
          const T* xp = src + plane * H * W;
          const std::int64_t h0 = static_cast<std::int64_t>(oh) * sh - ph;
          const std::int64_t h_first = std::max<std::int64_t>(h0, 0);
          // Runs every tap over this row, fast or exact; returns whether a NaN was seen.
          auto pass = [&]<bool kExact>() {
            for (std::size_t ow = 0; ow < OW; ++ow) {
              best[ow] = -std::numeric_limits<T>::infinity();
              at[ow] = h_first * static_cast<std::int64_t>(W) +
                       std::max<std::int64_t>(static_cast<std::int64_t>(ow) * sw - pw, 0);
            }
            bool nan = false;
            for (std::size_t kh = 0; kh < w.k[1]; ++kh) {
              const std::int64_t ih = h0 + static_cast<std::int64_t>(kh);
              if (ih < 0 || ih >= static_cast<std::int64_t>(H)) continue;
              const T* xr = xp + ih * static_cast<std::int64_t>(W);
              const std::int64_t row_at = ih * static_cast<std::int64_t>(W);
              for (std::size_t kw = 0; kw < w.k[2]; ++kw) {
                const std::int64_t first = static_cast<std::int64_t>(kw) - pw;
                const auto [lo, hi] = dnn::valid_range(first, w.s[2], W, OW);
                nan |=
                    indices
                        ? update_row<T, true, kExact>(xr + first, sw, lo, hi, row_at + first, best.data(), at.data())
                        : update_row<T, false, kExact>(xr + first, sw, lo, hi, row_at + first, best.data(), at.data());
              }
            }
            return nan;
          };
          if (pass.template operator()<false>()) pass.template operator()<true>();
          std::copy(best.begin(), best.end(), dst + row * OW);
          if (indices) std::copy(at.begin(), at.end(), indices + row * OW);
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, OW * w.k_volume())));
}

// The most common pool — 2x2 windows, stride 2, no padding or dilation —
// as one straight pass per output row: each output reads its four inputs
// once, in row-major order, under the same rule (strictly greater wins, a
// NaN always wins), which vectorises over the row. The per-tap loops of
// max_pool_rows cost several times more on such small windows.
bool fits_2x2(const dnn::Window3& w, DType dtype) {
  return (dtype == DType::F32 || dtype == DType::F64) && w.in[0] == 1 && w.k[1] == 2 && w.k[2] == 2 && w.s[1] == 2 &&
         w.s[2] == 2 && w.p[1] == 0 && w.p[2] == 0 && w.d[1] == 1 && w.d[2] == 1 && 2 * w.out[1] <= w.in[1] &&
         2 * w.out[2] <= w.in[2];  // no window hangs over the edge (ceil mode)
}

// One output row, fast: strictly greater wins (the first maximum) with no
// NaN rule, and whether a NaN was seen, for the caller to redo the row
// exactly. __restrict and the int NaN flag let GCC vectorise the
// stride-2 loads (it does not with possibly aliasing pointers or a bool flag).
// std::max(best, v) is `v > best ? v : best` except for a NaN best, and a
// row with a NaN is redone exactly anyway.
template <class T, bool kIndices>
BURN_FLEX_ROW_CLONES bool pool_2x2_row(const T* __restrict r0, const T* __restrict r1, T* __restrict out,
                                       std::int64_t* __restrict at, std::size_t ow_count, std::int64_t at0,
                                       std::int64_t width) {
  int nan = 0;
  for (std::size_t ow = 0; ow < ow_count; ++ow) {
    const auto c = static_cast<std::int64_t>(2 * ow);
    const T a = r0[c], b = r0[c + 1], d = r1[c], e = r1[c + 1];
    T best = a;
    std::int64_t pos = at0 + c;
    // Integer blends and std::max, not one shared condition: GCC turns a
    // shared `t ? :` into branches in the scalar remainder of short rows.
    auto step = [&](T v, std::int64_t p) {
      if constexpr (kIndices) {
        const std::int64_t m = -static_cast<std::int64_t>(v > best);
        pos = (p & m) | (pos & ~m);
      }
      best = std::max(best, v);
    };
    step(b, at0 + c + 1);
    step(d, at0 + width + c);
    step(e, at0 + width + c + 1);
    nan |= static_cast<int>(a != a) | static_cast<int>(b != b) | static_cast<int>(d != d) | static_cast<int>(e != e);
    out[ow] = best;
    if constexpr (kIndices) at[ow] = pos;
  }
  return nan != 0;
}

template <class T, bool kIndices>
void max_pool_2x2(const CpuTensor& x, CpuTensor& y, std::int64_t* indices, const dnn::Window3& w) {
  const std::size_t H = w.in[1], W = w.in[2], OH = w.out[1], OW = w.out[2];
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  parallel_for(
      x.shape[0] * x.shape[1] * OH,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t row = begin; row < end; ++row) {
          const std::size_t plane = row / OH, oh = row % OH;
          const T* r0 = src + plane * H * W + 2 * oh * W;
          const auto at0 = static_cast<std::int64_t>(2 * oh * W), width = static_cast<std::int64_t>(W);
          std::int64_t* at = kIndices ? indices + row * OW : nullptr;
          if (pool_2x2_row<T, kIndices>(r0, r0 + W, dst + row * OW, at, OW, at0, width))
            simd::pool_2x2_row_exact<T>(r0, r0 + W, dst + row * OW, at, OW, at0, width);
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, 4 * OW)));
}

template <class T>
void max_pool_2x2(const CpuTensor& x, CpuTensor& y, std::int64_t* indices, const dnn::Window3& w) {
  if constexpr (std::is_same_v<T, float>) {
    // Whole vectors of output columns (simd/pool_2x2.hpp): the loop above
    // runs rows of 14 or 7 outputs (a small CNN's) one output at a time.
    const std::size_t OH = w.out[1];
    const simd::Pool2x2Shape shape{w.in[1], w.in[2], OH, w.out[2]};
    if (w.in_volume() < (std::size_t(1) << 31)) {
      parallel_for(
          x.shape[0] * x.shape[1] * OH,
          [&](std::size_t begin, std::size_t end) {
            simd::pool_2x2_rows(x.data<float>(), y.data<float>(), indices, shape, begin, end);
          },
          std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, 4 * w.out[2])));
      return;
    }
  }
  if (indices) max_pool_2x2<T, true>(x, y, indices, w);
  else max_pool_2x2<T, false>(x, y, indices, w);
}

bool fits_rows(const dnn::Window3& w, DType dtype) {
  return (dtype == DType::F32 || dtype == DType::F64) && w.k[0] == 1 && w.in[0] == 1 && w.d[1] == 1 && w.d[2] == 1;
}

}  // namespace

Result kernel(const Context& ctx, const ir::MaxPool& op, Inputs in, Outputs out) {
  const std::string_view name = ir::op_name(ir::Op(op));
  if (auto y = dnn::max_pool_blocked(ctx, op, host::as_cpu(in[0].primitive), out[0])) return {y};
  // Row-major from here (host::contiguous makes a blocked input plain).
  auto x = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[0].primitive));
  auto y = ctx.output(out[0]);
  const dnn::Window3 w = dnn::make_window(name, std::span(x->shape).subspan(2), std::span(y->shape).subspan(2),
                                          op.kernel, op.stride, op.padding, op.dilation);
  Result result{y};
  host::CpuTensorPtr idx;
  if (op.with_indices) {
    const auto max_index = w.in_volume() ? w.in_volume() - 1 : 0;
    visit_dtype(op.index_dtype, [&]<class I>() {
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
        if (static_cast<std::uint64_t>(max_index) > static_cast<std::uint64_t>(std::numeric_limits<I>::max()))
          throw Error(name, fmt::format("index dtype {} cannot hold flat indices up to {}; use i64 or i32",
                                        dtype_name(op.index_dtype), max_index));
      }
    });
    // Indices are computed as i64 and narrowed once when another dtype is asked for.
    idx = ctx.output({out[1].shape, DType::I64});
  }
  std::int64_t* idx_data = idx ? idx->data<std::int64_t>() : nullptr;
  if (y->num_elements() != 0 && fits_2x2(w, x->dtype)) {
    if (x->dtype == DType::F32) max_pool_2x2<float>(*x, *y, idx_data, w);
    else max_pool_2x2<double>(*x, *y, idx_data, w);
  } else if (y->num_elements() != 0 && fits_rows(w, x->dtype)) {
    if (x->dtype == DType::F32) max_pool_rows<float>(*x, *y, idx_data, w);
    else max_pool_rows<double>(*x, *y, idx_data, w);
  } else if (y->num_elements() != 0) {
    visit_numeric_dtype(name, x->dtype, [&]<class T>() { max_pool<T>(*x, *y, idx_data, w); });
  }
  if (!idx) return result;
  if (op.index_dtype == DType::I64) {
    result.push_back(idx);
    return result;
  }
  auto narrow = ctx.output(out[1]);
  const std::int64_t* s = idx->data<std::int64_t>();
  visit_dtype(op.index_dtype, [&]<class I>() {
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
      I* d = narrow->data<I>();
      parallel_for(narrow->num_elements(), [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) d[i] = static_cast<I>(s[i]);
      });
    }
  });
  result.push_back(narrow);
  return result;
}

}  // namespace burn::flex
