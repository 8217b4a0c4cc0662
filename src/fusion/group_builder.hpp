// What the fusers' candidate builders share: the ops taken so far, which
// batch values the group produces, and the inputs it reads from outside.
#pragma once

#include <vector>

#include "fusion/fuser.hpp"

namespace burn::fusion {

class GroupBuilder : public FuserBuilder {
 public:
  void reset(const Batch& batch) override;
  bool depends_on_group(std::uint32_t op) const override;
  const std::vector<std::uint32_t>& taken() const override { return taken_; }

  /// Largest group: instructions, and distinct external inputs. A group's
  /// outputs plus inputs stay within a loop's operand limit (64 on flex).
  static constexpr std::size_t kMaxOps = 40;
  static constexpr std::size_t kMaxInputs = 24;

 protected:
  /// Whether batch value `v` is produced by an op of the group.
  bool produced_here(std::uint32_t v) const;
  /// The queued op's input specs.
  static std::vector<ir::TensorSpec> input_specs(const QueuedOp& q);
  /// Records the inputs `bop` reads from outside the group when each
  /// broadcasts to `target` and the group keeps at most kMaxInputs of them;
  /// otherwise returns false and changes nothing.
  bool admit_inputs(const BatchOp& bop, const Shape& target);
  /// Adds batch op `i` to the group.
  void take(std::uint32_t i);

  const Batch* batch_ = nullptr;

 private:
  std::vector<std::uint32_t> taken_;
  std::vector<bool> in_group_;           // per batch op
  std::vector<std::uint32_t> external_;  // batch values read from outside the group
};

}  // namespace burn::fusion
