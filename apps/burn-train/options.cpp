#include "options.hpp"

#include <burn/config.hpp>

#include "checkpoint.hpp"

#include <fmt/format.h>

#include <burn/data/mnist.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>
#include <system_error>

namespace burn_train {
namespace {

std::size_t parse_count(std::string_view flag, std::string_view text, std::size_t min,
                        std::size_t max = std::numeric_limits<std::size_t>::max()) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range && end == text.data() + text.size())
    throw UsageError(fmt::format("{} {} is out of range; use at most {}", flag, text, max));
  if (ec != std::errc() || end != text.data() + text.size())
    throw UsageError(fmt::format("{} expects a whole number, got '{}'", flag, text));
  if (value < min) throw UsageError(fmt::format("{} must be at least {}, got {}", flag, min, value));
  if (value > max) throw UsageError(fmt::format("{} {} is out of range; use at most {}", flag, value, max));
  return value;
}

/// Data-loading threads beyond this only wait on each other.
constexpr std::size_t kMaxWorkers = 256;

double parse_rate(std::string_view flag, std::string_view text) {
  // from_chars (not strtod) so trailing junk such as "1e-3x" is rejected.
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw UsageError(fmt::format("{} expects a number, got '{}'", flag, text));
  if (!std::isfinite(value) || value <= 0 || value > 1)
    throw UsageError(fmt::format("{} must be in (0, 1], got '{}'", flag, text));
  return value;
}

}  // namespace

std::string usage_text(const std::string& program) {
  const Options d;
  return fmt::format(
      "Usage: {0} [options]\n"
      "\n"
      "Trains a small CNN (2 x conv-batchnorm-relu-maxpool, fc 128, dropout, fc 10) on\n"
      "Fashion-MNIST with Adam, shows a progress bar, tests after every epoch, saves a\n"
      "checkpoint each epoch and prints the final test accuracy.\n"
      "\n"
      "Options:\n"
      "  --device NAME          device to train on: flex, ndarray, ... (default: the\n"
      "                         default device, BURN_DEVICE if set); autodiff is added\n"
      "  --epochs N             epochs to train (default {1})\n"
      "  --batch-size N         training batch size (default {2})\n"
      "  --eval-batch-size N    test batch size (default {3})\n"
      "  --lr X                 Adam learning rate (default {4})\n"
      "  --lr-schedule NAME     cosine (anneal to 0 over the run, per batch) or constant\n"
      "                         (default {8})\n"
      "  --workers N            data-loading threads, 0 = load on the training thread\n"
      "                         (default {5})\n"
      "  --threads N            compute threads of the device (default: the device's)\n"
      "  --seed N               seed for initialisation, shuffling and dropout (default {6})\n"
      "  --limit-batches N      train and test on at most N batches per epoch (quick runs)\n"
      "  --data-dir DIR         MNIST-format files (default {7},\n"
      "                         from the Debian package dataset-fashion-mnist)\n"
      "  --checkpoint-dir DIR   save model + optimiser state there after every epoch\n"
      "  --resume               continue from the checkpoint in --checkpoint-dir\n"
      "  --summary-json FILE    write per-epoch metrics and timings as JSON\n"
      "  --export-onnx FILE     write the trained model as ONNX (input: pixels in [0, 1],\n"
      "                         any batch size), then check it on the test set\n"
      "  --progress MODE        auto (bar on a terminal, lines otherwise), bar, lines, none\n"
      "  --precision P          f32 (default), or bf16 / f16: mixed precision, the\n"
      "                         convolutions and linear layers in 16 bits (autocast; f16\n"
      "                         with loss scaling), the weights kept in f32\n"
      "  --denormals MODE       flush (default: floats below 2^-126 become zero, as\n"
      "                         TensorFlow and XLA compute on the CPU; faster once Adam's\n"
      "                         moments decay) or keep (IEEE, as PyTorch)\n"
      "  --quantize int8        after training, quantize the convolutions and linear layers\n"
      "                         to int8 (per output channel; activation ranges calibrated\n"
      "                         on 2000 training images) and test the quantized model\n"
      "  --quantized-model FILE save the quantized model there (safetensors), then test\n"
      "                         it as read back\n"
      "  --trace                record the training step (forward, backward, Adam) once\n"
      "                         and replay it for every batch: the same model, less\n"
      "                         work per operation\n"
      "  --expect-loss-decrease exit with status 3 unless the training loss fell\n"
      "  --nproc N              train data-parallel on N local processes (burn-run starts\n"
      "                         them); each trains on its shard with --batch-size, rank 0\n"
      "                         prints and writes checkpoints. Under burn-run, torchrun or a\n"
      "                         scheduler setting RANK and WORLD_SIZE, leave it out\n"
      "  -h, --help             show this help\n"
      "\n"
      "The last line of a successful run is 'final test accuracy: 0.XXXX'.\n"
      "Exit status: 0 success, 1 runtime error (e.g. a corrupt data file), 2 bad command\n"
      "line, 3 loss did not fall (--expect-loss-decrease), 4 Fashion-MNIST not installed.\n",
      program, d.epochs, d.batch_size, d.eval_batch_size, d.lr, d.workers, d.seed,
      burn::data::MnistDataset::default_dir().string(), d.lr_schedule);
}

std::optional<Options> parse_options(int argc, const char* const* argv) {
  Options o;
  o.data_dir = burn::data::MnistDataset::default_dir();
  const std::string program = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "burn-train";
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    bool has_inline_value = false;
    // Accept both "--flag value" and "--flag=value".
    if (arg.starts_with("--")) {
      if (const auto eq = arg.find('='); eq != std::string_view::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_inline_value = true;
      }
    }
    auto next = [&]() -> std::string_view {
      if (has_inline_value) return value;
      if (i + 1 >= argc) throw UsageError(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    auto no_value = [&] {
      if (has_inline_value) throw UsageError(fmt::format("{} takes no value", arg));
    };

    if (arg == "-h" || arg == "--help") {
      std::fputs(usage_text(program).c_str(), stdout);
      return std::nullopt;
    } else if (arg == "--device") {
      o.device = next();
      if (o.device.empty()) throw UsageError("--device needs a device name such as flex or ndarray");
    } else if (arg == "--epochs") {
      o.epochs = parse_count(arg, next(), 1, kMaxEpochs);
    } else if (arg == "--batch-size") {
      o.batch_size = parse_count(arg, next(), 1);
    } else if (arg == "--eval-batch-size") {
      o.eval_batch_size = parse_count(arg, next(), 1);
    } else if (arg == "--lr") {
      o.lr = parse_rate(arg, next());
    } else if (arg == "--lr-schedule") {
      o.lr_schedule = next();
      if (o.lr_schedule != "cosine" && o.lr_schedule != "constant")
        throw UsageError(fmt::format("--lr-schedule must be cosine or constant, got '{}'", o.lr_schedule));
    } else if (arg == "--workers") {
      o.workers = parse_count(arg, next(), 0, kMaxWorkers);
    } else if (arg == "--threads") {
      o.threads = parse_count(arg, next(), 1);
    } else if (arg == "--seed") {
      o.seed = parse_count(arg, next(), 0);
    } else if (arg == "--limit-batches") {
      o.limit_batches = parse_count(arg, next(), 1);
    } else if (arg == "--data-dir") {
      o.data_dir = std::string(next());
    } else if (arg == "--checkpoint-dir") {
      o.checkpoint_dir = std::string(next());
      if (o.checkpoint_dir.empty()) throw UsageError("--checkpoint-dir needs a directory");
    } else if (arg == "--resume") {
      no_value();
      o.resume = true;
    } else if (arg == "--summary-json") {
      o.summary_json = std::string(next());
    } else if (arg == "--export-onnx") {
#if BURN_HAS_ONNX
      o.export_onnx = std::string(next());
      if (o.export_onnx.empty()) throw UsageError("--export-onnx needs a file name");
#else
      throw UsageError(
          "--export-onnx: this burn-train was built without ONNX support (reconfigure with "
          "-DBURN_CAPTURE=ON -DBURN_ONNX=ON)");
#endif
    } else if (arg == "--progress") {
      o.progress = next();
      if (o.progress != "auto" && o.progress != "bar" && o.progress != "lines" && o.progress != "none")
        throw UsageError(fmt::format("--progress must be auto, bar, lines or none, got '{}'", o.progress));
    } else if (arg == "--precision") {
      o.precision = next();
      if (o.precision != "f32" && o.precision != "bf16" && o.precision != "f16")
        throw UsageError(fmt::format("--precision must be f32, bf16 or f16, got '{}'", o.precision));
    } else if (arg == "--denormals") {
      o.denormals = next();
      if (o.denormals != "flush" && o.denormals != "keep")
        throw UsageError(fmt::format("--denormals must be flush or keep, got '{}'", o.denormals));
    } else if (arg == "--quantize") {
      o.quantize = next();
      if (o.quantize != "int8") throw UsageError(fmt::format("--quantize must be int8, got '{}'", o.quantize));
    } else if (arg == "--quantized-model") {
      o.quantized_model = std::string(next());
      if (o.quantized_model.empty()) throw UsageError("--quantized-model needs a file name");
    } else if (arg == "--nproc") {
      o.nproc = parse_count(arg, next(), 1);
    } else if (arg == "--trace") {
      no_value();
#if BURN_HAS_CAPTURE
      o.trace = true;
#else
      throw UsageError(
          "--trace: this burn-train was built without the capture device (reconfigure with -DBURN_CAPTURE=ON)");
#endif
    } else if (arg == "--expect-loss-decrease") {
      no_value();
      o.expect_loss_decrease = true;
    } else {
      throw UsageError(fmt::format("unknown option '{}'", argv[i]));
    }
  }
  if (!o.quantized_model.empty() && o.quantize.empty())
    throw UsageError("--quantized-model needs --quantize int8 (the model to save)");
  if (o.resume && o.checkpoint_dir.empty())
    throw UsageError("--resume needs --checkpoint-dir (the directory holding the checkpoint)");
  return o;
}

}  // namespace burn_train
