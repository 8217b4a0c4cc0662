// The training run: data, model, optimiser, the epoch loop with a test pass
// after each epoch, checkpoints and --resume.
#pragma once

#include "options.hpp"

namespace burn_train {

/// Exit statuses of a run (see --help).
enum ExitStatus : int { kSuccess = 0, kRuntimeError = 1, kUsageError = 2, kLossDidNotFall = 3, kDataMissing = 4 };

/// Runs the training `options` describe and prints its progress to stdout;
/// returns kSuccess or kLossDidNotFall. Throws burn::Error for failures
/// (missing data, a bad device name, an unreadable checkpoint, ...).
int run_training(const Options& options);

}  // namespace burn_train
