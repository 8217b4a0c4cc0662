#include "trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <burn/config.hpp>
#include <burn/device.hpp>
#include <burn/lr_scheduler/constant.hpp>
#include <burn/lr_scheduler/cosine.hpp>
#include <burn/onnx.hpp>
#include <burn/optim/adam.hpp>
#include <burn/quant.hpp>
#include <burn/record/module_record.hpp>
#include <charconv>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string_view>
#include <system_error>

#include "checkpoint.hpp"
#include "data.hpp"
#include "distributed.hpp"
#include "metrics.hpp"
#include "model.hpp"
#include "passes.hpp"
#include "preflight.hpp"
#include "traced_step.hpp"

namespace burn_train {
namespace {

burn::Device make_device(const Options& options) {
  burn::Device device = options.device.empty() ? burn::Device() : burn::Device::parse(options.device);
  if (options.threads) device.set_num_threads(*options.threads);
  return device;
}

// Dropout masks of epoch e depend only on (seed, e, rank), so a resumed run
// draws the same masks as an uninterrupted one, and each rank its own.
std::uint64_t epoch_seed(std::uint64_t seed, std::size_t epoch, int rank) {
  return seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(epoch) + 1 +
         static_cast<std::uint64_t>(rank) * 0xBF58476D1CE4E5B9ull;
}

constexpr std::string_view kSchedulerPrefix = "scheduler.";

// The schedule spans the whole run (all epochs, --limit-batches respected),
// so the last batch of the last epoch trains with the smallest rate.
std::unique_ptr<burn::lr_scheduler::LrScheduler> make_scheduler(const Options& options, std::size_t total_steps) {
  if (options.lr_schedule == "constant") return std::make_unique<burn::lr_scheduler::ConstantLr>(options.lr);
  return std::make_unique<burn::lr_scheduler::CosineAnnealingLrScheduler>(
      burn::lr_scheduler::CosineAnnealingLrSchedulerConfig{options.lr, std::max<std::size_t>(1, total_steps)}.init());
}

double mean(const std::vector<double>& v, std::size_t begin, std::size_t end) {
  return std::accumulate(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end),
                         0.0) /
         static_cast<double>(end - begin);
}

/// --precision: autocast in the 16-bit dtype for training and testing; f16
/// also scales the loss (bf16 has f32's range and needs no scaler).
struct Precision {
  std::optional<burn::DType> autocast;
  bool loss_scaling = false;
};

Precision precision_of(const std::string& name) {
  if (name == "bf16") return {burn::DType::BF16, false};
  if (name == "f16") return {burn::DType::F16, true};
  return {};
}

// The loss scaler's state in checkpoint.json's settings.
constexpr std::string_view kLossScale = "loss_scale";
constexpr std::string_view kLossScaleGoodSteps = "loss_scale_good_steps";

void save_checkpoint(const Options& options, const ModelConfig& config, const Model& model,
                     const burn::optim::Optimizer& optimizer, const burn::lr_scheduler::LrScheduler& schedule,
                     const burn::amp::GradScaler* scaler, std::size_t epochs_done,
                     const std::vector<EpochMetrics>& history, int world_size) {
  CheckpointInfo info;
  info.epochs_done = epochs_done;
  info.model_file = model_checkpoint_path(options.checkpoint_dir, epochs_done);
  info.optimizer_file = optimizer_checkpoint_path(options.checkpoint_dir, epochs_done);
  info.model_config = config.to_map();
  info.settings = {{"seed", std::to_string(options.seed)},     {"batch_size", std::to_string(options.batch_size)},
                   {"epochs", std::to_string(options.epochs)}, {"lr", fmt::format("{}", options.lr)},
                   {"lr_schedule", options.lr_schedule},       {"world_size", std::to_string(world_size)}};
  for (const auto& [key, value] : schedule.state()) info.settings[std::string(kSchedulerPrefix) + key] = value;
  if (scaler) {
    // Exact in text ({} prints the shortest form that reads back the same).
    info.settings[std::string(kLossScale)] = fmt::format("{}", scaler->get_scale());
    info.settings[std::string(kLossScaleGoodSteps)] = std::to_string(scaler->growth_tracker());
  }
  info.history_json = history_to_json(history);
  burn::record::save_module(model, info.model_file, {{"burn-train.epochs_done", std::to_string(epochs_done)}});
  optimizer.save(info.optimizer_file);
  commit_checkpoint(options.checkpoint_dir, info);
}

struct Resumed {
  std::size_t epochs_done = 0;
  std::vector<EpochMetrics> history;
};

// Every rank reads the checkpoint (its directory must be visible to all of
// them): each needs the optimiser state, which the ranks keep identical.
/// Restores the loss scaler from the checkpoint's settings, where the run
/// that wrote it scaled the loss; a scaler with no saved state starts at its
/// initial scale.
void resume_loss_scale(const CheckpointInfo& info, burn::amp::GradScaler& scaler, bool say) {
  const auto scale = info.settings.find(std::string(kLossScale));
  const auto good = info.settings.find(std::string(kLossScaleGoodSteps));
  if (scale == info.settings.end() || good == info.settings.end()) {
    if (say) fmt::print("note: the checkpoint was trained without loss scaling; the f16 scale starts afresh\n");
    return;
  }
  double value = 0.0;
  std::size_t steps = 0;
  const auto parse = [](const std::string& text, auto& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
  };
  if (!parse(scale->second, value) || !parse(good->second, steps))
    throw burn::Error("checkpoint", fmt::format("checkpoint.json has a malformed loss scale ('{}', '{}'); delete the "
                                                "checkpoint directory or resume without --precision f16",
                                                scale->second, good->second));
  scaler.load_state(value, steps);
}

Resumed resume(const Options& options, const ModelConfig& config, const burn::Device& device, Model& model,
               burn::optim::Optimizer& optimizer, burn::lr_scheduler::LrScheduler& schedule,
               burn::amp::GradScaler* scaler, const Distributed& dist) {
  const CheckpointInfo info = read_checkpoint(options.checkpoint_dir);
  if (info.model_config != config.to_map())
    throw burn::Error("checkpoint", fmt::format("'{}' holds a different model than this burn-train builds; use "
                                                "another --checkpoint-dir or delete this one",
                                                options.checkpoint_dir.string()));
  const auto setting = [&](const std::string& key) {
    const auto it = info.settings.find(key);
    return it == info.settings.end() ? std::string() : it->second;
  };
  if (setting("lr_schedule") != options.lr_schedule)
    throw burn::Error("checkpoint", fmt::format("the checkpoint in '{}' was trained with --lr-schedule {}; resume "
                                                "with the same schedule",
                                                options.checkpoint_dir.string(), setting("lr_schedule")));
  const bool say = dist.is_leader();
  if (say && setting("batch_size") != std::to_string(options.batch_size))
    fmt::print("note: the checkpoint was trained with batch size {}, continuing with {}\n", setting("batch_size"),
               options.batch_size);
  if (say && setting("epochs") != std::to_string(options.epochs) && options.lr_schedule != "constant")
    fmt::print("note: the checkpoint's run was planned for {} epoch(s); the {} schedule now spans {}\n",
               setting("epochs"), options.lr_schedule, options.epochs);
  const std::string world = setting("world_size").empty() ? "1" : setting("world_size");
  if (say && world != std::to_string(dist.world_size()))
    fmt::print("note: the checkpoint was trained on {} rank(s), continuing on {} (each rank's shards change)\n", world,
               dist.world_size());
  std::map<std::string, std::string> schedule_state;
  for (const auto& [key, value] : info.settings)
    if (key.starts_with(kSchedulerPrefix)) schedule_state[key.substr(kSchedulerPrefix.size())] = value;
  schedule.load_state(schedule_state);
  if (scaler) resume_loss_scale(info, *scaler, say);
  model = burn::record::load_module(std::move(model), info.model_file);
  optimizer.load(info.optimizer_file, device);
  return Resumed{info.epochs_done, history_from_json(info.history_json)};
}

}  // namespace

int run_training(const Options& options) {
#if !BURN_HAS_AUTODIFF
  (void)options;
  throw burn::Error("burn-train",
                    "this build of burn has no autodiff (configured with BURN_AUTODIFF=OFF); "
                    "reconfigure with -DBURN_AUTODIFF=ON to train");
#else
  check_outputs_writable(options);
  const burn::Device device = make_device(options);
  const burn::Device train_device = device.autodiff();
  // A traced step computes its gradients inside the recording: its model and
  // batches live on the plain device.
  const burn::Device step_device = options.trace ? device : train_device;
  const FashionMnist data = load_fashion_mnist(options.data_dir);
  // Under burn-run: this rank's shard of each pass (alone: all of it).
  Distributed dist = Distributed::from_env();
  const bool say = dist.is_leader();
  const auto shards = static_cast<std::size_t>(dist.world_size());
  const auto shard = static_cast<std::size_t>(dist.rank());
  // Training batches live on the model's device; test batches on the plain
  // one, where the evaluation copy of the model lives.
  const Loader train_loader(data.train, burn::data::MnistBatcher{step_device},
                            {.batch_size = options.batch_size,
                             .shuffle = true,
                             .seed = options.seed,
                             .num_workers = options.workers,
                             .num_shards = shards,
                             .shard = shard});
  const Loader test_loader(
      data.test, burn::data::MnistBatcher{device},
      {.batch_size = options.eval_batch_size, .num_workers = options.workers, .num_shards = shards, .shard = shard});

  const ModelConfig config;
  check_batches(options, config, device, train_loader.num_items(), test_loader.num_items());
  device.seed(options.seed);
  Model model = config.init(train_device);
  if (options.trace) model = burn::module::valid(std::move(model));  // same values and ids, no autodiff
  burn::optim::Optimizer optimizer = burn::optim::AdamConfig{}.init();
  const auto train_loss = burn::nn::loss::CrossEntropyLossConfig{}.init(train_device);
  const auto test_loss = burn::nn::loss::CrossEntropyLossConfig{}.init(device);

  const std::size_t steps_per_epoch =
      options.limit_batches ? std::min(*options.limit_batches, train_loader.num_batches()) : train_loader.num_batches();
  const auto schedule = make_scheduler(options, steps_per_epoch * options.epochs);

  std::size_t start_epoch = 0;
  std::vector<EpochMetrics> history;
  if (!options.checkpoint_dir.empty() && dist.is_leader()) {
    if (const std::size_t n = remove_stale_temporaries(options.checkpoint_dir))
      fmt::print("removed {} temporary file{} a killed run left in '{}'\n", n, n == 1 ? "" : "s",
                 options.checkpoint_dir.string());
  }
  const Precision precision = precision_of(options.precision);
  std::optional<burn::amp::GradScaler> scaler;
  if (precision.loss_scaling) scaler.emplace();
  if (options.resume) {
    auto resumed = resume(options, config, step_device, model, optimizer, *schedule, scaler ? &*scaler : nullptr, dist);
    start_epoch = resumed.epochs_done;
    history = std::move(resumed.history);
  }

  model = dist.broadcast(model);  // the ranks start equal

  const std::size_t threads = device.num_threads();
  if (say) {
    fmt::print("burn-train: Fashion-MNIST ({} training, {} test images) on {} ({} thread{})\n", data.train->size(),
               data.test->size(), device.to_string(), threads, threads == 1 ? "" : "s");
    fmt::print("model: {} parameters; Adam lr {} ({} schedule), batch size {}, {} epoch{}{}\n", model.num_params(),
               options.lr, options.lr_schedule, options.batch_size, options.epochs, options.epochs == 1 ? "" : "s",
               options.limit_batches ? fmt::format(", at most {} batches per pass", *options.limit_batches) : "");
    if (options.trace) fmt::print("step: traced (recorded once per batch size, then replayed)\n");
    if (precision.autocast)
      fmt::print("precision: {} autocast (f32 weights{})\n", options.precision,
                 precision.loss_scaling ? ", loss scaling" : "");
    if (dist.world_size() > 1)
      fmt::print("data parallel: {} ranks, each with batch size {} on its shard (global batch {})\n", dist.world_size(),
                 options.batch_size, options.batch_size * shards);
    if (start_epoch > 0)
      fmt::print("resuming from '{}': {} epoch{} done{}\n", options.checkpoint_dir.string(), start_epoch,
                 start_epoch == 1 ? "" : "s",
                 scaler
                     ? fmt::format(", loss scale {} after {} good steps", scaler->get_scale(), scaler->growth_tracker())
                     : "");
    std::fflush(stdout);
  }

  const ProgressStyle style = say ? progress_style(options.progress, stdout) : ProgressStyle::None;
  const auto settings = [&](std::string label) {
    return PassSettings{std::move(label), style, options.limit_batches, precision.autocast,
                        scaler ? &*scaler : nullptr};
  };
  const StepFn step = [&]() -> StepFn {
#if BURN_HAS_CAPTURE
    if (options.trace) {
      TracedStep::Average average;
      if (dist.world_size() > 1)
        average = [&dist](const burn::optim::GradientsParams& grads, const Model& current) {
          return dist.average(grads, current);
        };
      auto traced = std::make_shared<TracedStep>(config, optimizer, precision.autocast, scaler ? &*scaler : nullptr,
                                                 std::move(average));
      return [traced](Model& m, const burn::data::MnistBatch& batch, double lr) { return (*traced)(m, batch, lr); };
    }
#endif
    return eager_step(optimizer, train_loss, precision.autocast, scaler ? &*scaler : nullptr,
                      [&](const burn::Tensor<1>& loss, const Model& current) { return dist.backward(loss, current); });
  }();
  std::vector<double> batch_losses;
  for (std::size_t epoch = start_epoch; epoch < options.epochs; ++epoch) {
    device.seed(epoch_seed(options.seed, epoch, dist.rank()));
    const std::string prefix = fmt::format("epoch {}/{}", epoch + 1, options.epochs);
    EpochMetrics m;
    m.epoch = epoch + 1;
    m.train = dist.combine(
        train_epoch(model, step, *schedule, train_loader, epoch, settings(prefix + " train"), batch_losses));
    // The parameters agree already; batch-norm statistics are rank 0's from here.
    model = dist.broadcast(model);
    m.test = dist.combine(evaluate(model.valid(), test_loss, test_loader, settings(prefix + " test ")));
    m.memory = read_memory(device);
    history.push_back(m);
    if (say) {
      fmt::print("{}\n", format_epoch_line(m, options.epochs));
      if (!options.checkpoint_dir.empty()) {
        save_checkpoint(options, config, model, optimizer, *schedule, scaler ? &*scaler : nullptr, epoch + 1, history,
                        dist.world_size());
        fmt::print("checkpoint: {}\n", (options.checkpoint_dir / "checkpoint.json").string());
      }
      std::fflush(stdout);
    }
  }

  double final_accuracy = history.empty() ? 0.0 : history.back().test.accuracy;
  if (start_epoch >= options.epochs) {
    // Nothing left to train: report the checkpoint's model as it stands.
    if (say)
      fmt::print("the checkpoint already has {} epochs (--epochs {}); evaluating it\n", start_epoch, options.epochs);
    final_accuracy = dist.combine(evaluate(model.valid(), test_loss, test_loader, settings("test"))).accuracy;
  }

  if (say && !options.summary_json.empty()) {
    write_summary_json(options.summary_json,
                       RunInfo{device.to_string(), device.num_threads(), options.batch_size, options.lr, options.seed,
                               options.limit_batches, model.num_params(), options.trace},
                       history);
  }

#if BURN_HAS_ONNX
  if (say && !options.export_onnx.empty()) {
    // Pixels in [0, 1] as the loader feeds them, any batch size. The file is
    // read back and scored on the test set: what a user of the file gets.
    const auto inference = model.valid();
    burn::onnx::export_model(
        inference,
        burn::Tensor<4>::zeros({1, config.channels, config.height, config.width}, inference.fc1.weight->device()),
        options.export_onnx.string(),
        burn::onnx::ExportOptions{}
            .with_names({"pixels"}, {"logits"})
            .with_dynamic_batch()
            .with_graph_name("burn-train"));
    const auto imported = burn::onnx::Model::load(options.export_onnx.string(), device, /*trainable=*/false);
    const auto check = evaluate([&imported](const burn::Tensor<4>& images) { return imported.forward<2>(images); },
                                test_loss, test_loader, settings("onnx test"));
    fmt::print("onnx export: {} (test accuracy {:.4f} when read back)\n", options.export_onnx.string(), check.accuracy);
  }
#endif

  if (say && options.quantize == "int8") {
    // Post-training quantization: calibrate the layers' input ranges on the
    // first training images (unshuffled, on the plain device), quantize, test.
    constexpr std::size_t kCalibrationImages = 2000, kCalibrationBatch = 500;
    const auto inference = model.valid();
    const Loader calibration_loader(data.train, burn::data::MnistBatcher{device},
                                    {.batch_size = kCalibrationBatch, .num_workers = 0});
    const auto calibration = burn::quant::calibrate(inference, [&](const Model& m) {
      std::size_t seen = 0;
      for (auto& batch : calibration_loader.iter_epoch(0)) {
        if (seen >= kCalibrationImages) break;
        (void)m.forward(batch.images);
        seen += batch.targets.dims()[0];
      }
    });
    const auto quantized = burn::quant::quantize_model(inference, calibration);
    const PassSettings int8_settings{"int8 test", style, options.limit_batches, std::nullopt, nullptr};
    const auto q = evaluate([&quantized](const burn::Tensor<4>& images) { return quantized.forward(images); },
                            test_loss, test_loader, int8_settings);
    fmt::print(
        "int8 quantized: {} layers (per-channel weights, calibrated activations), test accuracy {:.4f}, "
        "test {:.2f} s\n",
        quantized.quantized_layers().size(), q.accuracy, q.seconds);
    if (!options.quantized_model.empty()) {
      burn::quant::save_quantized(quantized, options.quantized_model);
      const auto loaded = burn::quant::load_quantized(config.init(device), options.quantized_model);
      const auto back = evaluate([&loaded](const burn::Tensor<4>& images) { return loaded.forward(images); }, test_loss,
                                 test_loader, int8_settings);
      fmt::print("int8 model: {} ({:.1f} KiB, test accuracy {:.4f} when read back)\n", options.quantized_model.string(),
                 static_cast<double>(std::filesystem::file_size(options.quantized_model)) / 1024.0, back.accuracy);
    }
    std::fflush(stdout);
  }

  int status = kSuccess;
  if (!batch_losses.empty()) {
    // Compare the start and end of this run's training (means smooth out batch noise).
    const std::size_t k = std::clamp<std::size_t>(batch_losses.size() / 4, 1, 50);
    const double first = mean(batch_losses, 0, k),
                 last = mean(batch_losses, batch_losses.size() - k, batch_losses.size());
    const bool fell = last < first;
    if (say)
      fmt::print("training loss: first {} batches {:.4f}, last {} batches {:.4f} ({})\n", k, first, k, last,
                 fell ? "fell" : "did not fall");
    if (options.expect_loss_decrease && !fell) status = kLossDidNotFall;
  } else if (options.expect_loss_decrease) {
    if (say) fmt::print("training loss: no batches were trained in this run\n");
    status = kLossDidNotFall;
  }
  if (say) fmt::print("peak resident memory: {:.1f} MiB\n", static_cast<double>(peak_resident_bytes()) / (1 << 20));
  if (say) fmt::print("final test accuracy: {:.4f}\n", final_accuracy);
  std::fflush(stdout);
  return status;
#endif
}

}  // namespace burn_train
