#include "nn/recurrent.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <burn/module/ops.hpp>
#include <cmath>

namespace burn::nn::detail {

namespace {

RecurrentWeights init_one(std::size_t d_input, std::size_t d_hidden, std::size_t n_gates, bool bias,
                          const Initializer& init, const TensorCreationOptions& options) {
  const std::size_t width = n_gates * d_hidden;
  // Fans are one gate's (as a per-gate Linear in Burn), so Kaiming/Xavier bounds match Burn's.
  RecurrentWeights w{module::Param(init.init<2>(Shape{d_input, width}, options, d_input, d_hidden)),
                     module::Param(init.init<2>(Shape{d_hidden, width}, options, d_hidden, d_hidden)), std::nullopt,
                     std::nullopt};
  w.weight_ih.set_pytorch_transposed(true);
  w.weight_hh.set_pytorch_transposed(true);
  if (bias) {
    w.bias_ih.emplace(init.init<1>(Shape{width}, options, d_input, d_hidden));
    w.bias_hh.emplace(init.init<1>(Shape{width}, options, d_hidden, d_hidden));
  }
  return w;
}

}  // namespace

std::vector<RecurrentWeights> init_recurrent_layers(const char* config, std::size_t d_input, std::size_t d_hidden,
                                                    std::size_t n_gates, bool bias, std::size_t num_layers,
                                                    bool bidirectional, const std::optional<Initializer>& initializer,
                                                    const TensorCreationOptions& options) {
  if (d_input == 0 || d_hidden == 0)
    throw Error(config, fmt::format("d_input and d_hidden must be positive, got {} and {}", d_input, d_hidden));
  if (num_layers == 0) throw Error(config, "num_layers must be at least 1");
  const double bound = 1.0 / std::sqrt(static_cast<double>(d_hidden));
  const Initializer init = initializer.value_or(Initializer::uniform(-bound, bound));
  const std::size_t directions = bidirectional ? 2 : 1;
  std::vector<RecurrentWeights> layers;
  for (std::size_t l = 0; l < num_layers; ++l)
    for (std::size_t d = 0; d < directions; ++d)
      layers.push_back(init_one(l == 0 ? d_input : directions * d_hidden, d_hidden, n_gates, bias, init, options));
  return layers;
}

void visit_recurrent(module::Visitor& visitor, const std::string& prefix, std::vector<RecurrentWeights>& layers,
                     bool bidirectional) {
  const std::size_t directions = bidirectional ? 2 : 1;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string suffix = fmt::format("_l{}{}", i / directions, i % directions ? "_reverse" : "");
    RecurrentWeights& w = layers[i];
    // Flagged here too, so hand-built weights convert as initialised ones do.
    w.weight_ih.set_pytorch_transposed(true);
    w.weight_hh.set_pytorch_transposed(true);
    using module::detail::join_path;
    using module::detail::visit_field;
    visit_field(visitor, join_path(prefix, "weight_ih" + suffix), w.weight_ih);
    visit_field(visitor, join_path(prefix, "weight_hh" + suffix), w.weight_hh);
    visit_field(visitor, join_path(prefix, "bias_ih" + suffix), w.bias_ih);
    visit_field(visitor, join_path(prefix, "bias_hh" + suffix), w.bias_hh);
  }
}

void check_built(const char* op, const char* config, const std::vector<RecurrentWeights>& layers, bool bidirectional) {
  if (layers.empty() || (bidirectional && layers.size() % 2 != 0))
    throw Error(op, fmt::format("holds {} weight sets{}; build it with {}::init (one set per layer and direction)",
                                layers.size(), bidirectional ? " for two directions" : "", config));
}

void check_state_count(const char* op, std::size_t count, std::size_t layers, bool bidirectional) {
  if (count == 0 || count == layers) return;
  throw Error(op, fmt::format("{} initial states given; this {} takes one per layer and direction ({}), in "
                              "PyTorch's order: l0, {}l1, ...",
                              count, op, layers, bidirectional ? "l0_reverse, " : ""));
}

Tensor<3> run_direction(const Tensor<3>& x, const RecurrentWeights& weights, bool reverse, std::size_t d_hidden,
                        const std::function<Tensor<2>(const Tensor<2>& x_gates)>& step) {
  // The input half of every gate for all steps in one product; only h W_hh is sequential.
  const Tensor<3> x_gates = project_inputs(x, weights.weight_ih, weights.bias_ih);
  const std::size_t seq = x.dims()[1];
  std::vector<Tensor<2>> outputs;
  outputs.reserve(seq);
  for (std::size_t i = 0; i < seq; ++i) {
    const std::size_t t = reverse ? seq - 1 - i : i;
    outputs.push_back(step(x_gates.narrow(1, static_cast<std::int64_t>(t), 1).squeeze<2>(1)));
  }
  if (reverse) std::reverse(outputs.begin(), outputs.end());
  return stack_steps(outputs, x, d_hidden);
}

Tensor<3> join_directions(const std::vector<Tensor<3>>& outputs) {
  return outputs.size() == 1 ? outputs.front() : Tensor<3>::cat(outputs, 2);
}

void check_sequence(const char* op, const Tensor<3>& x, std::size_t d_input) {
  if (x.dims()[2] != d_input)
    throw Error(op, fmt::format("the input has shape {}; expected [batch, seq, d_input] with d_input = {}",
                                x.shape().to_string(), d_input));
}

void check_state(const char* op, const char* name, const Tensor<2>& s, std::size_t batch, std::size_t d_hidden) {
  if (s.shape() != Shape{batch, d_hidden})
    throw Error(op, fmt::format("the initial {} state has shape {}; expected [batch, d_hidden] = [{}, {}]", name,
                                s.shape().to_string(), batch, d_hidden));
}

namespace {
std::optional<Tensor<1>> value_of(const std::optional<module::Param<Tensor<1>>>& b) {
  return b ? std::optional<Tensor<1>>(b->val()) : std::nullopt;
}
}  // namespace

Tensor<3> project_inputs(const Tensor<3>& x, const module::Param<Tensor<2>>& w,
                         const std::optional<module::Param<Tensor<1>>>& b) {
  return module::linear(x, w.val(), value_of(b));
}

Tensor<2> project_hidden(const Tensor<2>& h, const module::Param<Tensor<2>>& w,
                         const std::optional<module::Param<Tensor<1>>>& b) {
  return module::linear(h, w.val(), value_of(b));
}

Tensor<3> stack_steps(const std::vector<Tensor<2>>& steps, const Tensor<3>& x, std::size_t d_hidden) {
  if (steps.empty()) return Tensor<3>::zeros(Shape{x.dims()[0], 0, d_hidden}, {x.device(), x.dtype()});
  return Tensor<2>::stack<3>(steps, 1);
}

}  // namespace burn::nn::detail
