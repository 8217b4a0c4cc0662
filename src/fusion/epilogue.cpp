#include "fusion/epilogue.hpp"

#include "fusion/elementwise.hpp"
#include "fusion/op_kind.hpp"

namespace burn::fusion {
namespace {

bool is_epilogue_binary(ir::BinaryOp op) {
  return op == ir::BinaryOp::Add || op == ir::BinaryOp::Sub || op == ir::BinaryOp::Mul || op == ir::BinaryOp::Div;
}

class EpilogueBuilder final : public GroupBuilder {
 public:
  explicit EpilogueBuilder(const EpilogueFuser& fuser) : fuser_(fuser) {}

  void reset(const Batch& batch) override {
    GroupBuilder::reset(batch);
    compare_ = -1;
    relu_ = false;
  }

  bool offer(std::uint32_t i) override {
    const BatchOp& bop = batch_->ops[i];
    const QueuedOp& q = *bop.queued;
    if (taken().empty()) {
      if (q.outputs.size() != 1) return false;
      const ir::TensorSpec& out = q.outputs[0].spec;
      if (!fuser_.may_take(q.op, input_specs(q), std::span(&out, 1))) return false;
      take(i);
      chain_ = bop.outputs[0];
      return true;
    }
    if (taken().size() >= kMaxOps || q.outputs.size() != 1) return false;
    const BatchValue& c = batch_->values[chain_];
    if (!fuser_.compiler().supports_step(c.spec.dtype)) return false;
    const auto* b = std::get_if<ir::Binary>(&q.op);

    if (compare_ < 0) {
      // relu, first half: x <= 0 (or x < 0) against a scalar, read by the
      // mask_fill that follows and nobody else.
      if (b && b->scalar && (b->op == ir::BinaryOp::LessEqual || b->op == ir::BinaryOp::Less) &&
          bop.inputs[0] == chain_ && !c.held && c.readers == 2) {
        const BatchValue& mask = batch_->values[bop.outputs[0]];
        if (mask.held || mask.readers != 1) return false;
        compare_ = static_cast<std::int64_t>(i);
        return true;  // taken together with its mask_fill
      }
      // A binary step: running result on the left, a scalar or an outside
      // tensor broadcast to it on the right.
      if (!b || !is_epilogue_binary(b->op) || bop.inputs[0] != chain_ || c.held || c.readers != 1) return false;
      if (q.outputs[0].spec != c.spec) return false;
      if (!b->scalar) {
        const auto rhs = bop.inputs[1];
        if (produced_here(rhs) || batch_->values[rhs].spec.dtype != c.spec.dtype) return false;
        if (!admit_inputs(bop, c.spec.shape)) return false;
      }
      take(i);
      chain_ = bop.outputs[0];
      return true;
    }
    // relu, second half: mask_fill(x, mask, value) right after its compare.
    const auto* fill = std::get_if<ir::MaskFill>(&q.op);
    const BatchOp& cmp = batch_->ops[static_cast<std::size_t>(compare_)];
    if (!fill || bop.inputs[0] != chain_ || bop.inputs[1] != cmp.outputs[0]) return false;
    take(static_cast<std::uint32_t>(compare_));
    take(i);
    compare_ = -1;
    relu_ = true;
    chain_ = bop.outputs[0];
    return true;
  }

  // The anchor's output written once instead of once per epilogue op. A
  // matmul's epilogue only pays with relu in it: with any post-op (a bias
  // included) oneDNN's f32 matmul ran 8-9 % slower inside a training step
  // here (ONEDNN_VERBOSE, [256,1024]x[1024,1024]: 1.26 against 1.16 ms; the
  // weights are cold after the optimiser step), more than the in-cache pass
  // it saves. Without relu (training keeps relu's mask, so its relu is never
  // here) the bias add and scaling join the elementwise or row group that
  // follows instead, and the matmul runs plain. A convolution's epilogue
  // also keeps its output in oneDNN's blocked layout, and always pays.
  std::size_t score() const override {
    const bool matmul = !taken().empty() && std::holds_alternative<ir::Matmul>(batch_->ops[taken()[0]].queued->op);
    return matmul && !relu_ ? 0 : taken().size();
  }

  std::shared_ptr<const FusedPlan> build() const override {
    const auto& ops = taken();
    EpilogueProgram prog;
    std::vector<IoRef> inputs_from;
    const BatchOp& anchor = batch_->ops[ops[0]];
    for (std::uint32_t s = 0; s < anchor.queued->inputs.size(); ++s) {
      prog.inputs.push_back(anchor.queued->inputs[s].spec);
      inputs_from.push_back({0, s});
    }
    for (std::uint32_t k = 0; k < ops.size(); ++k) {
      const BatchOp& bop = batch_->ops[ops[k]];
      prog.ops.push_back(bop.queued->op);
      std::vector<EpilogueProgram::Source> wires;
      for (std::uint32_t s = 0; s < bop.inputs.size(); ++s) {
        const auto v = bop.inputs[s];
        const auto p = batch_->values[v].producer;
        std::uint32_t j = 0;
        while (j < k && ops[j] != static_cast<std::uint32_t>(p)) ++j;
        if (p >= 0 && j < k) {
          wires.push_back({false, j});
          continue;
        }
        // An input from outside: the anchor's operands, or a step's right operand.
        std::uint32_t index = k == 0 ? s : static_cast<std::uint32_t>(prog.inputs.size());
        if (k != 0) {
          prog.inputs.push_back(bop.queued->inputs[s].spec);
          inputs_from.push_back({k, s});
        }
        wires.push_back({true, index});
      }
      prog.wiring.push_back(std::move(wires));
      if (k == 0) continue;
      const ir::Op& op = bop.queued->op;
      if (const auto* b = std::get_if<ir::Binary>(&op)) {
        if (b->op == ir::BinaryOp::LessEqual || b->op == ir::BinaryOp::Less) continue;  // relu's compare
        EpilogueProgram::Step step;
        step.op = b->op;
        step.scalar = b->scalar.has_value();
        step.group_op = k;
        if (!step.scalar) step.input = prog.wiring.back()[1].index;
        prog.steps.push_back(step);
      } else {  // relu's mask_fill; its compare is the op before
        EpilogueProgram::Step step;
        step.kind = EpilogueProgram::Step::Kind::Relu;
        step.group_op = k - 1;
        prog.steps.push_back(step);
      }
    }
    prog.output = batch_->values[batch_->ops[ops.back()].outputs[0]].spec;
    auto plan = fuser_.compiler().compile(prog);
    plan->inputs_from = std::move(inputs_from);
    plan->outputs_to = {{static_cast<std::uint32_t>(ops.size() - 1), 0}};
    return plan;
  }

 private:
  const EpilogueFuser& fuser_;
  std::uint32_t chain_ = 0;    // the running result: the batch value the next step reads
  std::int64_t compare_ = -1;  // a relu compare waiting for its mask_fill
  bool relu_ = false;          // a relu step was taken
};

}  // namespace

bool EpilogueFuser::may_take(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                             std::span<const ir::TensorSpec> outputs) const {
  // Only the anchor is queued for this fuser; the steps are elementwise ops,
  // which the elementwise fuser already queues.
  return kind(op) == OpKind::Anchor && outputs.size() == 1 && compiler_->supports_anchor(op, inputs, outputs);
}

std::unique_ptr<FuserBuilder> EpilogueFuser::builder() const { return std::make_unique<EpilogueBuilder>(*this); }

}  // namespace burn::fusion
