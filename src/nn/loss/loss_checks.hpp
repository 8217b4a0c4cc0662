// Checks shared by the loss configs and forwards (private to src/nn/loss).
#pragma once

#include <burn/tensor.hpp>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace burn::nn::loss::detail {

/// Throws "[config] ..." unless alpha is in [0, 1].
void check_smoothing(const std::optional<double>& alpha, std::string_view config);
/// Throws "[config] ..." unless every weight is positive and finite (and there is one).
void check_weights(const std::optional<std::vector<double>>& weights, std::string_view config);
/// The weights as a rank-1 tensor created with `options`.
std::optional<Tensor<1>> weights_tensor(const std::optional<std::vector<double>>& weights,
                                        const TensorCreationOptions& options);
/// `t` on `like`'s device and dtype (weights created elsewhere follow the input).
Tensor<1> follow(const Tensor<1>& t, const burn::detail::TensorRef& like);
/// An int tensor's values on the host (for range checks on targets).
std::vector<std::int64_t> host_ints(const burn::detail::TensorRef& t);

}  // namespace burn::nn::loss::detail
