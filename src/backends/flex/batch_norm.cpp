// Batch normalisation with the batch's statistics (training), a channel at a
// time: the channel's values are N lines of L (x as [N, C, L]), and for each
// channel the mean and the biased variance are pairwise sums (the variance
// of the deviations from the mean, not E[x^2] - mean^2, which cancels
// badly), then one pass writes (x - mean) * rstd * weight + bias. A
// channel's lines are read from memory once; its second and third passes
// find them in cache (a channel of the Fashion-MNIST CNN at batch 64 is 200
// KiB, one of ResNet's first layers 800 KiB). Channels split across flex's
// threads.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/flex/kernels.hpp"
#include "backends/flex/line_folds.hpp"
#include "backends/flex/module_kernels.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::flex {
namespace {

using host::CpuTensor;

// y = (x - mean) * scale + bias along one line, scale = weight * rstd: the
// composite's order of operations.
template <class T, class C>
BURN_FLEX_ROW_CLONES void normalize_line(const T* x, T* y, std::int64_t stride, std::size_t n, C mean, C scale,
                                         C bias) {
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::int64_t>(i) * stride;
    y[k] = store<T>((load(x[k]) - mean) * scale + bias);
  }
}

/// x as [N, C, L] (row-major): y, and per channel the mean and biased
/// variance.
template <class T>
void batch_norm_channels(const CpuTensor& x, const CpuTensor& w, const CpuTensor& b, const CpuTensor& y,
                         const CpuTensor& mean_out, const CpuTensor& var_out, double epsilon) {
  using C = compute_t<T>;
  const std::size_t n = x.shape[0], c = x.shape[1], l = x.num_elements() / (n * c);
  const auto count = static_cast<double>(n * l);
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  // With one value per line (x of rank 2) a channel is one strided line of
  // N values instead of N lines of one.
  const bool strided = l == 1;
  const std::size_t lines = strided ? 1 : n, length = strided ? n : l;
  const std::int64_t step = strided ? static_cast<std::int64_t>(c) : 1;
  auto line = [&](std::size_t ch, std::size_t i) { return (i * c + ch) * l; };
  parallel_for(
      c,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t ch = begin; ch < end; ++ch) {
          double sum = 0;
          for (std::size_t i = 0; i < lines; ++i)
            sum += static_cast<double>(reduce_engine::pairwise_sum<T, C>(src + line(ch, i), step, length));
          const C mean = static_cast<C>(sum / count);
          double squares = 0;
          for (std::size_t i = 0; i < lines; ++i)
            squares += static_cast<double>(reduce_engine::pairwise_sum<T, C>(src + line(ch, i), step, length,
                                                                             reduce_engine::SquaredDeviation<C>{mean}));
          const C var = static_cast<C>(squares / count);
          const C scale = load(w.data<T>()[ch]) * (C(1) / std::sqrt(var + static_cast<C>(epsilon)));
          const C bias = load(b.data<T>()[ch]);
          for (std::size_t i = 0; i < lines; ++i)
            normalize_line<T, C>(src + line(ch, i), dst + line(ch, i), step, length, mean, scale, bias);
          mean_out.data<T>()[ch] = store<T>(mean);
          var_out.data<T>()[ch] = store<T>(var);
        }
      },
      std::max<std::size_t>(1, kGrainSize / (n * l)));
}

}  // namespace

Result kernel(const Context& ctx, const ir::BatchNorm& op, Inputs in, Outputs out) {
  const auto x = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[0].primitive));
  const auto w = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[1].primitive));
  const auto b = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[2].primitive));
  auto y = ctx.output(out[0]);
  auto mean = ctx.output(out[1]);
  auto var = ctx.output(out[2]);
  if (y->num_elements() == 0) {  // the statistics of nothing
    visit_float_dtype("batch_norm", x->dtype, [&]<class T>() {
      const T nan = store<T>(std::numeric_limits<compute_t<T>>::quiet_NaN());
      for (const CpuTensor* t : {mean.get(), var.get()}) {
        T* p = t->template data<T>();
        std::fill(p, p + t->num_elements(), nan);
      }
    });
    return {y, mean, var};
  }
  visit_float_dtype("batch_norm", x->dtype,
                    [&]<class T>() { batch_norm_channels<T>(*x, *w, *b, *y, *mean, *var, op.epsilon); });
  return {y, mean, var};
}

}  // namespace burn::flex
