// Batched matmul [..., m, k] x [..., k, n] with broadcast batch dims.
// Floats accumulate in double; ints in uint64 so overflow wraps around
// (well defined) exactly as the int type's own arithmetic would.
#include "backends/ndarray/module_util.hpp"

namespace burn::ndarray {
namespace {

// Row-major batch strides (in whole matrices) of a [batch..., r, c] operand,
// 0 on its size-1 dims so they repeat across the output's batch.
std::vector<std::size_t> batch_strides(const std::vector<std::size_t>& shape, std::size_t batch_rank) {
  std::vector<std::size_t> s(batch_rank);
  std::size_t acc = 1;
  for (std::size_t i = batch_rank; i-- > 0;) {
    s[i] = shape[i] == 1 ? 0 : acc;
    acc *= shape[i];
  }
  return s;
}

template <class Acc>
std::vector<Acc> matmul(const std::vector<Acc>& a, const std::vector<std::size_t>& a_shape, const std::vector<Acc>& b,
                        const std::vector<std::size_t>& b_shape, const std::vector<std::size_t>& out_shape) {
  const std::size_t r = out_shape.size();
  const std::size_t m = a_shape[r - 2], k = a_shape[r - 1], n = b_shape[r - 1];
  const std::vector<std::size_t> batch(out_shape.begin(), out_shape.end() - 2);
  std::vector<Acc> out(detail::volume(out_shape), Acc(0));
  if (out.empty()) return out;
  const auto sa = batch_strides(a_shape, r - 2), sb = batch_strides(b_shape, r - 2);
  std::vector<std::size_t> idx(r - 2, 0);
  std::size_t mat = 0;
  do {
    std::size_t ia = 0, ib = 0;
    for (std::size_t d = 0; d + 2 < r; ++d) {
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    const Acc* pa = a.data() + ia * m * k;
    const Acc* pb = b.data() + ib * k * n;
    Acc* po = out.data() + mat * m * n;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        Acc acc(0);
        for (std::size_t p = 0; p < k; ++p) acc += pa[i * k + p] * pb[p * n + j];
        po[i * n + j] = acc;
      }
    ++mat;
  } while (detail::next_index(idx, batch));
  return out;
}

}  // namespace

Result kernel(const Context& ctx, const ir::Matmul&, Inputs in, Outputs out) {
  const auto& a = host::as_cpu(in[0].primitive);
  const auto& b = host::as_cpu(in[1].primitive);
  const auto& out_shape = out[0].shape.dims();
  if (is_float(a.dtype)) {
    const auto values = matmul(detail::read_doubles(in[0]), a.shape, detail::read_doubles(in[1]), b.shape, out_shape);
    return {detail::write_doubles(ctx, out[0], values)};
  }
  auto result = ctx.output(out[0]);
  visit_int_dtype("matmul", a.dtype, [&]<class T>() {
    const auto values =
        matmul(detail::read_as<std::uint64_t, T>(a), a.shape, detail::read_as<std::uint64_t, T>(b), b.shape, out_shape);
    T* dst = result->data<T>();
    // uint64 -> T keeps the low bits: the wrapped-around result in T.
    for (std::size_t i = 0; i < values.size(); ++i) dst[i] = static_cast<T>(values[i]);
  });
  return {result};
}

}  // namespace burn::ndarray
