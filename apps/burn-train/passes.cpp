#include "passes.hpp"

#include <fmt/format.h>

#include <array>
#include <burn/autodiff.hpp>
#include <burn/optim/gradients_params.hpp>
#include <cmath>
#include <cstdint>

namespace burn_train {
namespace {

std::size_t pass_length(const Loader& loader, const std::optional<std::size_t>& limit) {
  const std::size_t n = loader.num_batches();
  return limit ? std::min(n, *limit) : n;
}

// A pass's running sums, shown on the bar after every batch.
struct Tally {
  double loss_sum = 0;
  std::size_t correct = 0, seen = 0, done = 0;

  double mean_loss() const { return seen ? loss_sum / static_cast<double>(seen) : 0.0; }
  double accuracy() const { return seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0; }
  void add(ProgressBar& bar, double batch_loss, std::size_t batch_correct, std::size_t n) {
    loss_sum += batch_loss * static_cast<double>(n);
    correct += batch_correct;
    seen += n;
    ++done;
    bar.update(done, mean_loss(), accuracy(), seen);
  }
  PassMetrics finish(ProgressBar& bar) const {
    bar.finish();
    return PassMetrics{mean_loss(), accuracy(), seen, done, bar.elapsed(), bar.cpu_elapsed()};
  }
};

}  // namespace

burn::Tensor<1, burn::Int> count_correct(const burn::Tensor<2>& logits, const burn::Tensor<1, burn::Int>& targets) {
  const std::size_t n = targets.dims()[0];
  const auto predicted = logits.detach().argmax(1);  // [n, 1]
  const auto expected = targets.reshape(std::array<std::size_t, 2>{n, 1});
  return predicted.equal(expected).to_int().sum();
}

StepFn eager_step(burn::optim::Optimizer& optimizer, const burn::nn::loss::CrossEntropyLoss& loss,
                  std::optional<burn::DType> autocast, burn::amp::GradScaler* scaler, BackwardFn backward) {
  return [&optimizer, &loss, autocast, scaler, backward = std::move(backward)](
             Model& model, const burn::data::MnistBatch& batch, double lr) {
    const auto [logits, batch_loss] = [&] {
      std::optional<burn::amp::Autocast> scope;
      if (autocast) scope.emplace(batch.images.device(), *autocast);
      auto out = model.forward(batch.images);
      auto l = loss.forward(out, batch.targets);
      return std::pair{std::move(out), std::move(l)};
    }();
    // Right answers of the model as it was before this step's update.
    auto correct = count_correct(logits, batch.targets);
    if (scaler) {
      auto grads = backward(scaler->scale(batch_loss), model);
      model = scaler->step(optimizer, lr, std::move(model), std::move(grads));
      scaler->update();
    } else {
      model = optimizer.step(lr, std::move(model), backward(batch_loss, model));
    }
    return StepResult{batch_loss.detach(), std::move(correct)};
  };
}

PassMetrics train_epoch(Model& model, const StepFn& step, burn::lr_scheduler::LrScheduler& schedule,
                        const Loader& loader, std::size_t epoch, const PassSettings& settings,
                        std::vector<double>& batch_losses) {
  const std::size_t total = pass_length(loader, settings.limit_batches);
  ProgressBar bar(settings.label, total, settings.style);
  Tally tally;
  auto batches = loader.iter_epoch(epoch);
  for (auto& batch : batches) {
    if (tally.done == total) break;  // --limit-batches; leaving early stops the loader's workers
    const std::size_t n = batch.targets.dims()[0];
    const auto [batch_loss, correct] = step(model, batch, schedule.step());
    const double value = batch_loss.into_scalar<double>();
    // With loss scaling, an f16 overflow in the forward is a skipped step,
    // not divergence (the scaler stops a run whose every step overflows).
    if (!std::isfinite(value) && settings.scaler && settings.scaler->found_inf()) continue;
    if (!std::isfinite(value))
      throw burn::Error("train", fmt::format("the loss became {} at epoch {}, batch {}; training diverged (try a "
                                             "smaller --lr)",
                                             value, epoch + 1, tally.done + 1));
    batch_losses.push_back(value);
    tally.add(bar, value, static_cast<std::size_t>(correct.into_scalar<std::int64_t>()), n);
  }
  return tally.finish(bar);
}

PassMetrics evaluate(const Model& model, const burn::nn::loss::CrossEntropyLoss& loss, const Loader& loader,
                     const PassSettings& settings) {
  return evaluate([&model](const burn::Tensor<4>& images) { return model.forward(images); }, loss, loader, settings);
}

PassMetrics evaluate(const ForwardFn& forward, const burn::nn::loss::CrossEntropyLoss& loss, const Loader& loader,
                     const PassSettings& settings) {
  const burn::NoGradGuard no_grad;
  const std::size_t total = pass_length(loader, settings.limit_batches);
  ProgressBar bar(settings.label, total, settings.style);
  Tally tally;
  auto batches = loader.iter_epoch(0);  // unshuffled: the order does not matter
  for (auto& batch : batches) {
    if (tally.done == total) break;
    std::optional<burn::amp::Autocast> autocast;
    if (settings.autocast) autocast.emplace(batch.images.device(), *settings.autocast);
    const auto logits = forward(batch.images);
    tally.add(bar, loss.forward(logits, batch.targets).into_scalar<double>(),
              static_cast<std::size_t>(count_correct(logits, batch.targets).into_scalar<std::int64_t>()),
              batch.targets.dims()[0]);
  }
  return tally.finish(bar);
}

}  // namespace burn_train
