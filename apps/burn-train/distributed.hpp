// The data-parallel side of a run. Under burn-run (or torchrun, or a
// scheduler setting RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT) every rank
// trains the same model on its own shard of each epoch, and the gradients are
// averaged over the ranks before each step; alone, this is a no-op.
#pragma once

#include <burn/autodiff.hpp>
#include <burn/config.hpp>
#include <burn/optim/gradients_params.hpp>
#include <memory>

#include "metrics.hpp"
#include "model.hpp"

namespace burn_train {

class Distributed {
 public:
  /// From the environment: a process group when WORLD_SIZE is above 1.
  /// Throws burn::Error when the variables are malformed, the other ranks
  /// do not come, or this build has no collectives.
  static Distributed from_env();
  Distributed(Distributed&&) noexcept;
  Distributed& operator=(Distributed&&) noexcept;
  ~Distributed();

  int rank() const noexcept { return rank_; }
  int world_size() const noexcept { return world_size_; }
  /// Rank 0: the one that prints, writes checkpoints and summaries.
  bool is_leader() const noexcept { return rank_ == 0; }

  /// The model with rank 0's parameters and batch-norm statistics.
  Model broadcast(const Model& model);
  /// Backward from `loss`: the parameters' gradients, averaged over the ranks.
  burn::optim::GradientsParams backward(const burn::Tensor<1>& loss, const Model& model);
  /// Gradients computed already (by a traced step), averaged over the ranks.
  burn::optim::GradientsParams average(const burn::optim::GradientsParams& grads, const Model& model);
  /// A pass's loss, accuracy, item and batch counts over every rank's shard
  /// (times stay this rank's).
  PassMetrics combine(const PassMetrics& mine);

 private:
  struct Group;
  Distributed() = default;
  int rank_ = 0;
  int world_size_ = 1;
  std::unique_ptr<Group> group_;
};

}  // namespace burn_train
