#include "passes.hpp"

#include <fmt/format.h>

#include <array>
#include <burn/autodiff.hpp>
#include <burn/optim/gradients_params.hpp>
#include <cmath>
#include <cstdint>

namespace burn_train {
namespace {

// Items whose arg-max logit is the target class.
std::size_t count_correct(const burn::Tensor<2>& logits, const burn::Tensor<1, burn::Int>& targets) {
  const std::size_t n = targets.dims()[0];
  const auto predicted = logits.detach().argmax(1);  // [n, 1]
  const auto expected = targets.reshape(std::array<std::size_t, 2>{n, 1});
  return static_cast<std::size_t>(predicted.equal(expected).to_int().sum().into_scalar<std::int64_t>());
}

std::size_t pass_length(const Loader& loader, const std::optional<std::size_t>& limit) {
  const std::size_t n = loader.num_batches();
  return limit ? std::min(n, *limit) : n;
}

}  // namespace

PassMetrics train_epoch(Model& model, burn::optim::Optimizer& optimizer, const burn::nn::loss::CrossEntropyLoss& loss,
                        burn::lr_scheduler::LrScheduler& schedule, const Loader& loader, std::size_t epoch,
                        const PassSettings& settings, std::vector<double>& batch_losses) {
  const std::size_t total = pass_length(loader, settings.limit_batches);
  ProgressBar bar(settings.label, total, settings.style);
  double loss_sum = 0;
  std::size_t correct = 0, seen = 0, done = 0;
  auto batches = loader.iter_epoch(epoch);
  for (auto& batch : batches) {
    if (done == total) break;  // --limit-batches; leaving early stops the loader's workers
    const std::size_t n = batch.targets.dims()[0];
    const auto logits = model.forward(batch.images);
    const auto batch_loss = loss.forward(logits, batch.targets);
    auto grads = batch_loss.backward();
    auto grads_params = burn::optim::GradientsParams::from_grads(grads, model);
    model = optimizer.step(schedule.step(), std::move(model), std::move(grads_params));

    const double value = batch_loss.into_scalar<double>();
    if (!std::isfinite(value))
      throw burn::Error("train", fmt::format("the loss became {} at epoch {}, batch {}; training diverged (try a "
                                             "smaller --lr)",
                                             value, epoch + 1, done + 1));
    batch_losses.push_back(value);
    loss_sum += value * static_cast<double>(n);
    correct += count_correct(logits, batch.targets);
    seen += n;
    ++done;
    bar.update(done, loss_sum / static_cast<double>(seen), static_cast<double>(correct) / static_cast<double>(seen),
               seen);
  }
  bar.finish();
  return PassMetrics{seen ? loss_sum / static_cast<double>(seen) : 0.0,
                     seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0,
                     seen,
                     done,
                     bar.elapsed(),
                     bar.cpu_elapsed()};
}

PassMetrics evaluate(const Model& model, const burn::nn::loss::CrossEntropyLoss& loss, const Loader& loader,
                     const PassSettings& settings) {
  const burn::NoGradGuard no_grad;
  const std::size_t total = pass_length(loader, settings.limit_batches);
  ProgressBar bar(settings.label, total, settings.style);
  double loss_sum = 0;
  std::size_t correct = 0, seen = 0, done = 0;
  auto batches = loader.iter_epoch(0);  // unshuffled: the order does not matter
  for (auto& batch : batches) {
    if (done == total) break;
    const std::size_t n = batch.targets.dims()[0];
    const auto logits = model.forward(batch.images);
    loss_sum += loss.forward(logits, batch.targets).into_scalar<double>() * static_cast<double>(n);
    correct += count_correct(logits, batch.targets);
    seen += n;
    ++done;
    bar.update(done, loss_sum / static_cast<double>(seen), static_cast<double>(correct) / static_cast<double>(seen),
               seen);
  }
  bar.finish();
  return PassMetrics{seen ? loss_sum / static_cast<double>(seen) : 0.0,
                     seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0,
                     seen,
                     done,
                     bar.elapsed(),
                     bar.cpu_elapsed()};
}

}  // namespace burn_train
