// What Lstm and Gru share: PyTorch-layout gate parameters (all gates stacked
// in one matrix per input), their initialisation, and shape checks.
#pragma once

#include <burn/module/module.hpp>
#include <burn/nn/initializer.hpp>
#include <cstddef>
#include <optional>

namespace burn::nn::detail {

struct GateParams {
  module::Param<Tensor<2>> weight_ih;  // [d_input, n_gates d_hidden]
  module::Param<Tensor<2>> weight_hh;  // [d_hidden, n_gates d_hidden]
  std::optional<module::Param<Tensor<1>>> bias_ih, bias_hh;
};

/// Validates the sizes (errors start with `[config]`) and initialises the
/// parameters: `initializer`, or PyTorch's uniform ±1/sqrt(d_hidden) when nullopt.
GateParams init_gate_params(const char* config, std::size_t d_input, std::size_t d_hidden, std::size_t n_gates,
                            bool bias, const std::optional<Initializer>& initializer,
                            const TensorCreationOptions& options);

/// Checks x [batch, seq, d_input]; errors start with `[op]`.
void check_sequence(const char* op, const Tensor<3>& x, std::size_t d_input);
/// Checks a state tensor is [batch, d_hidden]; errors start with `[op]` and name it.
void check_state(const char* op, const char* name, const Tensor<2>& s, std::size_t batch, std::size_t d_hidden);

/// x W + b for every step at once: [batch, seq, n_gates d_hidden].
Tensor<3> project_inputs(const Tensor<3>& x, const module::Param<Tensor<2>>& w,
                         const std::optional<module::Param<Tensor<1>>>& b);
/// h W + b for one step: [batch, n_gates d_hidden].
Tensor<2> project_hidden(const Tensor<2>& h, const module::Param<Tensor<2>>& w,
                         const std::optional<module::Param<Tensor<1>>>& b);

/// Stacks per-step [batch, d_hidden] states into [batch, seq, d_hidden]
/// ([batch, 0, d_hidden] for an empty sequence).
Tensor<3> stack_steps(const std::vector<Tensor<2>>& steps, const Tensor<3>& x, std::size_t d_hidden);

}  // namespace burn::nn::detail
