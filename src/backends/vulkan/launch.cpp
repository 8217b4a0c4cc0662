#include "backends/vulkan/launch.hpp"

#include <cstring>
#include <limits>

#include <fmt/format.h>

#include <burn/error.hpp>

namespace burn::vulkan {
namespace {

constexpr std::int64_t kI32Max = std::numeric_limits<std::int32_t>::max();

template <class T>
T scalar_as(const Scalar& s) {
  // Float scalars reach int types through convert_element (NaN -> 0,
  // saturating), as on the CPU backends.
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    if (s.kind() == Scalar::Kind::Float) return convert_element<T>(s.as_double());
  return s.as<T>();
}

template <class C>
void put(C v, std::uint32_t* words) {
  static_assert(sizeof(C) == 4 || sizeof(C) == 8);
  std::memcpy(words, &v, sizeof(C));
}

}  // namespace

Operand broadcast_to(const VkTensor& t, const std::vector<std::size_t>& shape) {
  Operand o{&t, t.strides, t.offset};
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (t.shape[d] != shape[d]) o.strides[d] = 0;  // size 1 broadcast
  return o;
}

Operand operand(const VkTensor& t) { return Operand{&t, t.strides, t.offset}; }

void grid_for(const Context& ctx, std::uint64_t groups, std::uint32_t& gx, std::uint32_t& gy) {
  const std::uint64_t max_x = ctx.backend.gpu().adapter().limits.maxComputeWorkGroupCount[0];
  gx = static_cast<std::uint32_t>(std::min(groups, max_x));
  gy = gx ? static_cast<std::uint32_t>((groups + gx - 1) / gx) : 0;
}

Prepared prepare_elementwise(const Context& ctx, const std::vector<std::size_t>& shape,
                             std::span<const Operand> operands, std::span<const std::uint32_t> words) {
  Prepared out;
  out.n = 1;
  for (auto d : shape) out.n *= d;
  if (out.n > static_cast<std::uint64_t>(kI32Max))
    throw Error(ctx.op, fmt::format("{} elements are more than the vulkan backend indexes (2^31 - 1)", out.n));

  // Collapse: drop size-1 dims, then merge neighbours that every operand
  // walks as one run (stride[d] == stride[d+1] * shape[d+1]).
  std::vector<std::size_t> dims;
  std::vector<std::vector<std::int64_t>> strides(operands.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (std::size_t k = 0; k < operands.size() && merge; ++k)
      merge = strides[k].back() == operands[k].strides[d] * static_cast<std::int64_t>(shape[d]);
    if (merge) {
      dims.back() *= shape[d];
      for (std::size_t k = 0; k < operands.size(); ++k) strides[k].back() = operands[k].strides[d];
    } else {
      dims.push_back(shape[d]);
      for (std::size_t k = 0; k < operands.size(); ++k) strides[k].push_back(operands[k].strides[d]);
    }
  }
  if (dims.size() > kMaxRank)
    throw Error(ctx.op, fmt::format("the vulkan backend handles at most {} non-mergeable dims; this layout has {} "
                                    "(make the input contiguous first)",
                                    kMaxRank, dims.size()));
  for (std::size_t k = 0; k < operands.size(); ++k)
    out.contiguous = out.contiguous && (dims.empty() || (dims.size() == 1 && strides[k][0] == 1));

  ElementwiseParams& p = out.params;
  p.n = static_cast<std::uint32_t>(out.n);
  p.rank = static_cast<std::uint32_t>(dims.size());
  std::copy(words.begin(), words.end(), p.words);
  for (std::size_t d = 0; d < dims.size(); ++d) p.shape[d] = static_cast<std::uint32_t>(dims[d]);
  // Offsets and strides fit 32 bits: a view stays inside its block, which
  // allocate() keeps under 2^31 elements.
  for (std::size_t k = 0; k < operands.size(); ++k) {
    for (std::size_t d = 0; d < dims.size(); ++d) p.stride[k * kMaxRank + d] = static_cast<std::int32_t>(strides[k][d]);
    p.offset[k] = static_cast<std::int32_t>(operands[k].offset);
    out.bindings.push_back(operands[k].tensor->binding());
  }
  return out;
}

void launch_elementwise(const Context& ctx, std::string_view shader, std::uint32_t op_code,
                        const std::vector<std::size_t>& shape, std::span<const Operand> operands,
                        std::span<const std::uint32_t> words, bool raises) {
  const Prepared prep = prepare_elementwise(ctx, shape, operands, words);
  if (prep.n == 0) return;
  const std::uint32_t constants[] = {op_code, prep.contiguous ? 1u : 0u};
  VkPipeline pipeline = ctx.pipeline(shader, constants);
  std::uint32_t gx = 0, gy = 0;
  grid_for(ctx, (prep.n + kWorkgroup - 1) / kWorkgroup, gx, gy);
  ctx.stream().dispatch(pipeline, prep.bindings, std::as_bytes(std::span(&prep.params, 1)), gx, gy, 1, raises);
}

void scalar_words(const Scalar& s, DType dtype, std::uint32_t* words) {
  switch (dtype) {
    case DType::F64: return put(scalar_as<double>(s), words);
    case DType::F32: return put(scalar_as<float>(s), words);
    case DType::F16: return put(static_cast<float>(f16(scalar_as<float>(s))), words);
    case DType::BF16: return put(static_cast<float>(bf16(scalar_as<float>(s))), words);
    case DType::I64: return put(scalar_as<std::int64_t>(s), words);
    case DType::I32: return put(scalar_as<std::int32_t>(s), words);
    case DType::I16: return put(static_cast<std::int32_t>(scalar_as<std::int16_t>(s)), words);
    case DType::I8: return put(static_cast<std::int32_t>(scalar_as<std::int8_t>(s)), words);
    case DType::U64: return put(scalar_as<std::uint64_t>(s), words);
    case DType::U32: return put(scalar_as<std::uint32_t>(s), words);
    case DType::U16: return put(static_cast<std::uint32_t>(scalar_as<std::uint16_t>(s)), words);
    case DType::U8: return put(static_cast<std::uint32_t>(scalar_as<std::uint8_t>(s)), words);
    case DType::Bool: return put(static_cast<std::uint32_t>(scalar_as<bool>(s) ? 1 : 0), words);
  }
}

void storage_words(const Scalar& s, DType dtype, std::uint32_t* words) {
  visit_dtype(dtype, [&]<class T>() {
    const T v = scalar_as<T>(s);
    words[0] = words[1] = 0;
    std::memcpy(words, &v, sizeof(T));
  });
}

void dispatch_groups(const Context& ctx, std::string_view shader, std::span<const std::uint32_t> constants,
                     std::span<const Binding> bindings, std::span<const std::byte> params, std::uint64_t groups) {
  if (groups == 0) return;
  std::uint32_t gx = 0, gy = 0;
  grid_for(ctx, groups, gx, gy);
  ctx.stream().dispatch(ctx.pipeline(shader, constants), bindings, params, gx, gy);
}

DType shader_compute_dtype(DType dtype) {
  switch (dtype) {
    case DType::F16:
    case DType::BF16: return DType::F32;
    case DType::I16:
    case DType::I8: return DType::I32;
    case DType::U16:
    case DType::U8: return DType::U32;
    default: return dtype;
  }
}

std::string_view dtype_suffix(DType dtype) { return dtype_name(dtype); }

void copy_into(const Context& ctx, const VkTensor& src, const Operand& dst) {
  const std::size_t size = dtype_size(src.dtype);
  const Operand ops[] = {dst, operand(src)};
  launch_elementwise(ctx, fmt::format("copy_{}", size * 8), 0, src.shape, ops);
}

VkTensorPtr contiguous(const Context& ctx, const VkTensorPtr& t, bool force) {
  if (!force && t->is_contiguous()) return t;
  auto out = ctx.output(ir::TensorSpec{Shape(t->shape), t->dtype});
  copy_into(ctx, *t, operand(*out));
  return out;
}

}  // namespace burn::vulkan
