// What the fusion layer does with each IR op, as explicit lists: every op is
// in exactly one (checked below), so an op added to ir::Op does not compile
// until it is placed. Sites that depend on an op's kind branch on it at
// compile time and take per-op overloads for the kinds they handle (the
// batch signature, the CPU programs), so placing an op in a fused kind asks
// each of them for its part.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>
#include <variant>

#include <burn/ir/op.hpp>

namespace burn::fusion {

template <class... Ops>
struct OpList {
  template <class O>
  static constexpr bool contains = (std::is_same_v<O, Ops> || ...);
};

/// One output per input element (after broadcasting): the steps of
/// elementwise and row-reduce groups, and of an epilogue after its anchor.
using ElementwiseOps = OpList<ir::Unary, ir::Binary, ir::Clamp, ir::Cast, ir::MaskWhere, ir::MaskFill, ir::Gelu>;
/// The row statistics of a row-reduce group (last-dim reductions).
using ReductionOps = OpList<ir::Reduce>;
/// The first op of an epilogue group.
using AnchorOps = OpList<ir::Matmul, ir::Conv>;
/// Taken by no fuser but queued all the same, and run alone on the inner
/// backend in queue order at the drain: pooling, which follows a
/// convolution whose epilogue is still queued. Run at once, a pool would
/// drain the queue while the temporaries of the user's expression are still
/// alive (`pool(relu(bn(conv(x))))`), and the convolution could not take the
/// batch norm and relu it feeds (docs/fusion.md, "Planning").
using AloneOps = OpList<ir::MaxPool, ir::AvgPool, ir::AdaptiveAvgPool>;
/// Taken by no fuser: never queued, they run alone on the inner backend.
using EagerOps =
    OpList<ir::Full, ir::Arange, ir::Random, ir::Cumulative, ir::Sort, ir::Reshape, ir::Permute, ir::Expand, ir::Flip,
           ir::Slice, ir::SliceAssign, ir::Cat, ir::Unfold, ir::Gather, ir::Scatter, ir::Select, ir::SelectAssign,
           ir::ConvTranspose, ir::ConvWeightGrad, ir::Interpolate, ir::LayerNorm, ir::Softmax, ir::BatchNorm>;

enum class OpKind : std::uint8_t { Elementwise, Reduction, Anchor, Alone, Eager };

namespace op_kind_detail {

template <class O>
consteval OpKind kind_of() {
  static_assert(ElementwiseOps::contains<O> + ReductionOps::contains<O> + AnchorOps::contains<O> +
                        AloneOps::contains<O> + EagerOps::contains<O> ==
                    1,
                "every ir::Op belongs to exactly one list of src/fusion/op_kind.hpp");
  if constexpr (ElementwiseOps::contains<O>) return OpKind::Elementwise;
  else if constexpr (ReductionOps::contains<O>) return OpKind::Reduction;
  else if constexpr (AnchorOps::contains<O>) return OpKind::Anchor;
  else if constexpr (AloneOps::contains<O>) return OpKind::Alone;
  else return OpKind::Eager;
}

template <class V>
struct Table;
template <class... Os>
struct Table<std::variant<Os...>> {
  static constexpr std::array<OpKind, sizeof...(Os)> kinds{kind_of<Os>()...};
};

}  // namespace op_kind_detail

// Places every op now, in each file that includes this one.
static_assert(op_kind_detail::Table<ir::Op>::kinds.size() == std::variant_size_v<ir::Op>);

/// The kind of op type O.
template <class O>
inline constexpr OpKind kind_of = op_kind_detail::kind_of<O>();

/// The kind of `op` (one table lookup: queueing asks on every op).
inline OpKind kind(const ir::Op& op) { return op_kind_detail::Table<ir::Op>::kinds[op.index()]; }

}  // namespace burn::fusion
