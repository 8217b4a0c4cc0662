// The IR layer's per-op metadata: for every op, one overload of each hook
// below, defined in its family's file (src/ir/ops/<family>.cpp; the families
// are the sections of <burn/ir/op.hpp>):
//   name(op)                 "add", "cumsum", "conv2d", ... (op_name)
//   memory_bound(op)         recomputing it is cheaper than storing its output
//                            (is_memory_bound)
//   infer(op, name, inputs)  validates the inputs and returns the output
//                            specs (infer_output_list); `name` is name(op),
//                            for the error messages
// src/ir/op.cpp visits ir::Op and calls these. The deleted templates make an
// op without one of its overloads a compile error there, never a fallback.
#pragma once

#include <span>
#include <string_view>

#include <burn/ir/op.hpp>

#include "ir/spec_list.hpp"

namespace burn::ir {

using Inputs = std::span<const TensorSpec>;

template <class O>
std::string_view name(const O&) = delete;
template <class O>
bool memory_bound(const O&) = delete;
template <class O>
SpecList infer(const O&, std::string_view, Inputs) = delete;

// creation.cpp
std::string_view name(const Full&);
std::string_view name(const Arange&);
std::string_view name(const Random&);
bool memory_bound(const Full&);
bool memory_bound(const Arange&);
bool memory_bound(const Random&);
SpecList infer(const Full&, std::string_view, Inputs);
SpecList infer(const Arange&, std::string_view, Inputs);
SpecList infer(const Random&, std::string_view, Inputs);

// elementwise.cpp
std::string_view name(const Unary&);
std::string_view name(const Binary&);
std::string_view name(const Clamp&);
std::string_view name(const Cast&);
bool memory_bound(const Unary&);
bool memory_bound(const Binary&);
bool memory_bound(const Clamp&);
bool memory_bound(const Cast&);
SpecList infer(const Unary&, std::string_view, Inputs);
SpecList infer(const Binary&, std::string_view, Inputs);
SpecList infer(const Clamp&, std::string_view, Inputs);
SpecList infer(const Cast&, std::string_view, Inputs);

// matmul.cpp
std::string_view name(const Matmul&);
bool memory_bound(const Matmul&);
SpecList infer(const Matmul&, std::string_view, Inputs);

// reduce.cpp
std::string_view name(const Reduce&);
std::string_view name(const Cumulative&);
std::string_view name(const Sort&);
bool memory_bound(const Reduce&);
bool memory_bound(const Cumulative&);
bool memory_bound(const Sort&);
SpecList infer(const Reduce&, std::string_view, Inputs);
SpecList infer(const Cumulative&, std::string_view, Inputs);
SpecList infer(const Sort&, std::string_view, Inputs);

// layout.cpp
std::string_view name(const Reshape&);
std::string_view name(const Permute&);
std::string_view name(const Expand&);
std::string_view name(const Flip&);
std::string_view name(const Slice&);
std::string_view name(const SliceAssign&);
std::string_view name(const Cat&);
std::string_view name(const Unfold&);
bool memory_bound(const Reshape&);
bool memory_bound(const Permute&);
bool memory_bound(const Expand&);
bool memory_bound(const Flip&);
bool memory_bound(const Slice&);
bool memory_bound(const SliceAssign&);
bool memory_bound(const Cat&);
bool memory_bound(const Unfold&);
SpecList infer(const Reshape&, std::string_view, Inputs);
SpecList infer(const Permute&, std::string_view, Inputs);
SpecList infer(const Expand&, std::string_view, Inputs);
SpecList infer(const Flip&, std::string_view, Inputs);
SpecList infer(const Slice&, std::string_view, Inputs);
SpecList infer(const SliceAssign&, std::string_view, Inputs);
SpecList infer(const Cat&, std::string_view, Inputs);
SpecList infer(const Unfold&, std::string_view, Inputs);

// indexing.cpp
std::string_view name(const Gather&);
std::string_view name(const Scatter&);
std::string_view name(const Select&);
std::string_view name(const SelectAssign&);
std::string_view name(const MaskWhere&);
std::string_view name(const MaskFill&);
bool memory_bound(const Gather&);
bool memory_bound(const Scatter&);
bool memory_bound(const Select&);
bool memory_bound(const SelectAssign&);
bool memory_bound(const MaskWhere&);
bool memory_bound(const MaskFill&);
SpecList infer(const Gather&, std::string_view, Inputs);
SpecList infer(const Scatter&, std::string_view, Inputs);
SpecList infer(const Select&, std::string_view, Inputs);
SpecList infer(const SelectAssign&, std::string_view, Inputs);
SpecList infer(const MaskWhere&, std::string_view, Inputs);
SpecList infer(const MaskFill&, std::string_view, Inputs);

// conv.cpp
std::string_view name(const Conv&);
std::string_view name(const ConvTranspose&);
std::string_view name(const ConvWeightGrad&);
bool memory_bound(const Conv&);
bool memory_bound(const ConvTranspose&);
bool memory_bound(const ConvWeightGrad&);
SpecList infer(const Conv&, std::string_view, Inputs);
SpecList infer(const ConvTranspose&, std::string_view, Inputs);
SpecList infer(const ConvWeightGrad&, std::string_view, Inputs);

// pool.cpp
std::string_view name(const MaxPool&);
std::string_view name(const AvgPool&);
std::string_view name(const AdaptiveAvgPool&);
bool memory_bound(const MaxPool&);
bool memory_bound(const AvgPool&);
bool memory_bound(const AdaptiveAvgPool&);
SpecList infer(const MaxPool&, std::string_view, Inputs);
SpecList infer(const AvgPool&, std::string_view, Inputs);
SpecList infer(const AdaptiveAvgPool&, std::string_view, Inputs);

// interpolate.cpp
std::string_view name(const Interpolate&);
bool memory_bound(const Interpolate&);
SpecList infer(const Interpolate&, std::string_view, Inputs);

// norm.cpp
std::string_view name(const LayerNorm&);
bool memory_bound(const LayerNorm&);
SpecList infer(const LayerNorm&, std::string_view, Inputs);
std::string_view name(const BatchNorm&);
bool memory_bound(const BatchNorm&);
SpecList infer(const BatchNorm&, std::string_view, Inputs);

// activation.cpp
std::string_view name(const Softmax&);
std::string_view name(const Gelu&);
bool memory_bound(const Softmax&);
bool memory_bound(const Gelu&);
SpecList infer(const Softmax&, std::string_view, Inputs);
SpecList infer(const Gelu&, std::string_view, Inputs);

}  // namespace burn::ir
