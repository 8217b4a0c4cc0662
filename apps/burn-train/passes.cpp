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

PassMetrics train_epoch(Model& model, burn::optim::Optimizer& optimizer, const burn::nn::loss::CrossEntropyLoss& loss,
                        burn::lr_scheduler::LrScheduler& schedule, const Loader& loader, std::size_t epoch,
                        const PassSettings& settings, std::vector<double>& batch_losses, const BackwardFn& backward) {
  const std::size_t total = pass_length(loader, settings.limit_batches);
  ProgressBar bar(settings.label, total, settings.style);
  Tally tally;
  auto batches = loader.iter_epoch(epoch);
  for (auto& batch : batches) {
    if (tally.done == total) break;  // --limit-batches; leaving early stops the loader's workers
    const std::size_t n = batch.targets.dims()[0];
    const auto [logits, batch_loss] = [&] {
      std::optional<burn::amp::Autocast> autocast;
      if (settings.autocast) autocast.emplace(batch.images.device(), *settings.autocast);
      auto out = model.forward(batch.images);
      auto l = loss.forward(out, batch.targets);
      return std::pair{std::move(out), std::move(l)};
    }();
    const double lr = schedule.step();
    if (settings.scaler) {
      auto grads = backward(settings.scaler->scale(batch_loss), model);
      model = settings.scaler->step(optimizer, lr, std::move(model), std::move(grads));
      settings.scaler->update();
    } else {
      model = optimizer.step(lr, std::move(model), backward(batch_loss, model));
    }

    const double value = batch_loss.into_scalar<double>();
    // With loss scaling, an f16 overflow in the forward is a skipped step,
    // not divergence (the scaler stops a run whose every step overflows).
    if (!std::isfinite(value) && settings.scaler && settings.scaler->found_inf()) continue;
    if (!std::isfinite(value))
      throw burn::Error("train", fmt::format("the loss became {} at epoch {}, batch {}; training diverged (try a "
                                             "smaller --lr)",
                                             value, epoch + 1, tally.done + 1));
    batch_losses.push_back(value);
    tally.add(bar, value, count_correct(logits, batch.targets), n);
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
    tally.add(bar, loss.forward(logits, batch.targets).into_scalar<double>(), count_correct(logits, batch.targets),
              batch.targets.dims()[0]);
  }
  return tally.finish(bar);
}

}  // namespace burn_train
