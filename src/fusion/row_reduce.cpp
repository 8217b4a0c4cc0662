#include "fusion/row_reduce.hpp"

#include <algorithm>

namespace burn::fusion {

Shape row_stat_shape(const Shape& s) {
  auto dims = s.dims();
  if (!dims.empty()) dims.back() = 1;
  return Shape(dims);
}

namespace {

bool is_last_dim_reduce(const ir::Op& op, std::span<const ir::TensorSpec> inputs) {
  const auto* r = std::get_if<ir::Reduce>(&op);
  return r && !inputs.empty() && inputs[0].shape.rank() > 0 && r->dim + 1 == inputs[0].shape.rank();
}

class RowReduceBuilder final : public FuserBuilder {
 public:
  explicit RowReduceBuilder(const RowReduceFuser& fuser) : fuser_(fuser) {}

  void reset(const Batch& batch) override {
    batch_ = &batch;
    taken_.clear();
    in_group_.assign(batch.ops.size(), false);
    external_.clear();
    reduces_ = 0;
  }

  bool offer(std::uint32_t i) override {
    const BatchOp& bop = batch_->ops[i];
    const QueuedOp& q = *bop.queued;
    if (taken_.size() >= ElementwiseFuser::kMaxOps || q.outputs.size() != 1) return false;
    std::vector<ir::TensorSpec> in_specs;
    in_specs.reserve(q.inputs.size());
    for (const auto& in : q.inputs) in_specs.push_back(in.spec);
    const ir::TensorSpec& out_spec = q.outputs[0].spec;
    if (!fuser_.may_take(q.op, in_specs, std::span(&out_spec, 1))) return false;
    const bool reduce = std::holds_alternative<ir::Reduce>(q.op);

    // The row shape: fixed by the first op (a reduction's input, or a
    // full-size elementwise result).
    Shape row = shape_;
    if (taken_.empty()) {
      row = reduce ? in_specs[0].shape : out_spec.shape;
      if (row.rank() == 0 || row.dims().back() > fuser_.max_row()) return false;
    }
    const Shape stat = row_stat_shape(row);
    if (reduce) {
      if (in_specs[0].shape != row) return false;
    } else if (out_spec.shape != row && out_spec.shape != stat) {
      return false;
    }
    const Shape& target = reduce ? row : out_spec.shape;
    std::size_t new_externals = 0;
    for (auto v : bop.inputs) {
      if (produced_here(v)) continue;
      if (!broadcasts_to(batch_->values[v].spec.shape, target)) return false;
      if (std::find(external_.begin(), external_.end(), v) == external_.end()) ++new_externals;
    }
    if (external_.size() + new_externals > ElementwiseFuser::kMaxInputs) return false;
    for (auto v : bop.inputs)
      if (!produced_here(v) && std::find(external_.begin(), external_.end(), v) == external_.end())
        external_.push_back(v);
    shape_ = row;
    taken_.push_back(i);
    in_group_[i] = true;
    if (reduce) ++reduces_;
    return true;
  }

  bool depends_on_group(std::uint32_t i) const override {
    for (auto v : batch_->ops[i].inputs)
      if (produced_here(v)) return true;
    return false;
  }

  const std::vector<std::uint32_t>& taken() const override { return taken_; }
  // Only worth a row kernel with a reduction in it; plain elementwise chains
  // belong to the elementwise fuser, whose blocks ignore row boundaries.
  std::size_t score() const override { return reduces_ > 0 ? taken_.size() : 0; }

  std::shared_ptr<const FusedPlan> build() const override {
    return build_group_plan(*batch_, taken_, shape_, fuser_.compiler());
  }

 private:
  bool produced_here(std::uint32_t v) const {
    const auto p = batch_->values[v].producer;
    return p >= 0 && in_group_[static_cast<std::size_t>(p)];
  }

  const RowReduceFuser& fuser_;
  const Batch* batch_ = nullptr;
  std::vector<std::uint32_t> taken_;
  std::vector<bool> in_group_;
  Shape shape_;
  std::vector<std::uint32_t> external_;
  std::size_t reduces_ = 0;
};

}  // namespace

bool RowReduceFuser::may_take(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                              std::span<const ir::TensorSpec> outputs) const {
  if (outputs.size() != 1) return false;
  if (!is_elementwise(op) && !is_last_dim_reduce(op, inputs)) return false;
  return compiler_->supports(op, inputs, outputs);
}

std::unique_ptr<FuserBuilder> RowReduceFuser::builder() const { return std::make_unique<RowReduceBuilder>(*this); }

}  // namespace burn::fusion
