// Gather, scatter, select and select_assign. Indices (any int dtype) are read
// and bounds-checked once up front, so a bad index raises an error before
// anything is written.
#include <fmt/format.h>

#include "backends/ndarray/kernels.hpp"
#include "backends/ndarray/numeric.hpp"
#include "backends/ndarray/strided.hpp"

namespace burn::ndarray {
namespace {

/// The index tensor's values in row-major order, each checked to lie in [0, size).
std::vector<std::size_t> read_indices(std::string_view op, const host::CpuTensor& indices, std::size_t dim,
                                      std::size_t size) {
  std::vector<std::size_t> out(indices.num_elements());
  visit_int_dtype(op, indices.dtype, [&]<class I>() {
    using Wide = std::conditional_t<std::is_signed_v<I>, std::int64_t, std::uint64_t>;
    for_each_index(indices.shape, [&](std::size_t i, const Index& o) {
      // NOLINTNEXTLINE(bugprone-signed-char-misuse): i8 indices are numbers, not characters
      const auto v = static_cast<Wide>(element_at<I>(indices, o));
      bool negative = false;
      if constexpr (std::is_signed_v<I>) negative = v < 0;
      if (negative || static_cast<std::uint64_t>(v) >= size)
        throw Error(op, fmt::format("index {} is out of bounds for dim {} of size {}", v, dim, size));
      out[i] = static_cast<std::size_t>(v);
    });
  });
  return out;
}

/// dst[dst_index] += src at buffer offset src_off (bool: logical or).
void add_element(const host::CpuTensor& dst, std::size_t dst_index, const host::CpuTensor& src, std::int64_t src_off) {
  visit_dtype(dst.dtype, [&]<class T>() {
    T& d = dst.data<T>()[dst_index];
    const T s = elements<T>(src)[src_off];
    if constexpr (std::is_same_v<T, bool>) d = d || s;
    else d = store<T>(acc_add(load(d), load(s)));
  });
}

/// Writes (or adds) element `src_off` of `src` into element `dst_index` of `dst`.
void put(ir::IndexReduce reduce, const host::CpuTensor& dst, std::size_t dst_index, const host::CpuTensor& src,
         std::int64_t src_off) {
  if (reduce == ir::IndexReduce::Add) add_element(dst, dst_index, src, src_off);
  else copy_element(src, src_off, dst, dst_index);
}

}  // namespace

Result kernel(const Context& ctx, const ir::Gather& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  const auto& indices = host::as_cpu(in[1].primitive);
  const auto ids = read_indices("gather", indices, op.dim, x.shape[op.dim]);
  auto t = ctx.output(out[0]);
  Index src(x.rank(), 0);
  for_each_index(t->shape, [&](std::size_t i, const Index& o) {
    src = o;
    src[op.dim] = ids[i];
    copy_element(x, offset_of(x, src), *t, i);
  });
  return {t};
}

Result kernel(const Context& ctx, const ir::Scatter& op, Inputs in, Outputs) {
  const auto& indices = host::as_cpu(in[1].primitive);
  const auto& values = host::as_cpu(in[2].primitive);
  auto t = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[0].primitive), /*force_copy=*/true);
  const auto ids = read_indices("scatter", indices, op.dim, t->shape[op.dim]);
  Index dst(t->rank(), 0);
  for_each_index(indices.shape, [&](std::size_t i, const Index& o) {
    dst = o;
    dst[op.dim] = ids[i];
    put(op.reduce, *t, flat_index(t->shape, dst), values, offset_of(values, o));
  });
  return {t};
}

Result kernel(const Context& ctx, const ir::Select& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  const auto ids = read_indices("select", host::as_cpu(in[1].primitive), op.dim, x.shape[op.dim]);
  auto t = ctx.output(out[0]);
  Index src(x.rank(), 0);
  for_each_index(t->shape, [&](std::size_t i, const Index& o) {
    src = o;
    src[op.dim] = ids[o[op.dim]];
    copy_element(x, offset_of(x, src), *t, i);
  });
  return {t};
}

Result kernel(const Context& ctx, const ir::SelectAssign& op, Inputs in, Outputs) {
  const auto& values = host::as_cpu(in[2].primitive);
  auto t = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[0].primitive), /*force_copy=*/true);
  const auto ids = read_indices("select_assign", host::as_cpu(in[1].primitive), op.dim, t->shape[op.dim]);
  Index dst(t->rank(), 0);
  for_each_index(values.shape, [&](std::size_t, const Index& o) {
    dst = o;
    dst[op.dim] = ids[o[op.dim]];
    put(op.reduce, *t, flat_index(t->shape, dst), values, offset_of(values, o));
  });
  return {t};
}

}  // namespace burn::ndarray
