#include "traced_step.hpp"

#if BURN_HAS_CAPTURE
#include <burn/amp.hpp>
#include <burn/module/module.hpp>
#include <burn/nn/loss/cross_entropy.hpp>
#include <span>
#include <utility>
#include <vector>

namespace burn_train {
namespace {

using Tensors = burn::TracedFunction::Tensors;
using burn::optim::GradientsParams;

// The functions below run on the capture device while a step is recorded.
// Each builds the model's structure there and takes its state from the
// inputs; what they capture (the configuration, the optimiser) outlives the
// recordings, which are made again for another batch size.

struct Forward {
  burn::Tensor<1> loss;
  burn::Tensor<1, burn::Int> correct;
  burn::Gradients grads;
};

// Forward, loss and backward of `m` on a batch: the loss, the count of right
// answers and the gradients.
Forward forward_backward(const Model& m, const burn::Tensor<4>& images, const burn::Tensor<1, burn::Int>& targets,
                         std::optional<burn::DType> autocast) {
  const burn::Device capture = images.device();
  const auto [logits, loss] = [&] {
    std::optional<burn::amp::Autocast> scope;
    if (autocast) scope.emplace(capture, *autocast);
    auto out = m.forward(images);
    auto l = burn::nn::loss::CrossEntropyLossConfig{}.init(capture).forward(out, targets);
    return std::pair{std::move(out), std::move(l)};
  }();
  auto correct = count_correct(logits, targets);
  auto grads = loss.backward();
  return Forward{loss.detach(), std::move(correct), std::move(grads)};
}

// Calls `f(param)` for each trainable parameter of `m` in visiting order,
// the order of Optimizer::traced_state.
template <class F>
void for_each_trainable(const Model& m, F&& f) {
  burn::module::for_each_param(m, [&](const std::string&, const burn::module::ParamBase& p) {
    if (p.is_trainable()) f(p);
  });
}

}  // namespace

TracedStep::TracedStep(const ModelConfig& config, burn::optim::Optimizer& optimizer,
                       std::optional<burn::DType> autocast, Average average)
    : config_(config), optimizer_(&optimizer), autocast_(autocast), average_(std::move(average)) {}

StepResult TracedStep::operator()(Model& model, const burn::data::MnistBatch& batch, double lr) {
  return average_ ? averaged_step(model, batch, lr) : whole_step(model, batch, lr);
}

StepResult TracedStep::whole_step(Model& model, const burn::data::MnistBatch& batch, double lr) {
  // Inputs: the model's tensors, the optimiser's state, the scalars, the batch.
  Tensors in = burn::module::tensors_of(model);
  const std::size_t n_model = in.size();
  const Tensors state = optimizer_->traced_state(model);
  const std::size_t n_state = state.size();
  in.insert(in.end(), state.begin(), state.end());
  in.push_back(optimizer_->traced_scalars(lr, model, batch.images.device()));
  in.push_back(batch.images.ref());
  in.push_back(batch.targets.ref());

  if (!step_) {
    step_.emplace(
        [config = config_, optimizer = optimizer_, autocast = autocast_, n_model, n_state](const Tensors& t) {
          const Model m = burn::module::with_tensors(config.init(t[0]->device), std::span(t).first(n_model));
          auto f = forward_backward(m, burn::Tensor<4>(t[n_model + n_state + 1]),
                                    burn::Tensor<1, burn::Int>(t[n_model + n_state + 2]), autocast);
          auto [next, next_state] = optimizer->traced_step(
              t[n_model + n_state], m, GradientsParams::from_grads(f.grads, m), std::span(t).subspan(n_model, n_state));
          Tensors out = burn::module::tensors_of(next);
          out.insert(out.end(), next_state.begin(), next_state.end());
          out.push_back(f.loss.ref());
          out.push_back(f.correct.ref());
          return out;
        },
        burn::specs_of(in));
  }

  const Tensors out = (*step_)(in);
  model = burn::module::with_tensors(std::move(model), std::span(out).first(n_model));
  optimizer_->commit_traced(model, std::span(out).subspan(n_model, n_state));
  return StepResult{burn::Tensor<1>(out[n_model + n_state]), burn::Tensor<1, burn::Int>(out[n_model + n_state + 1])};
}

StepResult TracedStep::averaged_step(Model& model, const burn::data::MnistBatch& batch, double lr) {
  // First part: the model's tensors and the batch in; the model's tensors
  // after the forward (batch-norm statistics move), the gradients of the
  // trainable parameters, the loss and the count out.
  Tensors in = burn::module::tensors_of(model);
  const std::size_t n_model = in.size();
  in.push_back(batch.images.ref());
  in.push_back(batch.targets.ref());
  if (!gradients_) {
    gradients_.emplace(
        [config = config_, autocast = autocast_, n_model](const Tensors& t) {
          const Model m = burn::module::with_tensors(config.init(t[0]->device), std::span(t).first(n_model));
          auto f =
              forward_backward(m, burn::Tensor<4>(t[n_model]), burn::Tensor<1, burn::Int>(t[n_model + 1]), autocast);
          Tensors out = burn::module::tensors_of(m);
          const GradientsParams grads = GradientsParams::from_grads(f.grads, m);
          for_each_trainable(m, [&](const burn::module::ParamBase& p) { out.push_back(*grads.get_ref(p.id())); });
          out.push_back(f.loss.ref());
          out.push_back(f.correct.ref());
          return out;
        },
        burn::specs_of(in));
  }
  const Tensors forward = (*gradients_)(in);
  model = burn::module::with_tensors(std::move(model), std::span(forward).first(n_model));
  GradientsParams local;
  std::size_t k = n_model;
  for_each_trainable(model, [&](const burn::module::ParamBase& p) { local.insert_ref(p.id(), forward[k++]); });
  StepResult result{burn::Tensor<1>(forward[k]), burn::Tensor<1, burn::Int>(forward[k + 1])};

  const GradientsParams averaged = average_(local, model);

  // Second part: the model's tensors, the optimiser's state, the scalars and
  // the averaged gradients in; the new tensors and state out.
  in = burn::module::tensors_of(model);
  const Tensors state = optimizer_->traced_state(model);
  const std::size_t n_state = state.size();
  in.insert(in.end(), state.begin(), state.end());
  in.push_back(optimizer_->traced_scalars(lr, model, batch.images.device()));
  for_each_trainable(model, [&](const burn::module::ParamBase& p) { in.push_back(*averaged.get_ref(p.id())); });
  if (!update_) {
    update_.emplace(
        [config = config_, optimizer = optimizer_, n_model, n_state](const Tensors& t) {
          const Model m = burn::module::with_tensors(config.init(t[0]->device), std::span(t).first(n_model));
          GradientsParams grads;
          std::size_t g = n_model + n_state + 1;
          for_each_trainable(m, [&](const burn::module::ParamBase& p) { grads.insert_ref(p.id(), t[g++]); });
          auto [next, next_state] =
              optimizer->traced_step(t[n_model + n_state], m, grads, std::span(t).subspan(n_model, n_state));
          Tensors out = burn::module::tensors_of(next);
          out.insert(out.end(), next_state.begin(), next_state.end());
          return out;
        },
        burn::specs_of(in));
  }
  const Tensors out = (*update_)(in);
  model = burn::module::with_tensors(std::move(model), std::span(out).first(n_model));
  optimizer_->commit_traced(model, std::span(out).subspan(n_model, n_state));
  return result;
}

}  // namespace burn_train
#endif
