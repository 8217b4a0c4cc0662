// What burn-train checks before it trains: that the run would train on
// something, that its batches fit in memory, and that it can write what it
// promises. A run refused at its end (an unwritable summary after an hour of
// training) loses the work; one that trains nothing must not report success.
#pragma once

#include <cstddef>
#include <filesystem>

#include <burn/device.hpp>

#include "model.hpp"
#include "options.hpp"

namespace burn_train {

/// The training and test sets (of this rank) are not empty, and a batch of
/// each fits: at most the set's size, and activations (estimated from the
/// model) within the memory this machine has available, on a device that
/// computes in host memory. Throws UsageError saying which flag to change.
void check_batches(const Options& options, const ModelConfig& config, const burn::Device& device,
                   std::size_t train_items, std::size_t test_items);

/// --checkpoint-dir and --summary-json can be written: the directory is
/// created and a file made and removed in it, the summary's directory
/// exists and takes a file. Throws UsageError.
void check_outputs_writable(const Options& options);

/// Removes the temporary files that a burn-train killed while writing a
/// checkpoint left in `dir` (those of processes no longer running); returns
/// how many.
std::size_t remove_stale_temporaries(const std::filesystem::path& dir);

}  // namespace burn_train
