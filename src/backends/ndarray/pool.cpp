// N-d max, average and adaptive average pooling over the spatial dims of
// [N, C, *spatial], one (n, c) plane at a time, with PyTorch's window rules.
#include <cmath>
#include <limits>
#include <type_traits>

#include <burn/error.hpp>
#include <fmt/format.h>

#include "backends/ndarray/module_util.hpp"

namespace burn::ndarray {
namespace {

using detail::next_index;
using detail::volume;
using Index = std::vector<std::size_t>;

Index spatial(const std::vector<std::size_t>& shape) { return Index(shape.begin() + 2, shape.end()); }

// A window: per dim the positions lo, lo + step, ... below hi (all in range).
struct Window {
  Index lo, hi, step;
};

// Calls f(flat offset in the plane) for every position of a non-empty window.
template <class F>
void for_each_in_window(const Window& w, const Index& extent, F&& f) {
  Index pos = w.lo;
  for (bool more = true; more;) {
    std::size_t off = 0;
    for (std::size_t d = 0; d < extent.size(); ++d) off = off * extent[d] + pos[d];
    f(off);
    more = false;
    for (std::size_t d = pos.size(); d-- > 0 && !more;) {
      pos[d] += w.step[d];
      more = pos[d] < w.hi[d];
      if (!more) pos[d] = w.lo[d];
    }
  }
}

// Calls f(output position, flat output offset) for every output position.
template <class F>
void for_each_output(const Index& out_extent, F&& f) {
  if (volume(out_extent) == 0) return;
  Index o(out_extent.size(), 0);
  std::size_t flat = 0;
  do f(o, flat++);
  while (next_index(o, out_extent));
}

bool is_nan(double v) { return std::isnan(v); }
template <class T>
bool is_nan(T) {
  return false;
}

// Max pooling of one element type (double for floats, the int type itself).
// As PyTorch: the window is clipped to the input, its first position is the
// initial index, and a value wins when greater than the current maximum or
// NaN (so NaN propagates; among equal values the first one is kept).
template <class E>
void max_pool(const ir::MaxPool& op, const std::vector<E>& x, const std::vector<std::size_t>& xs,
              const std::vector<std::size_t>& os, std::vector<E>& values, std::vector<std::int64_t>& indices) {
  const Index in_extent = spatial(xs), out_extent = spatial(os);
  const std::size_t planes = xs[0] * xs[1], in_vol = volume(in_extent), out_vol = volume(out_extent);
  const std::size_t n = in_extent.size();
  values.assign(planes * out_vol, E{});
  indices.assign(planes * out_vol, 0);
  // The padding value: never selected over a real element.
  E lowest = std::numeric_limits<E>::lowest();
  if constexpr (std::is_floating_point_v<E>) lowest = -std::numeric_limits<E>::infinity();
  for_each_output(out_extent, [&](const Index& o, std::size_t o_flat) {
    Window w{Index(n), Index(n), op.dilation};
    for (std::size_t d = 0; d < n; ++d) {
      auto start = static_cast<std::int64_t>(o[d] * op.stride[d]) - static_cast<std::int64_t>(op.padding[d]);
      const auto end = std::min(start + static_cast<std::int64_t>((op.kernel[d] - 1) * op.dilation[d] + 1),
                                static_cast<std::int64_t>(in_extent[d]));
      while (start < 0) start += static_cast<std::int64_t>(op.dilation[d]);
      w.lo[d] = static_cast<std::size_t>(start);
      // An empty window (never produced by valid shapes) keeps the initial index and lowest value.
      w.hi[d] = static_cast<std::size_t>(std::max(end, start));
    }
    std::size_t first = 0;
    bool empty = false;
    for (std::size_t d = 0; d < n; ++d) {
      first = first * in_extent[d] + w.lo[d];
      empty = empty || w.lo[d] >= w.hi[d];
    }
    for (std::size_t p = 0; p < planes; ++p) {
      const E* plane = x.data() + p * in_vol;
      E best = lowest;
      std::size_t best_at = first;
      if (!empty)
        for_each_in_window(w, in_extent, [&](std::size_t off) {
          if (plane[off] > best || is_nan(plane[off])) {
            best = plane[off];
            best_at = off;
          }
        });
      values[p * out_vol + o_flat] = best;
      indices[p * out_vol + o_flat] = static_cast<std::int64_t>(best_at);
    }
  });
}

template <class T>
host::CpuTensorPtr write_ints(const Context& ctx, const ir::TensorSpec& spec, const std::vector<T>& values) {
  auto out = ctx.output(spec);
  T* dst = out->data<T>();
  for (std::size_t i = 0; i < values.size(); ++i) dst[i] = values[i];
  return out;
}

host::CpuTensorPtr write_indices(const Context& ctx, const ir::MaxPool& op, const ir::TensorSpec& spec,
                                 const std::vector<std::int64_t>& indices, std::size_t in_vol) {
  auto out = ctx.output(spec);
  visit_int_dtype(ir::op_name(op), spec.dtype, [&]<class I>() {
    // A narrow index dtype must hold the largest flat index of the plane.
    if (in_vol > 0 &&
        static_cast<std::uint64_t>(in_vol - 1) > static_cast<std::uint64_t>(std::numeric_limits<I>::max()))
      throw Error(ir::op_name(op), fmt::format("index dtype {} cannot hold flat indices up to {}; use i64 or i32",
                                               dtype_name(spec.dtype), in_vol - 1));
    I* dst = out->data<I>();
    for (std::size_t i = 0; i < indices.size(); ++i) dst[i] = static_cast<I>(indices[i]);
  });
  return out;
}

// Average pooling: `window_of(in_extent, o, w)` sets the window of output
// position o in `w` and returns its divisor; 0 (a window with no input
// element) leaves the output 0.
template <class WindowOf>
Result average_pool(const Context& ctx, Inputs in, Outputs out, WindowOf&& window_of) {
  const auto& xs = in[0].spec.shape.dims();
  const auto& os = out[0].shape.dims();
  const auto x = detail::read_doubles(in[0]);
  const Index in_extent = spatial(xs), out_extent = spatial(os);
  const std::size_t planes = xs[0] * xs[1], in_vol = volume(in_extent), out_vol = volume(out_extent);
  const std::size_t n = in_extent.size();
  std::vector<double> y(planes * out_vol, 0.0);
  for_each_output(out_extent, [&](const Index& o, std::size_t o_flat) {
    Window w{Index(n), Index(n), Index(n, 1)};
    const std::size_t divisor = window_of(in_extent, o, w);
    if (divisor == 0) return;
    for (std::size_t p = 0; p < planes; ++p) {
      const double* plane = x.data() + p * in_vol;
      double sum = 0.0;
      for_each_in_window(w, in_extent, [&](std::size_t off) { sum += plane[off]; });
      y[p * out_vol + o_flat] = sum / static_cast<double>(divisor);
    }
  });
  return {detail::write_doubles(ctx, out[0], y)};
}

}  // namespace

Result kernel(const Context& ctx, const ir::MaxPool& op, Inputs in, Outputs out) {
  const auto& t = host::as_cpu(in[0].primitive);
  const auto& xs = t.shape;
  const auto& os = out[0].shape.dims();
  std::vector<std::int64_t> indices;
  Result result;
  if (is_float(t.dtype)) {
    std::vector<double> values;
    max_pool(op, detail::read_doubles(in[0]), xs, os, values, indices);
    result.push_back(detail::write_doubles(ctx, out[0], values));
  } else {
    visit_int_dtype(ir::op_name(op), t.dtype, [&]<class T>() {
      std::vector<T> values;
      max_pool(op, detail::read_as<T, T>(t), xs, os, values, indices);
      result.push_back(write_ints(ctx, out[0], values));
    });
  }
  if (op.with_indices) result.push_back(write_indices(ctx, op, out[1], indices, volume(spatial(xs))));
  return result;
}

// PyTorch's divisor: with count_include_pad the window clipped to the padded
// input (a ceil_mode window hanging past it counts only its padded part),
// otherwise the number of real input elements in the window. A window with no
// real element (possible in ceil_mode) averages to 0.
Result kernel(const Context& ctx, const ir::AvgPool& op, Inputs in, Outputs out) {
  return average_pool(ctx, in, out, [&](const Index& in_extent, const Index& o, Window& w) -> std::size_t {
    std::size_t padded = 1, real = 1;
    for (std::size_t d = 0; d < in_extent.size(); ++d) {
      const auto in_d = static_cast<std::int64_t>(in_extent[d]), pad = static_cast<std::int64_t>(op.padding[d]);
      auto start = static_cast<std::int64_t>(o[d] * op.stride[d]) - pad;
      auto end = std::min(start + static_cast<std::int64_t>(op.kernel[d]), in_d + pad);
      padded *= static_cast<std::size_t>(end - start);
      start = std::max<std::int64_t>(start, 0);
      end = std::min(end, in_d);
      real *= end > start ? static_cast<std::size_t>(end - start) : 0;
      w.lo[d] = static_cast<std::size_t>(start);
      w.hi[d] = static_cast<std::size_t>(std::max(end, start));
    }
    return real == 0 ? 0 : op.count_include_pad ? padded : real;
  });
}

// Output cell i of a dim covers [floor(i * in / out), ceil((i + 1) * in / out)).
Result kernel(const Context& ctx, const ir::AdaptiveAvgPool& op, Inputs in, Outputs out) {
  return average_pool(ctx, in, out, [&](const Index& in_extent, const Index& o, Window& w) {
    std::size_t count = 1;
    for (std::size_t d = 0; d < in_extent.size(); ++d) {
      const std::size_t out_d = op.output_size[d];
      w.lo[d] = o[d] * in_extent[d] / out_d;
      w.hi[d] = ((o[d] + 1) * in_extent[d] + out_d - 1) / out_d;
      count *= w.hi[d] - w.lo[d];
    }
    return count;
  });
}

}  // namespace burn::ndarray
