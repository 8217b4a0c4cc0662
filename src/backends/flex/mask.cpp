// mask_where and mask_fill: elements are moved, never interpreted, so the
// rows depend only on the element width. Tensor, mask and source broadcast.
#include <array>
#include <cstdint>
#include <cstring>

#include "backends/flex/element.hpp"
#include "backends/flex/rows.hpp"
#include "backends/flex/strided.hpp"

namespace burn::flex {
namespace {

// Selects without a branch: masks such as relu's are close to random, and a
// mispredicted branch per element costs more than the whole memory traffic.
// W is an unsigned integer of the element's width, so the blend vectorises.
// The mask is read as bytes (a bool is stored as 0 or 1): GCC does not
// vectorise the same loop over `const bool*`, which made mask_fill ten times
// slower than a multiply.
template <class W>
inline W select(std::uint8_t take, W yes, W no) {
  const W m = static_cast<W>(W(0) - static_cast<W>(take));
  return static_cast<W>((yes & m) | (no & static_cast<W>(~m)));
}

// ptrs = {out, tensor, mask, source}.
template <class W>
BURN_FLEX_ROW_CLONES int where_row(const void*, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  auto* o = reinterpret_cast<W*>(p[0]);
  const auto* t = reinterpret_cast<const W*>(p[1]);
  const auto* m = reinterpret_cast<const std::uint8_t*>(p[2]);
  const auto* src = reinterpret_cast<const W*>(p[3]);
  const auto len = static_cast<std::int64_t>(n);
  if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1) {
    for (std::int64_t i = 0; i < len; ++i) o[i] = select(m[i], src[i], t[i]);
  } else {
    for (std::int64_t i = 0; i < len; ++i) o[i * s[0]] = select(m[i * s[2]], src[i * s[3]], t[i * s[1]]);
  }
  return 0;
}

// ptrs = {out, tensor, mask}; ctx = the fill value.
template <class W>
BURN_FLEX_ROW_CLONES int fill_row(const void* ctx, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  const W value = *static_cast<const W*>(ctx);
  auto* o = reinterpret_cast<W*>(p[0]);
  const auto* t = reinterpret_cast<const W*>(p[1]);
  const auto* m = reinterpret_cast<const std::uint8_t*>(p[2]);
  const auto len = static_cast<std::int64_t>(n);
  if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
    for (std::int64_t i = 0; i < len; ++i) o[i] = select(m[i], value, t[i]);
  } else {
    for (std::int64_t i = 0; i < len; ++i) o[i * s[0]] = select(m[i * s[2]], value, t[i * s[1]]);
  }
  return 0;
}

}  // namespace

RowFn mask_where_row_fn(DType dtype) {
  return visit_width(dtype, [&]<class W>() -> RowFn { return where_row<W>; });
}
RowFn mask_fill_row_fn(DType dtype) {
  return visit_width(dtype, [&]<class W>() -> RowFn { return fill_row<W>; });
}

std::array<std::byte, 8> scalar_bytes(const Scalar& value, DType dtype) {
  alignas(8) std::array<std::byte, 8> out{};
  visit_dtype(dtype, [&]<class T>() {
    const T v = value.as<T>();
    std::memcpy(out.data(), &v, sizeof(T));
  });
  return out;
}

Result kernel(const Context& ctx, const ir::MaskWhere&, Inputs in, Outputs out) {
  const auto& t = host::as_cpu(in[0].primitive);
  const auto& mask = host::as_cpu(in[1].primitive);
  const auto& source = host::as_cpu(in[2].primitive);
  auto y = ctx.output(out[0]);
  const Operand ops[] = {operand(*y), broadcast_operand(t, y->shape), broadcast_operand(mask, y->shape),
                         broadcast_operand(source, y->shape)};
  for_each_run(y->shape, ops, mask_where_row_fn(t.dtype), nullptr);
  return {y};
}

Result kernel(const Context& ctx, const ir::MaskFill& op, Inputs in, Outputs out) {
  const auto& t = host::as_cpu(in[0].primitive);
  const auto& mask = host::as_cpu(in[1].primitive);
  // In place when the tensor is consumed (relu's backward takes its
  // cotangent): each element is read before the same position is written.
  auto y = ctx.output_reusing(out[0], in, {0});
  // The value in the tensor's element type, as bytes the width-only row copies.
  const auto value = scalar_bytes(op.value, t.dtype);
  const Operand ops[] = {operand(*y), broadcast_operand(t, y->shape), broadcast_operand(mask, y->shape)};
  for_each_run(y->shape, ops, mask_fill_row_fn(t.dtype), value.data());
  return {y};
}

}  // namespace burn::flex
