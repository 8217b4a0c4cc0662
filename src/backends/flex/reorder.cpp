// Reorders between two layouts of one tensor: oneDNN's reorder, except from
// channels-last (NHWC) to plain (NCHW) f32 activations where burn's
// transpose is measured faster (transpose_wins). oneDNN 2.6 runs that pair
// with its generic `jit:uni` reorder, which on large activations with few
// channels falls to a fifth of the memory bandwidth its other reorders
// reach. Convolutions whose kernel writes channels-last (oneDNN's brgconv)
// pay that reorder for every consumer that needs plain data (batch norm,
// reductions, a slice).
#include <algorithm>
#include <optional>

#include "backends/flex/dnnl_engine.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::flex::dnn {
namespace {

/// A dense f32 activation [N, C, spatial...] as a batch of N matrices of
/// C x S values (S the product of the spatial dims).
struct ActivationShape {
  std::size_t n = 0, c = 0, s = 0;
};

/// The shape of the activation `from` and `to` describe when `from` is
/// channels-last (n[d][h]wc) and `to` plain (nc[d][h]w), as the other flex
/// layout checks tell formats apart (max_pool_blocked.cpp,
/// layout_elementwise.cpp); nullopt for any other pair.
std::optional<ActivationShape> channels_last_to_plain(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  using tag = dnnl::memory::format_tag;
  constexpr auto f32 = dnnl::memory::data_type::f32;
  const dnnl::memory::dims dims = from.dims();
  if (from.data_type() != f32 || dims.size() < 3 || dims.size() > 5 || to.dims() != dims) return std::nullopt;
  static constexpr tag last[] = {tag::nwc, tag::nhwc, tag::ndhwc};
  static constexpr tag plain[] = {tag::ncw, tag::nchw, tag::ncdhw};
  const std::size_t r = dims.size() - 3;
  if (from != dnnl::memory::desc(dims, f32, last[r]) || to != dnnl::memory::desc(dims, f32, plain[r]))
    return std::nullopt;
  ActivationShape shape{static_cast<std::size_t>(dims[0]), static_cast<std::size_t>(dims[1]), 1};
  for (std::size_t d = 2; d < dims.size(); ++d) shape.s *= static_cast<std::size_t>(dims[d]);
  return shape;
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
  if (const auto a = channels_last_to_plain(from.get_desc(), to.get_desc()); a && transpose_wins(*a)) {
    // Each image's [S][C] matrix becomes [C][S].
    transpose_narrow(static_cast<const float*>(from.get_data_handle()), static_cast<float*>(to.get_data_handle()), a->n,
                     a->s, a->c);
    return;
  }
  execute(dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

}  // namespace burn::flex::dnn
