#include <fmt/format.h>

#include <burn/nn/loss/reduction.hpp>

namespace burn::nn::loss::detail {

void check_same_shape(const burn::detail::TensorRef& a, const burn::detail::TensorRef& b, std::string_view op,
                      std::string_view a_name, std::string_view b_name) {
  if (a->spec.shape != b->spec.shape)
    throw Error(op, fmt::format("{} of shape {} and {} of shape {} must have the same shape", a_name,
                                a->spec.shape.to_string(), b_name, b->spec.shape.to_string()));
}

Tensor<1> reduce(const burn::detail::TensorRef& values, Reduction reduction, std::string_view op) {
  switch (reduction) {
    case Reduction::Mean: return Tensor<1>(burn::detail::reduce_all(ir::ReduceOp::Mean, values));
    case Reduction::Sum: return Tensor<1>(burn::detail::reduce_all(ir::ReduceOp::Sum, values));
    case Reduction::None: break;
  }
  throw Error(op, "Reduction::None keeps one loss per element: call forward_no_reduction instead of forward");
}

}  // namespace burn::nn::loss::detail
