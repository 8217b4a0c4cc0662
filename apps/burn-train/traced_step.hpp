// burn-train --trace: the training step recorded once and replayed for every
// batch (burn::trace, docs/trace.md). The recording holds the forward, the
// loss, the backward, Adam's update and the count of correct predictions;
// a call takes the model's tensors (parameters and batch-norm statistics),
// the optimiser's state, the step's scalars (learning rate, bias
// corrections) and the batch, and gives back the new tensors, the new
// state, the loss and the count. Dropout draws its masks anew on every call
// from the device's generator, in the order the eager step draws them, so a
// traced run trains the same model as an eager one, bit for bit.
//
// Data-parallel training averages the gradients over the ranks between the
// backward and the update, which is communication, not an operation a
// recording holds: there the step is two recordings, the forward and
// backward (giving the gradients) and the update (taking the averaged
// ones), with the all-reduce between them. With f16 loss scaling the scale
// is an input, the backward starts from the scaled loss, and the update
// unscales the gradients and reports whether any held inf or nan; such a
// step is not applied (the batch-norm statistics its forward moved are),
// as GradScaler::step skips it.
#pragma once

#include <burn/amp/grad_scaler.hpp>
#include <burn/config.hpp>
#include <burn/dtype.hpp>
#include <burn/optim/gradients_params.hpp>
#include <burn/optim/optimizer.hpp>
#include <functional>
#include <optional>

#include "model.hpp"
#include "passes.hpp"

#if BURN_HAS_CAPTURE
#include <burn/trace.hpp>
#endif

namespace burn_train {

#if BURN_HAS_CAPTURE
/// The traced step for models of `config`, trained by `optimizer` (which
/// must outlive it), with the forward and loss under autocast in
/// `autocast`'s dtype if set, with loss scaling when `scaler` is not null
/// (which must outlive it too). The model it steps must live on a device
/// without autodiff (module::valid): the gradients are computed inside the
/// recording. A batch of another size (the last of an epoch) is recorded
/// once more, on its first call.
class TracedStep {
 public:
  /// Averages a step's gradients over the ranks (Distributed::average).
  using Average =
      std::function<burn::optim::GradientsParams(const burn::optim::GradientsParams& grads, const Model& model)>;

  /// One recording per step, or, given `average`, two around it.
  TracedStep(const ModelConfig& config, burn::optim::Optimizer& optimizer, std::optional<burn::DType> autocast,
             burn::amp::GradScaler* scaler, Average average = {});

  StepResult operator()(Model& model, const burn::data::MnistBatch& batch, double lr);

 private:
  StepResult whole_step(Model& model, const burn::data::MnistBatch& batch, double lr);
  StepResult averaged_step(Model& model, const burn::data::MnistBatch& batch, double lr);
  // Puts a call's results back: the model's tensors and the optimiser's
  // state from `out` (at 0 and `n_model`), or, when the scaler's check
  // found inf or nan in the flag at `found_at`, only the batch-norm
  // statistics; then moves the scaler's schedule on.
  void apply(Model& model, const std::vector<burn::detail::TensorRef>& out, std::size_t n_model, std::size_t n_state,
             std::size_t found_at);

  ModelConfig config_;
  burn::optim::Optimizer* optimizer_;
  std::optional<burn::DType> autocast_;
  burn::amp::GradScaler* scaler_;
  Average average_;
  // Made at the first call, when the input specs are known: the whole step,
  // or its two parts.
  std::optional<burn::TracedFunction> step_, gradients_, update_;
};
#endif

}  // namespace burn_train
