// Recording element-wise work: the parameter block shared by the
// element-wise shaders (shaders/elementwise.glsl), operands broadcast to the
// output's shape, dims collapsed where every operand allows it, and the
// dispatch grid. Also scalars as the bit patterns shaders read.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <burn/scalar.hpp>

#include "backends/vulkan/kernels.hpp"

namespace burn::vulkan {

inline constexpr std::size_t kMaxRank = 8;
inline constexpr std::size_t kMaxOperands = 4;
inline constexpr std::uint32_t kWorkgroup = 256;

/// Mirrors `Params` in shaders/elementwise.glsl (std430, 4-byte fields).
struct ElementwiseParams {
  std::uint32_t n = 0;
  std::uint32_t rank = 0;
  std::uint32_t words[8]{};
  std::uint32_t shape[kMaxRank]{};
  std::int32_t offset[kMaxOperands]{};
  std::int32_t stride[kMaxOperands * kMaxRank]{};
};
static_assert(sizeof(ElementwiseParams) == 4 * (2 + 8 + kMaxRank + kMaxOperands + kMaxOperands * kMaxRank),
              "no padding: the shader reads the block as tightly packed 32-bit words");

/// A tensor seen through the output's shape: broadcast dims get stride 0.
struct Operand {
  const VkTensor* tensor;
  std::vector<std::int64_t> strides;
  std::int64_t offset;
};
/// `t` broadcast to `shape` (equal rank, numpy rules already checked).
Operand broadcast_to(const VkTensor& t, const std::vector<std::size_t>& shape);
/// A tensor used at its own shape.
Operand operand(const VkTensor& t);

/// The parameter block and bindings for `operands` over `shape` (dims
/// collapsed); `contiguous` when every operand is dense from its offset.
struct Prepared {
  ElementwiseParams params;
  std::vector<Binding> bindings;
  bool contiguous = true;
  std::uint64_t n = 0;
};
Prepared prepare_elementwise(const Context& ctx, const std::vector<std::size_t>& shape,
                             std::span<const Operand> operands, std::span<const std::uint32_t> words = {});

/// Records one element-wise dispatch over `shape`: operands[0] is written,
/// the rest read. Constant 0 of the shader is `op_code`, constant 1 says
/// whether every operand is contiguous. `words` go to the parameter block.
void launch_elementwise(const Context& ctx, std::string_view shader, std::uint32_t op_code,
                        const std::vector<std::size_t>& shape, std::span<const Operand> operands,
                        std::span<const std::uint32_t> words = {}, bool raises = false);

/// The workgroup grid for `groups` workgroups (2-D past the x limit).
void grid_for(const Context& ctx, std::uint64_t groups, std::uint32_t& gx, std::uint32_t& gy);

/// `s` as `dtype`'s element (the CPU backends' scalar_as rules), written as
/// the shader's compute type: 32-bit types fill words[0], 64-bit ones [0..1].
void scalar_words(const Scalar& s, DType dtype, std::uint32_t* words);

/// `s` as `dtype`'s stored bits (f16 as its 16 bits, bool as one byte),
/// little endian from words[0]: for shaders that move raw elements.
void storage_words(const Scalar& s, DType dtype, std::uint32_t* words);

/// Records a dispatch of a shader with its own parameter block over
/// `groups` workgroups (a 2-D grid past the x limit; the shader folds it).
void dispatch_groups(const Context& ctx, std::string_view shader, std::span<const std::uint32_t> constants,
                     std::span<const Binding> bindings, std::span<const std::byte> params, std::uint64_t groups);
template <class P>
void dispatch_groups(const Context& ctx, std::string_view shader, std::span<const std::uint32_t> constants,
                     std::span<const Binding> bindings, const P& params, std::uint64_t groups) {
  dispatch_groups(ctx, shader, constants, bindings, std::as_bytes(std::span(&params, 1)), groups);
}

/// The type shaders compute `dtype` in (their <P>_C): f32 for the half
/// types, 32 bits for narrower ints, else `dtype` itself. Scratch buffers
/// that carry running sums between passes are kept in it.
DType shader_compute_dtype(DType dtype);

/// "f32", "bool", ... as the shader variants are named.
std::string_view dtype_suffix(DType dtype);

/// A row-major copy of `t` (itself, offset included, when already
/// contiguous and `force` is false).
VkTensorPtr contiguous(const Context& ctx, const VkTensorPtr& t, bool force = false);
/// Copies `src` into the view `dst` (same shape and dtype).
void copy_into(const Context& ctx, const VkTensor& src, const Operand& dst);

}  // namespace burn::vulkan
