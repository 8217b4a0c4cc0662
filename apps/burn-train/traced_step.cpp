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
// answers and the gradients, those of the loss times the scale in `scales`
// when given (f16 loss scaling).
Forward forward_backward(const Model& m, const burn::Tensor<4>& images, const burn::Tensor<1, burn::Int>& targets,
                         std::optional<burn::DType> autocast, const burn::detail::TensorRef& scales) {
  const burn::Device capture = images.device();
  const auto [logits, loss] = [&] {
    std::optional<burn::amp::Autocast> scope;
    if (autocast) scope.emplace(capture, *autocast);
    auto out = m.forward(images);
    auto l = burn::nn::loss::CrossEntropyLossConfig{}.init(capture).forward(out, targets);
    return std::pair{std::move(out), std::move(l)};
  }();
  auto correct = count_correct(logits, targets);
  auto grads = scales ? burn::amp::GradScaler::traced_scale(loss, scales).backward() : loss.backward();
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

// Inside the recording: Adam's step of `m` with `grads`, and the results it
// gives back, the updated model's tensors followed by the new state.
Tensors update_results(const burn::optim::Optimizer& optimizer, const burn::detail::TensorRef& scalars, const Model& m,
                       const GradientsParams& grads, std::span<const burn::detail::TensorRef> state) {
  auto [next, next_state] = optimizer.traced_step(scalars, m, grads, state);
  Tensors out = burn::module::tensors_of(next);
  out.insert(out.end(), next_state.begin(), next_state.end());
  return out;
}

// Appends the inputs of an update to `in` (the model's tensors already
// there): the optimiser's state, then the step's scalars. Returns the
// number of state tensors.
std::size_t append_update_inputs(Tensors& in, const burn::optim::Optimizer& optimizer, const Model& model, double lr,
                                 const burn::Device& device) {
  const Tensors state = optimizer.traced_state(model);
  in.insert(in.end(), state.begin(), state.end());
  in.push_back(optimizer.traced_scalars(lr, model, device));
  return state.size();
}

}  // namespace

TracedStep::TracedStep(const ModelConfig& config, burn::optim::Optimizer& optimizer,
                       std::optional<burn::DType> autocast, burn::amp::GradScaler* scaler, Average average)
    : config_(config), optimizer_(&optimizer), autocast_(autocast), scaler_(scaler), average_(std::move(average)) {}

StepResult TracedStep::operator()(Model& model, const burn::data::MnistBatch& batch, double lr) {
  return average_ ? averaged_step(model, batch, lr) : whole_step(model, batch, lr);
}

StepResult TracedStep::whole_step(Model& model, const burn::data::MnistBatch& batch, double lr) {
  // Inputs: the model's tensors, the optimiser's state, the scalars, the
  // batch (and the loss scales).
  Tensors in = burn::module::tensors_of(model);
  const std::size_t n_model = in.size();
  const std::size_t n_state = append_update_inputs(in, *optimizer_, model, lr, batch.images.device());
  in.push_back(batch.images.ref());
  in.push_back(batch.targets.ref());
  const bool scaled = scaler_ != nullptr;
  if (scaled) in.push_back(scaler_->traced_scales(batch.images.device()));

  if (!step_) {
    step_.emplace(
        [config = config_, optimizer = optimizer_, autocast = autocast_, scaled, n_model, n_state](const Tensors& t) {
          const Model m = burn::module::with_tensors(config.init(t[0]->device), std::span(t).first(n_model));
          const std::size_t batch_at = n_model + n_state + 1;
          const burn::detail::TensorRef scales = scaled ? t[batch_at + 2] : nullptr;
          auto f = forward_backward(m, burn::Tensor<4>(t[batch_at]), burn::Tensor<1, burn::Int>(t[batch_at + 1]),
                                    autocast, scales);
          auto grads = GradientsParams::from_grads(f.grads, m);
          std::optional<burn::Tensor<1, burn::Bool>> found;
          if (scaled) found = burn::amp::GradScaler::traced_unscale(grads, scales);
          Tensors out =
              update_results(*optimizer, t[n_model + n_state], m, grads, std::span(t).subspan(n_model, n_state));
          out.push_back(f.loss.ref());
          out.push_back(f.correct.ref());
          if (found) out.push_back(found->ref());
          return out;
        },
        burn::specs_of(in));
  }

  const Tensors out = (*step_)(in);
  apply(model, out, n_model, n_state, n_model + n_state + 2);
  return StepResult{burn::Tensor<1>(out[n_model + n_state]), burn::Tensor<1, burn::Int>(out[n_model + n_state + 1])};
}

StepResult TracedStep::averaged_step(Model& model, const burn::data::MnistBatch& batch, double lr) {
  // First part: the model's tensors and the batch (and the loss scales) in;
  // the model's tensors after the forward (batch-norm statistics move), the
  // gradients of the trainable parameters, the loss and the count out.
  Tensors in = burn::module::tensors_of(model);
  const std::size_t n_model = in.size();
  in.push_back(batch.images.ref());
  in.push_back(batch.targets.ref());
  const bool scaled = scaler_ != nullptr;
  const burn::detail::TensorRef scales = scaled ? scaler_->traced_scales(batch.images.device()) : nullptr;
  if (scaled) in.push_back(scales);
  if (!gradients_) {
    gradients_.emplace(
        [config = config_, autocast = autocast_, scaled, n_model](const Tensors& t) {
          const Model m = burn::module::with_tensors(config.init(t[0]->device), std::span(t).first(n_model));
          auto f = forward_backward(m, burn::Tensor<4>(t[n_model]), burn::Tensor<1, burn::Int>(t[n_model + 1]),
                                    autocast, scaled ? t[n_model + 2] : nullptr);
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

  // Second part: the model's tensors, the optimiser's state, the scalars,
  // the averaged gradients (and the loss scales) in; the new tensors and
  // state (and the check) out.
  in = burn::module::tensors_of(model);
  const std::size_t n_state = append_update_inputs(in, *optimizer_, model, lr, batch.images.device());
  std::size_t n_grads = 0;
  for_each_trainable(model, [&](const burn::module::ParamBase& p) {
    in.push_back(*averaged.get_ref(p.id()));
    ++n_grads;
  });
  if (scaled) in.push_back(scales);
  if (!update_) {
    update_.emplace(
        [config = config_, optimizer = optimizer_, scaled, n_model, n_state, n_grads](const Tensors& t) {
          const Model m = burn::module::with_tensors(config.init(t[0]->device), std::span(t).first(n_model));
          GradientsParams grads;
          std::size_t g = n_model + n_state + 1;
          for_each_trainable(m, [&](const burn::module::ParamBase& p) { grads.insert_ref(p.id(), t[g++]); });
          std::optional<burn::Tensor<1, burn::Bool>> found;
          if (scaled) found = burn::amp::GradScaler::traced_unscale(grads, t[n_model + n_state + 1 + n_grads]);
          Tensors out =
              update_results(*optimizer, t[n_model + n_state], m, grads, std::span(t).subspan(n_model, n_state));
          if (found) out.push_back(found->ref());
          return out;
        },
        burn::specs_of(in));
  }
  apply(model, (*update_)(in), n_model, n_state, n_model + n_state);
  return result;
}

void TracedStep::apply(Model& model, const Tensors& out, std::size_t n_model, std::size_t n_state,
                       std::size_t found_at) {
  const bool found_inf = scaler_ && burn::Tensor<1, burn::Bool>(out.at(found_at)).into_scalar<bool>();
  if (scaler_) scaler_->commit_traced(found_inf);
  if (!found_inf) {
    model = burn::module::with_tensors(std::move(model), std::span(out).first(n_model));
    optimizer_->commit_traced(model, std::span(out).subspan(n_model, n_state));
  } else {
    // A skipped step: the parameters and the optimiser's state stay, and the
    // batch-norm statistics the forward moved are kept, as GradScaler::step
    // returns the module the forward ran on.
    Tensors kept = burn::module::tensors_of(model);
    std::size_t k = 0;
    burn::module::for_each_tensor(model, [&](const std::string&, const burn::module::ParamBase& p) {
      if (!p.is_trainable()) kept[k] = out[k];
      ++k;
    });
    model = burn::module::with_tensors(std::move(model), kept);
  }
  if (scaler_) scaler_->update();
}

}  // namespace burn_train
#endif
