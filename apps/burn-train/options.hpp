// burn-train's command line: every flag, its default, and the parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

namespace burn_train {

struct Options {
  /// Device name for burn::Device::parse ("flex", "ndarray", ...); empty = the default device.
  std::string device;
  std::size_t epochs = 5;
  std::size_t batch_size = 64;
  /// Batch size of the test pass (no gradients, so larger batches are cheap).
  std::size_t eval_batch_size = 1000;
  double lr = 1e-3;
  /// "cosine": anneal from lr to 0 over the whole run (per batch); "constant".
  std::string lr_schedule = "cosine";
  /// DataLoader threads preparing batches ahead of the training loop.
  std::size_t workers = 1;
  /// Intra-op threads of the device; unset keeps the device's own choice.
  std::optional<std::size_t> threads;
  std::uint64_t seed = 42;
  /// Train (and test) on at most this many batches per epoch; for quick runs.
  std::optional<std::size_t> limit_batches;
  std::filesystem::path data_dir;
  /// Where each epoch's checkpoint goes; empty = no checkpoints.
  std::filesystem::path checkpoint_dir;
  /// Continue from the checkpoint in checkpoint_dir.
  bool resume = false;
  /// Write the run's metrics as JSON here (bench/train_compare.sh reads it).
  std::filesystem::path summary_json;
  /// Where to write the trained model as ONNX (empty: not written).
  std::filesystem::path export_onnx;
  /// Exit with status 3 unless the training loss fell during the run (smoke tests).
  bool expect_loss_decrease = false;
  /// Ranks to train on (data parallel): above 1, burn-train starts itself
  /// that many times under burn-run.
  std::size_t nproc = 1;
  /// Progress display: "auto" (a bar on a terminal, lines otherwise), "bar", "lines", "none".
  std::string progress = "auto";
  /// "f32", or "bf16"/"f16": forward and loss under autocast in that dtype
  /// (f32 master weights; f16 with a gradient scaler).
  std::string precision = "f32";
  /// "flush" (FTZ and DAZ on every thread of the process) or "keep" (IEEE denormals).
  std::string denormals = "flush";
  /// "int8": after training, quantize the model's Linear and Conv2d layers
  /// (post-training, calibrated on training images) and test it; empty: not.
  std::string quantize;
  /// Where to save the quantized model (empty: not saved).
  std::filesystem::path quantized_model;
  /// Record the training step once (burn::trace) and replay it for every
  /// batch instead of running it operation by operation.
  bool trace = false;
};

/// A malformed command line; main prints it with the usage hint and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The parsed options, or nullopt when --help was given (the help text has
/// then been printed to stdout). Throws UsageError for unknown flags, missing
/// or malformed values, and inconsistent combinations.
std::optional<Options> parse_options(int argc, const char* const* argv);

/// The --help text.
std::string usage_text(const std::string& program);

}  // namespace burn_train
