#include "traced_step.hpp"

#if BURN_HAS_CAPTURE
#include <burn/amp.hpp>
#include <burn/module/module.hpp>
#include <burn/nn/loss/cross_entropy.hpp>
#include <burn/optim/gradients_params.hpp>
#include <span>
#include <utility>
#include <vector>

namespace burn_train {

using Tensors = burn::TracedFunction::Tensors;

TracedStep::TracedStep(const ModelConfig& config, burn::optim::Optimizer& optimizer,
                       std::optional<burn::DType> autocast)
    : config_(config), optimizer_(&optimizer), autocast_(autocast) {}

StepResult TracedStep::operator()(Model& model, const burn::data::MnistBatch& batch, double lr) {
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
    // The function builds the model's structure on the capture device and
    // takes its state from the inputs; what it captures (the configuration,
    // the optimiser) outlives the recording, which may be made again for
    // another batch size.
    step_.emplace(
        [config = config_, optimizer = optimizer_, autocast = autocast_, n_model, n_state](const Tensors& t) {
          const burn::Device capture = t[0]->device;
          const Model m = burn::module::with_tensors(config.init(capture), std::span(t).first(n_model));
          const burn::Tensor<4> images(t[n_model + n_state + 1]);
          const burn::Tensor<1, burn::Int> targets(t[n_model + n_state + 2]);
          const auto [logits, loss] = [&] {
            std::optional<burn::amp::Autocast> scope;
            if (autocast) scope.emplace(capture, *autocast);
            auto out = m.forward(images);
            auto l = burn::nn::loss::CrossEntropyLossConfig{}.init(capture).forward(out, targets);
            return std::pair{std::move(out), std::move(l)};
          }();
          const auto correct = count_correct(logits, targets);
          auto grads = loss.backward();
          auto [next, next_state] =
              optimizer->traced_step(t[n_model + n_state], m, burn::optim::GradientsParams::from_grads(grads, m),
                                     std::span(t).subspan(n_model, n_state));
          Tensors out = burn::module::tensors_of(next);
          out.insert(out.end(), next_state.begin(), next_state.end());
          out.push_back(loss.detach().ref());
          out.push_back(correct.ref());
          return out;
        },
        burn::specs_of(in));
  }

  const Tensors out = (*step_)(in);
  model = burn::module::with_tensors(std::move(model), std::span(out).first(n_model));
  optimizer_->commit_traced(model, std::span(out).subspan(n_model, n_state));
  return StepResult{burn::Tensor<1>(out[n_model + n_state]), burn::Tensor<1, burn::Int>(out[n_model + n_state + 1])};
}

}  // namespace burn_train
#endif
