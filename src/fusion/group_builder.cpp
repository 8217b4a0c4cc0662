#include "fusion/group_builder.hpp"

#include <algorithm>

#include "fusion/elementwise.hpp"

namespace burn::fusion {

void GroupBuilder::reset(const Batch& batch) {
  batch_ = &batch;
  taken_.clear();
  in_group_.assign(batch.ops.size(), false);
  external_.clear();
}

bool GroupBuilder::produced_here(std::uint32_t v) const {
  const auto p = batch_->values[v].producer;
  return p >= 0 && in_group_[static_cast<std::size_t>(p)];
}

bool GroupBuilder::depends_on_group(std::uint32_t i) const {
  for (auto v : batch_->ops[i].inputs)
    if (produced_here(v)) return true;
  return false;
}

std::vector<ir::TensorSpec> GroupBuilder::input_specs(const QueuedOp& q) {
  std::vector<ir::TensorSpec> specs;
  specs.reserve(q.inputs.size());
  for (const auto& in : q.inputs) specs.push_back(in.spec);
  return specs;
}

bool GroupBuilder::admit_inputs(const BatchOp& bop, const Shape& target) {
  // Inputs made outside the group are read in place with broadcast strides.
  std::size_t fresh = 0;
  for (auto v : bop.inputs) {
    if (produced_here(v)) continue;
    if (!broadcasts_to(batch_->values[v].spec.shape, target)) return false;
    if (std::find(external_.begin(), external_.end(), v) == external_.end()) ++fresh;
  }
  if (external_.size() + fresh > kMaxInputs) return false;
  for (auto v : bop.inputs)
    if (!produced_here(v) && std::find(external_.begin(), external_.end(), v) == external_.end())
      external_.push_back(v);
  return true;
}

void GroupBuilder::take(std::uint32_t i) {
  taken_.push_back(i);
  in_group_[i] = true;
}

}  // namespace burn::fusion
