// How a loss turns per-element values into the number that is trained on.
#pragma once

#include <burn/amp/autocast.hpp>
#include <burn/tensor.hpp>
#include <string_view>

namespace burn::nn::loss {

/// Mean (Burn's Auto, PyTorch's default) or Sum give a one-element Tensor<1>;
/// None is only valid for the `forward_no_reduction` entry points.
enum class Reduction { Mean, Sum, None, Auto = Mean };

namespace detail {
/// Throws "[op] ..." unless `a` and `b` have the same shape (losses never
/// broadcast a target: a mismatch is almost always a bug in the caller).
void check_same_shape(const burn::detail::TensorRef& a, const burn::detail::TensorRef& b, std::string_view op,
                      std::string_view a_name, std::string_view b_name);
/// Mean or sum of every element as shape [1]; throws "[op] ..." for None.
Tensor<1> reduce(const burn::detail::TensorRef& values, Reduction reduction, std::string_view op);
}  // namespace detail

}  // namespace burn::nn::loss
