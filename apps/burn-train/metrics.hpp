// What burn-train measures per epoch, and how it reports it: the per-epoch
// summary line, memory readings, the JSON summary and the checkpoint history.
#pragma once

#include <burn/device.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace burn_train {

/// Loss and accuracy of one pass over batches.
struct PassMetrics {
  double loss = 0;      ///< mean over items
  double accuracy = 0;  ///< fraction of items classified correctly
  std::size_t items = 0;
  std::size_t batches = 0;
  double seconds = 0;      ///< wall time
  double cpu_seconds = 0;  ///< process CPU time (all threads), for timings on a busy machine
};

/// Memory after an epoch: the device allocator's view (when the backend
/// reports one) and the process's resident set.
struct MemoryReading {
  std::optional<burn::MemoryPoolUsage> pool;
  std::uint64_t rss_bytes = 0;
};

struct EpochMetrics {
  std::size_t epoch = 0;  ///< 1-based
  PassMetrics train, test;
  MemoryReading memory;
};

/// Reads the device's pool usage and the process RSS now.
MemoryReading read_memory(const burn::Device& device);

/// The process's peak resident set so far (getrusage), in bytes.
std::uint64_t peak_resident_bytes();

/// "epoch 2/5: train loss 0.3012 acc 0.8921 | test loss ... | 21.3 s, 2817 img/s | memory ..."
std::string format_epoch_line(const EpochMetrics& m, std::size_t epochs);

/// The epochs as a JSON array (stored in checkpoints and summaries).
std::string history_to_json(const std::vector<EpochMetrics>& history);
/// Parses history_to_json's output; throws burn::Error("[checkpoint] ...") if malformed.
std::vector<EpochMetrics> history_from_json(const std::string& text);

struct RunInfo {
  std::string device;
  std::size_t threads = 0;
  std::size_t batch_size = 0;
  double lr = 0;
  std::uint64_t seed = 0;
  std::optional<std::size_t> limit_batches;
  std::size_t num_params = 0;
  bool traced = false;  ///< --trace: the step recorded once and replayed
};

/// Writes {"meta": {...}, "epochs": [...], "final_test_acc": x} to `path`,
/// with the same field names as bench/fashion_mnist_torch.py --json.
void write_summary_json(const std::filesystem::path& path, const RunInfo& info,
                        const std::vector<EpochMetrics>& history);

}  // namespace burn_train
