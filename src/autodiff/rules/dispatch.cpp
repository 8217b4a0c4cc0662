// Routes an op to its family's backward rule.
#include <fmt/format.h>

#include "autodiff/vjp.hpp"

namespace burn::autodiff {
namespace {
template <class... F> struct overloaded : F... { using F::operator()...; };
template <class... F> overloaded(F...) -> overloaded<F...>;
}  // namespace

Grads vjp(const ir::Op& op, const VjpArgs& a) {
  return std::visit(
      overloaded{
          [&](const ir::Unary& o) { return vjp_unary(o, a); },
          [&](const ir::Binary& o) { return vjp_binary(o, a); },
          [&](const ir::Clamp& o) { return vjp_clamp(o, a); },
          [&](const ir::Cast& o) { return vjp_cast(o, a); },
          [&](const ir::Matmul& o) { return vjp_matmul(o, a); },
          [&](const ir::Reduce& o) { return vjp_reduce(o, a); },
          [&](const ir::Cumulative& o) { return vjp_cumulative(o, a); },
          [&](const ir::Sort& o) { return vjp_sort(o, a); },
          [&](const ir::Reshape& o) { return vjp_reshape(o, a); },
          [&](const ir::Permute& o) { return vjp_permute(o, a); },
          [&](const ir::Expand& o) { return vjp_expand(o, a); },
          [&](const ir::Flip& o) { return vjp_flip(o, a); },
          [&](const ir::Slice& o) { return vjp_slice(o, a); },
          [&](const ir::SliceAssign& o) { return vjp_slice_assign(o, a); },
          [&](const ir::Cat& o) { return vjp_cat(o, a); },
          [&](const ir::Unfold& o) { return vjp_unfold(o, a); },
          [&](const ir::Gather& o) { return vjp_gather(o, a); },
          [&](const ir::Scatter& o) { return vjp_scatter(o, a); },
          [&](const ir::Select& o) { return vjp_select(o, a); },
          [&](const ir::SelectAssign& o) { return vjp_select_assign(o, a); },
          [&](const ir::MaskWhere& o) { return vjp_mask_where(o, a); },
          [&](const ir::MaskFill& o) { return vjp_mask_fill(o, a); },
          [&](const ir::Conv& o) { return vjp_conv(o, a); },
          [&](const ir::ConvTranspose& o) { return vjp_conv_transpose(o, a); },
          [&](const ir::ConvWeightGrad&) -> Grads {
            throw Error(ir::op_name(op), "is a backward kernel and has no backward rule of its own");
          },
          [&](const ir::MaxPool& o) { return vjp_max_pool(o, a); },
          [&](const ir::AvgPool& o) { return vjp_avg_pool(o, a); },
          [&](const ir::AdaptiveAvgPool& o) { return vjp_adaptive_avg_pool(o, a); },
          [&](const ir::Interpolate& o) { return vjp_interpolate(o, a); },
          [&](const auto&) -> Grads {
            throw Error(ir::op_name(op), "has no backward rule: creation ops are never differentiated");
          },
      },
      op);
}

}  // namespace burn::autodiff
