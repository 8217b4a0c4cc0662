// How fusers compete for the ops of a batch (Burn's design): from the first
// op not yet scheduled, every fuser grows a candidate group, offered the
// following ops one by one until it closes; the candidate with the best score
// runs as one fused kernel (a FusedPlan). An op no candidate groups runs
// alone on the inner backend.
//
// A candidate may leave out an op it cannot take when that op does not depend
// on the candidate (a layer norm's small `var + eps` between two full-size
// ops): the planner runs such skipped ops before the group.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <burn/backend/backend.hpp>

#include "fusion/batch.hpp"

namespace burn::fusion {

/// A position in a group: op (index into the group's ops, in order) and
/// input or output slot.
struct IoRef {
  std::uint32_t op = 0;
  std::uint32_t slot = 0;
};

/// A group of ops compiled into one kernel. Plans refer to tensors by their
/// position in the group only, so a cached plan runs on any later batch with
/// the same signature.
class FusedPlan {
 public:
  virtual ~FusedPlan() = default;

  /// Runs the group. `ops` are the group's queued ops (scalar values are
  /// read from them); `inputs[k]` is the inner backend's tensor for
  /// `inputs_from[k]`. Returns one inner tensor per `outputs_to` entry.
  virtual std::vector<backend::PrimitivePtr> run(std::span<const QueuedOp* const> ops,
                                                 std::span<const backend::Input> inputs) const = 0;

  /// Where each input is read first, and which op output each result is.
  std::vector<IoRef> inputs_from;
  std::vector<IoRef> outputs_to;
};

/// One candidate group being grown over a batch.
class FuserBuilder {
 public:
  virtual ~FuserBuilder() = default;
  /// Starts an empty candidate over `batch`.
  virtual void reset(const Batch& batch) = 0;
  /// Offers batch op `op` (offered ops come in batch order). Returns false,
  /// leaving the candidate unchanged, when the candidate cannot take it.
  virtual bool offer(std::uint32_t op) = 0;
  /// Whether batch op `op` reads a result of the candidate's ops.
  virtual bool depends_on_group(std::uint32_t op) const = 0;
  /// The batch ops taken, in order.
  virtual const std::vector<std::uint32_t>& taken() const = 0;
  /// Higher is better; compared across fusers for the same start.
  virtual std::size_t score() const = 0;
  /// The plan for the ops taken.
  virtual std::shared_ptr<const FusedPlan> build() const = 0;
};

/// A kind of fusion (elementwise chains, reduction + elementwise, ...).
class Fuser {
 public:
  virtual ~Fuser() = default;
  /// Whether this op could ever be part of one of this fuser's groups; ops
  /// no fuser may take are not queued (they drain the queue and run eagerly).
  virtual bool may_take(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                        std::span<const ir::TensorSpec> outputs) const = 0;
  virtual std::unique_ptr<FuserBuilder> builder() const = 0;
};

}  // namespace burn::fusion
