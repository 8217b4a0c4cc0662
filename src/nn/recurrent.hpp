// What Lstm and Gru share: PyTorch-layout gate parameters (all gates stacked
// in one matrix per input), their initialisation, stacking of layers and
// directions, and shape checks.
#pragma once

#include <burn/module/module.hpp>
#include <burn/nn/initializer.hpp>
#include <burn/nn/recurrent.hpp>
#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace burn::nn::detail {

/// Validates the sizes (errors start with `[config]`) and initialises every
/// layer and direction, in PyTorch's order: `initializer`, or PyTorch's
/// uniform ±1/sqrt(d_hidden) when nullopt.
std::vector<RecurrentWeights> init_recurrent_layers(const char* config, std::size_t d_input, std::size_t d_hidden,
                                                    std::size_t n_gates, bool bias, std::size_t num_layers,
                                                    bool bidirectional, const std::optional<Initializer>& initializer,
                                                    const TensorCreationOptions& options);

/// Runs one direction of one layer over x [batch, seq, d]: `step(x_gates_t,
/// t)` advances the recurrence by one step (t counting from the first step
/// taken) and returns the new hidden state. Returns the hidden states in
/// sequence order [batch, seq, d_hidden].
Tensor<3> run_direction(const Tensor<3>& x, const RecurrentWeights& weights, bool reverse, std::size_t d_hidden,
                        const std::function<Tensor<2>(const Tensor<2>& x_gates)>& step);

/// The next layer's input: the directions' outputs, concatenated on the last dim.
Tensor<3> join_directions(const std::vector<Tensor<3>>& outputs);

/// Runs every layer and direction in PyTorch's order: `run_one(input, k,
/// reverse)` runs entry k of `layers` and returns its hidden states and final
/// state; each layer takes the one below's directions, joined. Returns the
/// last layer's hidden states and every final state.
template <class State, class RunOne>
std::pair<Tensor<3>, std::vector<State>> run_layers(const Tensor<3>& x, std::size_t num_layers, bool bidirectional,
                                                    RunOne run_one) {
  const std::size_t directions = bidirectional ? 2 : 1;
  Tensor<3> input = x;
  std::vector<State> finals;
  for (std::size_t l = 0; l < num_layers; ++l) {
    std::vector<Tensor<3>> outputs;
    for (std::size_t d = 0; d < directions; ++d) {
      auto [y, final_state] = run_one(input, l * directions + d, d == 1);
      outputs.push_back(std::move(y));
      finals.push_back(std::move(final_state));
    }
    input = join_directions(outputs);
  }
  return {input, finals};
}

/// Throws burn::Error(op) unless the module holds one weight set per layer
/// and direction (a default-constructed one holds none).
void check_built(const char* op, const char* config, const std::vector<RecurrentWeights>& layers, bool bidirectional);

/// Throws burn::Error(op) unless `count` initial states fit `layers`
/// (zero, or one per layer and direction).
void check_state_count(const char* op, std::size_t count, std::size_t layers, bool bidirectional);

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
