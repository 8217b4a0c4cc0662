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
  /// Forward and loss under burn::amp::Autocast in this dtype (--precision).
  std::optional<burn::DType> autocast;
  /// Loss scaling for f16 training: the scaled loss goes to backward and the
  /// scaler steps the optimiser (skipping steps with inf/nan gradients).
  burn::amp::GradScaler* scaler = nullptr;
};

/// Backward from a batch's loss: the gradients the optimiser step takes
/// (averaged over the ranks when training data-parallel).
using BackwardFn = std::function<burn::optim::GradientsParams(const burn::Tensor<1>& loss, const Model& model)>;

/// Trains `model` for one epoch of `loader` (epoch index `epoch` fixes the
/// shuffle); `model` is replaced by the updated one after every step, taken
/// with the learning rate `schedule` gives for it and the gradients
/// `backward` gives. Each
/// batch's loss is appended to `batch_losses`. Throws burn::Error("[train] ...")
/// if the loss stops being finite.
PassMetrics train_epoch(Model& model, burn::optim::Optimizer& optimizer, const burn::nn::loss::CrossEntropyLoss& loss,
                        burn::lr_scheduler::LrScheduler& schedule, const Loader& loader, std::size_t epoch,
                        const PassSettings& settings, std::vector<double>& batch_losses, const BackwardFn& backward);

/// Mean loss and accuracy of `model` (an evaluation copy: no autodiff) on `loader`.
PassMetrics evaluate(const Model& model, const burn::nn::loss::CrossEntropyLoss& loss, const Loader& loader,
                     const PassSettings& settings);
/// The same for any function from images to logits (a model imported from ONNX).
using ForwardFn = std::function<burn::Tensor<2>(const burn::Tensor<4>& images)>;
PassMetrics evaluate(const ForwardFn& forward, const burn::nn::loss::CrossEntropyLoss& loss, const Loader& loader,
                     const PassSettings& settings);

}  // namespace burn_train
