#include "backends/cuda/parameters.hpp"

#include <bit>
#include <variant>

#include <burn/error.hpp>

namespace burn::cuda {
namespace {

/// The scalar an instruction reads, as ScalarSlot describes it.
Scalar scalar_of(const ir::Op& op, ScalarSlot::Source source) {
  if (const auto* b = std::get_if<ir::Binary>(&op)) return *b->scalar;
  if (const auto* f = std::get_if<ir::MaskFill>(&op)) return f->value;
  const auto& c = std::get<ir::Clamp>(op);
  return source == ScalarSlot::Source::ClampMin ? *c.min : *c.max;
}

std::uint64_t sign_extended(std::int64_t v) { return static_cast<std::uint64_t>(v); }

}  // namespace

std::vector<std::int64_t> broadcast_strides(const Shape& shape, const Shape& loop) {
  std::vector<std::int64_t> strides(loop.rank(), 0);
  std::int64_t step = 1;
  for (std::size_t d = shape.rank(); d-- > 0;) {
    strides[d] = (shape[d] == 1 && loop[d] != 1) ? 0 : step;
    step *= static_cast<std::int64_t>(shape[d]);
  }
  return strides;
}

std::uint64_t scalar_word(const Scalar& s, DType dtype) {
  switch (dtype) {
    case DType::F64: return std::bit_cast<std::uint64_t>(s.as<double>());
    case DType::F32: return std::bit_cast<std::uint32_t>(s.as<float>());
    case DType::F16: return std::bit_cast<std::uint32_t>(static_cast<float>(s.as<f16>()));
    case DType::BF16: return std::bit_cast<std::uint32_t>(static_cast<float>(s.as<bf16>()));
    case DType::I64: return sign_extended(s.as<std::int64_t>());
    case DType::I32: return sign_extended(s.as<std::int32_t>());
    case DType::I16: return sign_extended(s.as<std::int16_t>());
    case DType::I8: return sign_extended(s.as<std::int8_t>());
    case DType::U64: return s.as<std::uint64_t>();
    case DType::U32: return s.as<std::uint32_t>();
    case DType::U16: return s.as<std::uint16_t>();
    case DType::U8: return s.as<std::uint8_t>();
    case DType::Bool: return s.as<bool>() ? 1 : 0;
  }
  return 0;
}

std::vector<std::uint64_t> parameter_block(const ElementwiseKernel& kernel, const OpAt& op_at, const Shape& loop,
                                           std::span<const OperandView> operands, std::uint64_t error_word) {
  const ElementwiseLayout& layout = kernel.layout;
  if (operands.size() != layout.operands)
    throw Error("cuda", "a kernel launch got the wrong number of operands (an internal error)");
  const bool strided = layout.indexing == Indexing::Strided;
  if (strided && loop.rank() != layout.rank)
    throw Error("cuda", "a strided kernel was launched over a loop of another rank (an internal error)");
  std::vector<std::uint64_t> words(layout.bytes() / 8, 0);
  std::uint64_t rows = 1;
  for (std::size_t d = 0; d + 1 < loop.rank(); ++d) rows *= loop[d];
  words[0] = layout.rows ? rows : loop.num_elements();
  for (std::size_t k = 0; k < operands.size(); ++k) {
    words[layout.pointer_word() + k] = operands[k].address;
    if (!strided) continue;
    for (std::size_t d = 0; d < layout.rank; ++d)
      words[layout.stride_word() + k * layout.rank + d] = static_cast<std::uint64_t>(operands[k].strides.at(d));
  }
  if (strided)
    for (std::size_t d = 0; d < layout.rank; ++d) words[layout.shape_word() + d] = loop[d];
  for (std::size_t s = 0; s < layout.scalars.size(); ++s) {
    const ScalarSlot& slot = layout.scalars[s];
    words[layout.scalar_word() + s] = scalar_word(scalar_of(op_at(slot.op), slot.source), slot.dtype);
  }
  words[layout.error_word()] = error_word;
  return words;
}

}  // namespace burn::cuda
