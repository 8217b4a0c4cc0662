// Turns a batch into an execution strategy: which segments run as fused
// groups and which ops run alone. Strategies are cached by the batch's
// signature, so a training loop explores each distinct batch once.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "fusion/fuser.hpp"

namespace burn::fusion {

struct Step {
  /// Batch ops, in order: one op without a plan, or a fused group's ops.
  std::vector<std::uint32_t> ops;
  /// Null: ops[0] alone on the inner backend.
  std::shared_ptr<const FusedPlan> plan;
};
using Strategy = std::vector<Step>;

class Planner {
 public:
  explicit Planner(std::vector<std::unique_ptr<Fuser>> fusers);

  bool may_queue(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                 std::span<const ir::TensorSpec> outputs) const;

  /// The strategy for `batch`; `explored` says whether it was built now
  /// (false: reused from the cache).
  std::shared_ptr<const Strategy> plan(const Batch& batch, bool& explored);

  /// Distinct signatures kept; the cache is cleared when it fills (shapes
  /// that keep changing must not grow memory without bound).
  static constexpr std::size_t kMaxCached = 512;

 private:
  /// Schedules `pending` (batch ops, in order) into `steps`.
  void explore(const Batch& batch, std::vector<std::uint32_t> pending, Strategy& steps) const;

  /// Ops a candidate may leave out (to run before it) while it keeps growing.
  static constexpr std::size_t kMaxSkipped = 8;

  struct KeyHash {
    std::size_t operator()(const std::vector<std::uint64_t>& k) const noexcept;
  };

  std::vector<std::unique_ptr<Fuser>> fusers_;
  std::vector<std::unique_ptr<FuserBuilder>> builders_;
  std::unordered_map<std::vector<std::uint64_t>, std::shared_ptr<const Strategy>, KeyHash> cache_;
};

}  // namespace burn::fusion
