// Reorders between two layouts of one tensor: oneDNN's reorder, except from
// channels-last (NHWC) to plain (NCHW) f32 activations where burn's
// transpose is measured faster (transpose_wins). oneDNN 2.6 runs that pair
// with its generic `jit:uni` reorder, which on large activations with few
// channels falls to a fifth of the memory bandwidth its other reorders
// reach. Convolutions whose kernel writes channels-last (oneDNN's brgconv)
// pay that reorder for every consumer that needs plain data (batch norm,
// reductions, a slice).
#include <algorithm>

#include "backends/flex/dnnl_engine.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::flex::dnn {
namespace {

/// The layout of a dense f32 activation [N, C, spatial...] as a batch of
/// matrices: plain is [N][C][S], channels-last [N][S][C] (S the product of
/// the spatial dims).
enum class Activation { Plain, ChannelsLast, Other };

struct ActivationShape {
  std::size_t n = 0, c = 0, s = 0;
};

Activation activation_layout(const dnnl::memory::desc& md, ActivationShape& shape) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.data_type != dnnl_f32 || d.format_kind != dnnl_blocked || d.ndims < 3 || d.offset0 != 0 ||
      d.format_desc.blocking.inner_nblks != 0)
    return Activation::Other;
  const int rank = d.ndims;
  for (int i = 0; i < rank; ++i)
    if (d.padded_dims[i] != d.dims[i] || d.padded_offsets[i] != 0 || d.dims[i] <= 0) return Activation::Other;
  const auto* strides = d.format_desc.blocking.strides;
  shape.n = static_cast<std::size_t>(d.dims[0]);
  shape.c = static_cast<std::size_t>(d.dims[1]);
  shape.s = 1;
  for (int i = 2; i < rank; ++i) shape.s *= static_cast<std::size_t>(d.dims[i]);
  // Row-major strides of the spatial dims, times `unit`.
  const auto spatial_dense = [&](dnnl_dim_t unit) {
    dnnl_dim_t expect = unit;
    for (int i = rank - 1; i >= 2; --i) {
      if (d.dims[i] != 1 && strides[i] != expect) return false;
      expect *= d.dims[i];
    }
    return true;
  };
  const auto c = static_cast<dnnl_dim_t>(shape.c), s = static_cast<dnnl_dim_t>(shape.s);
  const bool batch_dense = shape.n == 1 || strides[0] == c * s;
  if (!batch_dense) return Activation::Other;
  if ((shape.c == 1 || strides[1] == s) && spatial_dense(1)) return Activation::Plain;
  if ((shape.c == 1 || strides[1] == 1) && spatial_dense(c)) return Activation::ChannelsLast;
  return Activation::Other;
}

/// dst[b][j][i] = src[b][i][j] for `batch` row-major rows x cols matrices
/// with few columns (channels): each work item takes a strip of 16 columns
/// of one matrix and walks its rows, so the 16 destination rows it writes
/// each fill in order, a cache line at a time.
void transpose_narrow(const float* src, float* dst, std::size_t batch, std::size_t rows, std::size_t cols) {
  constexpr std::size_t kStrip = 16;
  const std::size_t strips = (cols + kStrip - 1) / kStrip;
  parallel_for(
      batch * strips,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t item = begin; item < end; ++item) {
          const std::size_t b = item / strips, c0 = item % strips * kStrip;
          const std::size_t c1 = std::min(cols, c0 + kStrip);
          const float* from = src + b * rows * cols;
          float* to = dst + b * rows * cols;
          for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = c0; c < c1; ++c) to[c * rows + r] = from[r * cols + c];
        }
      },
      std::max<std::size_t>(1, kGrainSize / (kStrip * std::max<std::size_t>(rows, 1))));
}

/// Where transpose_narrow beats oneDNN's reorder from channels-last to
/// plain: large activations with at most 64 channels. Measured on the
/// 2-core Xeon (AVX-512) against oneDNN 2.6, best of 10, 2 threads:
/// [32, 64, 56, 56] 2.1 against 10.1 ms, [64, 32, 28, 28] 0.41 against
/// 0.74 ms; with 128 channels or more ([32, 128, 28, 28], [32, 512, 7, 7])
/// and below a million values ([64, 64, 14, 14]: 0.25 against 0.17 ms)
/// oneDNN's is as fast or faster, and the other direction it always is.
bool transpose_wins(const ActivationShape& a) { return a.c <= 64 && a.n * a.c * a.s >= (std::size_t{1} << 20); }

}  // namespace

void reorder(const dnnl::memory& from, const dnnl::memory& to) {
  ActivationShape a, b;
  const dnnl::memory::desc from_md = from.get_desc(), to_md = to.get_desc();
  if (activation_layout(from_md, a) == Activation::ChannelsLast && activation_layout(to_md, b) == Activation::Plain &&
      a.n == b.n && a.c == b.c && a.s == b.s && from_md.dims() == to_md.dims() && transpose_wins(a)) {
    // Each image's [S][C] matrix becomes [C][S].
    transpose_narrow(static_cast<const float*>(from.get_data_handle()), static_cast<float*>(to.get_data_handle()), a.n,
                     a.s, a.c);
    return;
  }
  execute(dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

}  // namespace burn::flex::dnn
