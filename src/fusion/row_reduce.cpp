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

class RowReduceBuilder final : public GroupBuilder {
 public:
  explicit RowReduceBuilder(const RowReduceFuser& fuser) : fuser_(fuser) {}

  void reset(const Batch& batch) override {
    GroupBuilder::reset(batch);
    reduces_ = 0;
  }

  bool offer(std::uint32_t i) override {
    const BatchOp& bop = batch_->ops[i];
    const QueuedOp& q = *bop.queued;
    if (taken().size() >= kMaxOps || q.outputs.size() != 1) return false;
    const auto in_specs = input_specs(q);
    const ir::TensorSpec& out_spec = q.outputs[0].spec;
    if (!fuser_.may_take(q.op, in_specs, std::span(&out_spec, 1))) return false;
    const bool reduce = std::holds_alternative<ir::Reduce>(q.op);

    // The row shape: fixed by the first op (a reduction's input, or a
    // full-size elementwise result).
    Shape row = shape_;
    if (taken().empty()) {
      row = reduce ? in_specs[0].shape : out_spec.shape;
      if (row.rank() == 0 || row.dims().back() > fuser_.max_row()) return false;
    }
    const Shape stat = row_stat_shape(row);
    if (reduce) {
      if (in_specs[0].shape != row) return false;
    } else if (out_spec.shape != row && out_spec.shape != stat) {
      return false;
    }
    if (!admit_inputs(bop, reduce ? row : out_spec.shape)) return false;
    shape_ = row;
    take(i);
    if (reduce) ++reduces_;
    return true;
  }

  // Only worth a row kernel with a reduction in it; plain elementwise chains
  // belong to the elementwise fuser, whose blocks ignore row boundaries.
  std::size_t score() const override { return reduces_ > 0 ? taken().size() : 0; }

  std::shared_ptr<const FusedPlan> build() const override {
    return build_group_plan(*batch_, taken(), shape_, fuser_.compiler());
  }

 private:
  const RowReduceFuser& fuser_;
  Shape shape_;
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
