#include "fusion/elementwise.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "fusion/op_kind.hpp"

namespace burn::fusion {

namespace {

// Whether an op of an elementwise or row group carries scalar operand values.
template <class O>
bool scalar_operand(const O&) = delete;
bool scalar_operand(const ir::Unary&) { return false; }
bool scalar_operand(const ir::Binary& b) { return b.scalar.has_value(); }
bool scalar_operand(const ir::Clamp&) { return true; }
bool scalar_operand(const ir::Cast&) { return false; }
bool scalar_operand(const ir::MaskWhere&) { return false; }
bool scalar_operand(const ir::MaskFill&) { return true; }
bool scalar_operand(const ir::Gelu&) { return false; }
bool scalar_operand(const ir::Reduce&) { return false; }

}  // namespace

bool has_scalar_operand(const ir::Op& op) {
  return std::visit(
      [](const auto& o) {
        constexpr OpKind kind = kind_of<std::decay_t<decltype(o)>>;
        if constexpr (kind == OpKind::Elementwise || kind == OpKind::Reduction) return scalar_operand(o);
        else return false;  // anchors and eager ops are never in these groups
      },
      op);
}

bool broadcasts_to(const Shape& s, const Shape& shape) {
  if (s.rank() != shape.rank()) return false;
  for (std::size_t d = 0; d < s.rank(); ++d)
    if (s[d] != shape[d] && s[d] != 1) return false;
  return true;
}

namespace {

class ElementwiseBuilder final : public GroupBuilder {
 public:
  explicit ElementwiseBuilder(const ElementwiseFuser& fuser) : fuser_(fuser) {}

  bool offer(std::uint32_t i) override {
    const BatchOp& bop = batch_->ops[i];
    const QueuedOp& q = *bop.queued;
    if (taken().size() >= kMaxOps || q.outputs.size() != 1 || !is_elementwise(q.op)) return false;
    const ir::TensorSpec& out_spec = q.outputs[0].spec;
    if (!taken().empty() && out_spec.shape != shape_) return false;
    if (!fuser_.may_take(q.op, input_specs(q), std::span(&out_spec, 1))) return false;
    if (!admit_inputs(bop, out_spec.shape)) return false;
    shape_ = out_spec.shape;
    take(i);
    return true;
  }

  // Every op taken saves a write and a read of a whole tensor.
  std::size_t score() const override { return taken().size(); }

  std::shared_ptr<const FusedPlan> build() const override;

 private:
  const ElementwiseFuser& fuser_;
  Shape shape_;
};

std::shared_ptr<const FusedPlan> ElementwiseBuilder::build() const {
  return build_group_plan(*batch_, taken(), shape_, fuser_.compiler());
}

}  // namespace

std::shared_ptr<const FusedPlan> build_group_plan(const Batch& batch, const std::vector<std::uint32_t>& taken,
                                                  const Shape& shape, const ElementwiseCompiler& compiler) {
  const std::size_t n = taken.size();
  // Reads of each value from inside the group: a result read more often
  // outside (or held) must be materialised.
  std::unordered_map<std::uint32_t, std::uint32_t> reads_inside;
  for (auto i : taken)
    for (auto v : batch.ops[i].inputs) ++reads_inside[v];
  auto needed_outside = [&](std::uint32_t v) {
    auto it = reads_inside.find(v);
    return batch.needed_outside(v, it == reads_inside.end() ? 0 : it->second);
  };
  // Live instructions, backwards: an op whose result is needed outside the
  // group, or read by a live op of the group. Dead ones are dropped (their
  // results would be computed for nobody).
  std::vector<bool> live(n, false);
  std::vector<bool> value_live(batch.values.size(), false);
  for (std::size_t k = n; k-- > 0;) {
    const BatchOp& bop = batch.ops[taken[k]];
    const auto v = bop.outputs[0];
    if (needed_outside(v) || value_live[v]) {
      live[k] = true;
      for (auto in : bop.inputs) value_live[in] = true;
    }
  }

  ElementwiseProgram prog;
  prog.shape = shape;
  auto plan_inputs = std::vector<IoRef>{};
  auto plan_outputs = std::vector<IoRef>{};
  std::unordered_map<std::uint32_t, std::uint32_t> input_of, result_of;  // batch value -> index
  std::map<std::vector<std::uint64_t>, std::uint32_t> seen;              // op and arguments -> result
  for (std::size_t k = 0; k < n; ++k) {
    const BatchOp& bop = batch.ops[taken[k]];
    prog.ops.push_back(bop.queued->op);
    if (!live[k]) continue;
    ElementwiseProgram::Instr instr;
    instr.op = static_cast<std::uint32_t>(k);
    for (std::uint32_t s = 0; s < bop.inputs.size(); ++s) {
      const auto v = bop.inputs[s];
      if (auto it = result_of.find(v); it != result_of.end()) {
        instr.args.push_back({false, it->second});
        continue;
      }
      auto [it, fresh] = input_of.try_emplace(v, static_cast<std::uint32_t>(prog.inputs.size()));
      if (fresh) {
        prog.inputs.push_back(batch.values[v].spec);
        plan_inputs.push_back({static_cast<std::uint32_t>(k), s});
      }
      instr.args.push_back({true, it->second});
    }
    const auto out = bop.outputs[0];
    // Common subexpressions: an op without scalar operands that repeats an
    // earlier op of the group on the same arguments reuses its result
    // (var_mean_dim's mean repeats the layer norm's own mean). Ops with
    // scalars are left alone: the plan is shared by batches whose scalar
    // values differ.
    if (!needed_outside(out) && !has_scalar_operand(bop.queued->op)) {
      std::vector<std::uint64_t> key{op_signature(bop.queued->op)};
      for (const auto& a : instr.args) key.push_back((std::uint64_t{a.is_input} << 32) | a.index);
      for (const auto& s : bop.queued->inputs) key.push_back(static_cast<std::uint64_t>(s.spec.dtype));
      if (auto it = seen.find(key); it != seen.end()) {
        result_of.emplace(out, it->second);
        continue;
      }
      seen.emplace(std::move(key), static_cast<std::uint32_t>(prog.values.size()));
    }
    instr.result = static_cast<std::uint32_t>(prog.values.size());
    result_of.emplace(out, instr.result);
    prog.values.push_back(batch.values[out].spec);
    if (needed_outside(out)) {
      prog.outputs.push_back(instr.result);
      plan_outputs.push_back({static_cast<std::uint32_t>(k), 0});
    }
    prog.instrs.push_back(std::move(instr));
  }
  std::shared_ptr<FusedPlan> plan = compiler.compile(prog);
  plan->inputs_from = std::move(plan_inputs);
  plan->outputs_to = std::move(plan_outputs);
  return plan;
}

bool is_elementwise(const ir::Op& op) { return kind(op) == OpKind::Elementwise; }

bool ElementwiseFuser::may_take(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                                std::span<const ir::TensorSpec> outputs) const {
  return is_elementwise(op) && outputs.size() == 1 && compiler_->supports(op, inputs, outputs);
}

std::unique_ptr<FuserBuilder> ElementwiseFuser::builder() const { return std::make_unique<ElementwiseBuilder>(*this); }

}  // namespace burn::fusion
