// Per-epoch checkpoints: model, optimiser state and training metadata.
//
// A checkpoint directory holds
//   model-epoch-N.safetensors      the model (burn::record::save_module)
//   optimizer-epoch-N.safetensors  Adam's moments, keyed by parameter id
//   checkpoint.json                which epoch is complete, the files above
//                                  with their CRC-32 checksums, the run's
//                                  settings and metrics so far
// Each file is written atomically (temporary file, fsync, rename) and
// checkpoint.json is replaced last, so a crash at any moment leaves the
// previous complete checkpoint in place; older epoch files are removed only
// after the new checkpoint.json is on disk.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace burn_train {

struct CheckpointInfo {
  /// Epochs completed (the next epoch to run is this one, counting from 0).
  std::size_t epochs_done = 0;
  std::filesystem::path model_file;      ///< absolute
  std::filesystem::path optimizer_file;  ///< absolute
  /// Settings the run must match to resume (model shape).
  std::map<std::string, std::string> model_config;
  /// Everything else worth keeping: seed, batch size, lr, scheduler state, metrics.
  std::map<std::string, std::string> settings;
  /// Per-epoch metrics of the runs so far, as written by the trainer.
  std::string history_json = "[]";
};

/// The file names for epoch `epochs_done` inside `dir`.
std::filesystem::path model_checkpoint_path(const std::filesystem::path& dir, std::size_t epochs_done);
std::filesystem::path optimizer_checkpoint_path(const std::filesystem::path& dir, std::size_t epochs_done);

/// Writes checkpoint.json atomically (after the model and optimiser files
/// exist), then removes epoch files other than this checkpoint's. Throws
/// burn::Error("[checkpoint] ...") on failure.
void commit_checkpoint(const std::filesystem::path& dir, const CheckpointInfo& info);

/// Reads dir/checkpoint.json; throws burn::Error("[checkpoint] ...") when it
/// is missing, malformed, or names files that do not exist.
CheckpointInfo read_checkpoint(const std::filesystem::path& dir);

/// Creates `dir` (and parents) if needed; throws burn::Error("[checkpoint] ...").
void ensure_directory(const std::filesystem::path& dir);

/// Writes `text` to `path` through a temporary file in the same directory,
/// fsync and rename: `path` is either the old file or the new one, never a
/// torn write. Throws burn::Error("[checkpoint] ...").
void write_text_atomically(const std::filesystem::path& path, const std::string& text);

/// The most epochs a run may have (--epochs, a checkpoint's epochs_done).
inline constexpr std::size_t kMaxEpochs = 1'000'000;

}  // namespace burn_train
