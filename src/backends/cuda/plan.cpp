// Which planner computes an op, by family.
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {
namespace {

enum class Family : std::uint8_t { Elementwise, Layout, Creation, Reduce, Indexing, Matmul, Pool, Conv, None };

Family family_of(const ir::Op& op) {
  return std::visit(
      []<class T>(const T&) {
        if constexpr (std::is_same_v<T, ir::Unary> || std::is_same_v<T, ir::Binary> || std::is_same_v<T, ir::Clamp> ||
                      std::is_same_v<T, ir::Cast> || std::is_same_v<T, ir::MaskWhere> ||
                      std::is_same_v<T, ir::MaskFill>)
          return Family::Elementwise;
        else if constexpr (std::is_same_v<T, ir::Reshape> || std::is_same_v<T, ir::Permute> ||
                           std::is_same_v<T, ir::Expand> || std::is_same_v<T, ir::Flip> ||
                           std::is_same_v<T, ir::Slice> || std::is_same_v<T, ir::SliceAssign> ||
                           std::is_same_v<T, ir::Cat> || std::is_same_v<T, ir::Unfold>)
          return Family::Layout;
        else if constexpr (std::is_same_v<T, ir::Full> || std::is_same_v<T, ir::Arange> ||
                           std::is_same_v<T, ir::Random>)
          return Family::Creation;
        else if constexpr (std::is_same_v<T, ir::Reduce> || std::is_same_v<T, ir::Cumulative>) return Family::Reduce;
        else if constexpr (std::is_same_v<T, ir::Gather> || std::is_same_v<T, ir::Select> ||
                           std::is_same_v<T, ir::Scatter> || std::is_same_v<T, ir::SelectAssign>)
          return Family::Indexing;
        else if constexpr (std::is_same_v<T, ir::Matmul>) return Family::Matmul;
        else if constexpr (std::is_same_v<T, ir::MaxPool> || std::is_same_v<T, ir::AvgPool> ||
                           std::is_same_v<T, ir::AdaptiveAvgPool>)
          return Family::Pool;
        else if constexpr (std::is_same_v<T, ir::Conv> || std::is_same_v<T, ir::ConvTranspose>) return Family::Conv;
        else return Family::None;
      },
      op);
}

}  // namespace

bool can_plan(const ir::Op& op) { return family_of(op) != Family::None; }

std::vector<Launch> plan(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs,
                         std::uint64_t error_word, const RandomStream& random) {
  switch (family_of(op)) {
    case Family::Elementwise: return plan_elementwise(op, inputs, outputs, error_word);
    case Family::Layout: return plan_layout(op, inputs, outputs);
    case Family::Creation: return plan_creation(op, outputs, random);
    case Family::Reduce: return plan_reduce(op, inputs, outputs);
    case Family::Indexing: return plan_indexing(op, inputs, outputs, error_word);
    case Family::Matmul: return plan_matmul(inputs, outputs);
    case Family::Pool: return plan_pool(op, inputs, outputs);
    case Family::Conv: return plan_conv(op, inputs, outputs);
    case Family::None: break;
  }
  throw Error(ir::op_name(op),
              "not supported by the cuda backend yet: it runs elementwise, layout, creation "
              "(full, arange, random), reduce/scan, indexing, matmul, convolution and pooling ops so far "
              "(docs/cuda.md); compute this op on "
              "another device");
}

}  // namespace burn::cuda
