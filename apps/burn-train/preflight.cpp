#include "preflight.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <system_error>

#include "checkpoint.hpp"

namespace burn_train {
namespace fs = std::filesystem;

namespace {

/// A training step keeps each layer's output for backward and adds the
/// gradients; measured on the default model at batch sizes 500 and 2,000, a
/// step's memory grew by 0.9 of this factor times the forward estimate.
constexpr double kTrainingFactor = 1.5;

std::optional<std::uint64_t> read_number(const fs::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text)) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;  // "max": no limit
  return value;
}

/// Bytes this process may still allocate: the kernel's MemAvailable, or less
/// where the process's cgroup has a memory limit. Nothing when unknown.
std::optional<std::uint64_t> available_memory() {
  std::optional<std::uint64_t> available;
  std::ifstream meminfo("/proc/meminfo");
  // Line by line: some lines (HugePages_Total: 0) have no unit.
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") {
      available = kib * 1024;
      break;
    }
  }
  const auto limit = read_number("/sys/fs/cgroup/memory.max");
  const auto used = read_number("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const std::uint64_t left = *limit > *used ? *limit - *used : 0;
    available = available ? std::min(*available, left) : left;
  }
  return available;
}

bool computes_in_host_memory(const burn::Device& device) {
  using Kind = burn::DeviceType::Kind;
  const Kind kind = device.type().kind();
  return kind == Kind::Flex || kind == Kind::Cpu || kind == Kind::NdArray;
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / double(1u << 30)); }

void check_batch(const char* flag, std::size_t batch, std::size_t items, const char* set, double bytes_per_image,
                 const std::optional<std::uint64_t>& available) {
  if (items == 0) throw UsageError(fmt::format("the {} set is empty (check --data-dir)", set));
  if (batch > items)
    throw UsageError(
        fmt::format("{} {} is larger than the {} set ({} images); use at most {}", flag, batch, set, items, items));
  if (!available) return;
  const double needed = bytes_per_image * static_cast<double>(batch);
  if (needed > static_cast<double>(*available)) {
    const auto fits = static_cast<std::size_t>(static_cast<double>(*available) / bytes_per_image);
    throw UsageError(
        fmt::format("{} {} needs about {} for its activations, and this machine has {} available; use "
                    "at most {}",
                    flag, batch, gib(needed), gib(static_cast<double>(*available)), fits));
  }
}

/// Creates and removes a file in `dir`: whether files can be written there
/// (permissions, a read-only file system, a full disk's inodes).
std::optional<std::string> cannot_write_in(const fs::path& dir) {
  const fs::path probe = dir / fmt::format(".burn-train-write-check-{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return std::string(std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

}  // namespace

void check_batches(const Options& options, const ModelConfig& config, const burn::Device& device,
                   std::size_t train_items, std::size_t test_items) {
  const auto available = computes_in_host_memory(device) ? available_memory() : std::nullopt;
  const auto forward = static_cast<double>(config.forward_bytes_per_image());
  check_batch("--batch-size", options.batch_size, train_items, "training", forward * kTrainingFactor, available);
  check_batch("--eval-batch-size", options.eval_batch_size, test_items, "test", forward, available);
}

namespace {

/// A file a flag names can be created: not a directory, in a directory that
/// exists and takes new files.
void check_file_writable(std::string_view flag, const fs::path& path) {
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(fmt::format("{} {} is a directory; give a file name", flag, path.string()));
  if (!fs::is_directory(parent, ec))
    throw UsageError(
        fmt::format("{} {}: the directory '{}' does not exist; create it first", flag, path.string(), parent.string()));
  if (auto why = cannot_write_in(parent))
    throw UsageError(fmt::format("{} {}: cannot write files in '{}' ({})", flag, path.string(), parent.string(), *why));
}

}  // namespace

void check_outputs_writable(const Options& options) {
  if (!options.checkpoint_dir.empty()) {
    try {
      ensure_directory(options.checkpoint_dir);
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("--checkpoint-dir {}: {}", options.checkpoint_dir.string(), e.what()));
    }
    if (auto why = cannot_write_in(options.checkpoint_dir))
      throw UsageError(
          fmt::format("--checkpoint-dir {}: cannot write files there ({})", options.checkpoint_dir.string(), *why));
  }
  if (!options.summary_json.empty()) check_file_writable("--summary-json", options.summary_json);
  if (!options.export_onnx.empty()) check_file_writable("--export-onnx", options.export_onnx);
  if (!options.quantized_model.empty()) check_file_writable("--quantized-model", options.quantized_model);
}

std::size_t remove_stale_temporaries(const fs::path& dir) {
  // The names of save_module's and optimizer.save's temporaries
  // (".model-epoch-3.safetensors.tmp-PID-...") and of the index's
  // ("checkpoint.json.tmp.PID"), with the writer's process id.
  static const std::regex record_temp(R"(\.(?:model|optimizer)-epoch-\d+\.safetensors\.tmp-(\d+)-.*)");
  static const std::regex index_temp(R"(checkpoint\.json\.tmp\.(\d+))");
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, record_temp) && !std::regex_match(name, m, index_temp)) continue;
    pid_t pid = 0;
    const std::string digits = m[1].str();
    const auto [end, parse_ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    // A writer still running (another burn-train on this directory) keeps its file.
    if (parse_ec == std::errc() && pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM)) continue;
    std::error_code remove_ec;
    if (fs::remove(entry.path(), remove_ec)) ++removed;
  }
  return removed;
}

}  // namespace burn_train
