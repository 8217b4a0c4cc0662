// One pass over a loader: a training epoch (forward, backward, optimiser
// step per batch) or a test pass (forward only), with a progress display.
#pragma once

#include <burn/amp.hpp>
#include <burn/lr_scheduler/lr_scheduler.hpp>
#include <burn/nn/loss/cross_entropy.hpp>
#include <burn/optim/gradients_params.hpp>
#include <burn/optim/optimizer.hpp>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data.hpp"
#include "metrics.hpp"
#include "model.hpp"
#include "progress_bar.hpp"

namespace burn_train {

struct PassSettings {
  std::string label;  ///< progress prefix, "epoch 1/5 train"
  ProgressStyle style = ProgressStyle::Lines;
  std::optional<std::size_t> limit_batches;  ///< stop after this many batches
  /// A test pass's forward and loss under burn::amp::Autocast in this dtype
  /// (--precision; the training step takes it from eager_step or TracedStep).
  std::optional<burn::DType> autocast;
  /// The loss scaler of f16 training, if any: a non-finite loss on a step
  /// it skipped is an overflow, not divergence.
  burn::amp::GradScaler* scaler = nullptr;
};

/// Backward from a batch's loss: the gradients the optimiser step takes
/// (averaged over the ranks when training data-parallel).
using BackwardFn = std::function<burn::optim::GradientsParams(const burn::Tensor<1>& loss, const Model& model)>;

/// What a training step gives the pass: the batch's mean loss and how many
/// of its items the model (before the update) classified right. Both may
/// still be computing; the pass reads them after the step.
struct StepResult {
  burn::Tensor<1> loss;                ///< [1]
  burn::Tensor<1, burn::Int> correct;  ///< [1]
};

/// One optimiser step on `batch` with learning rate `lr`; replaces `model`
/// by the updated one.
using StepFn = std::function<StepResult(Model& model, const burn::data::MnistBatch& batch, double lr)>;

/// The step run operation by operation: forward and loss (under autocast in
/// `autocast`'s dtype if set), the gradients `backward` gives, then
/// `optimizer` (through `scaler` if not null). The optimiser, loss and
/// scaler must outlive the returned function.
StepFn eager_step(burn::optim::Optimizer& optimizer, const burn::nn::loss::CrossEntropyLoss& loss,
                  std::optional<burn::DType> autocast, burn::amp::GradScaler* scaler, BackwardFn backward);

/// How many items of `targets` have their arg-max logit at the target class.
burn::Tensor<1, burn::Int> count_correct(const burn::Tensor<2>& logits, const burn::Tensor<1, burn::Int>& targets);

/// Trains `model` for one epoch of `loader` (epoch index `epoch` fixes the
/// shuffle), one `step` per batch with the learning rate `schedule` gives
/// for it. Each batch's loss is appended to `batch_losses`. Throws
/// burn::Error("[train] ...") if the loss stops being finite.
PassMetrics train_epoch(Model& model, const StepFn& step, burn::lr_scheduler::LrScheduler& schedule,
                        const Loader& loader, std::size_t epoch, const PassSettings& settings,
                        std::vector<double>& batch_losses);

/// Mean loss and accuracy of `model` (an evaluation copy: no autodiff) on `loader`.
PassMetrics evaluate(const Model& model, const burn::nn::loss::CrossEntropyLoss& loss, const Loader& loader,
                     const PassSettings& settings);
/// The same for any function from images to logits (a model imported from ONNX).
using ForwardFn = std::function<burn::Tensor<2>(const burn::Tensor<4>& images)>;
PassMetrics evaluate(const ForwardFn& forward, const burn::nn::loss::CrossEntropyLoss& loss, const Loader& loader,
                     const PassSettings& settings);

}  // namespace burn_train
