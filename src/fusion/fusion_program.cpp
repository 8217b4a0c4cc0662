// A recorded program (dispatch/program.hpp) planned once by the fusion
// layer, so that a traced function's calls skip the queue: no lazy tensor
// per op, no batch numbering or signature per drain, no cache lookup.
//
// Compiling simulates the queue over the program's steps. A step some fuser
// may take joins the pending segment; one no fuser takes (a reshape, a
// gather, a random draw) runs where the queue would run it: at once, ahead
// of the pending segment, unless it reads a pending result, which closes
// the segment first. A closed segment is numbered as a batch whose outputs
// are held when the function returns them or a step outside the segment
// reads them, and planned by the same planner (unlike the queue, without
// its 128-op cut, so groups may span what a queue would have split). The
// plan is a list of units, each a fused group or one op on the inner
// backend, and each unit's inputs say whether it reads a value last in the
// order the units run, so that a run hands over what dies there as
// reusable, as a drain would.
#include <memory>
#include <string>
#include <vector>

#include "dispatch/op_profile.hpp"
#include "fusion/diagnostics.hpp"
#include "fusion/fusion_backend.hpp"

namespace burn::fusion {

class FusionProgram final : public detail::CompiledProgram {
 public:
  FusionProgram(FusionBackend& backend, const detail::Program& program) : backend_(backend), program_(program) {}

  void run(std::vector<backend::PrimitivePtr>& slots) const override { backend_.run_program(*this, slots); }

  /// One step of a run: a fused group, or one program step alone.
  struct Unit {
    std::shared_ptr<const FusedPlan> plan;  ///< null: `step` alone on the inner backend
    std::size_t step = 0;
    std::vector<const QueuedOp*> group;  ///< the plan's ops (their scalars)
    std::vector<std::uint32_t> inputs;   ///< slots, in the order the plan or op takes them
    std::vector<ir::TensorSpec> input_specs;
    /// Per input: the run's last read of a computed value, so the unit takes
    /// it out of its slot (and may hand its storage to an output).
    std::vector<bool> takes;
    std::vector<std::uint32_t> outputs;  ///< slots; kUnusedSlot for an output nothing reads
    std::string name;                    ///< BURN_PROFILE_OPS's name of a fused group
  };

  FusionBackend& backend_;
  const detail::Program& program_;
  std::vector<Unit> units;
  /// The queued form of each segment's ops, which plans read scalar
  /// operands from; each segment's vector is allocated once and never
  /// moved, so the units' group pointers stay valid.
  std::vector<std::unique_ptr<std::vector<QueuedOp>>> segments;
  /// Stand-ins naming each slot for Batch numbering (id = slot + 1).
  std::vector<LazyPtr> names;
};

namespace {

using detail::kUnusedSlot;
using detail::Program;
using detail::ProgramStep;

/// What compiling needs to know of every slot.
struct SlotUse {
  std::vector<std::uint32_t> reads;  ///< input references across all steps
  std::vector<bool> result;
};

SlotUse slot_use(const Program& program) {
  SlotUse use{std::vector<std::uint32_t>(program.slot_count, 0), std::vector<bool>(program.slot_count, false)};
  for (const ProgramStep& s : program.steps)
    for (auto slot : s.inputs) ++use.reads[slot];
  for (auto r : program.results) use.result[r] = true;
  return use;
}

}  // namespace

std::unique_ptr<detail::CompiledProgram> FusionBackend::compile(const Program& program) {
  if (program.steps.empty()) throw ExecutionError("trace", "compiling a program of no steps");
  std::lock_guard lock(mutex_);  // the planner and its cache
  auto compiled = std::make_unique<FusionProgram>(*this, program);
  FusionProgram& p = *compiled;
  const SlotUse use = slot_use(program);
  p.names.reserve(program.slot_count);
  for (std::size_t s = 0; s < program.slot_count; ++s) p.names.push_back(std::make_shared<LazyTensor>(s + 1));
  std::uint64_t next_unused_id = program.slot_count + 1;

  const auto alone = [&](std::size_t step) {
    const ProgramStep& s = program.steps[step];
    FusionProgram::Unit unit;
    unit.step = step;
    unit.inputs = s.inputs;
    unit.input_specs = s.input_specs;
    unit.outputs = s.output_slots;
    p.units.push_back(std::move(unit));
  };

  std::vector<std::size_t> pending;  // program steps of the open segment
  std::vector<bool> pending_writes(program.slot_count, false);
  std::vector<std::uint32_t> reads_inside(program.slot_count, 0);  // per segment, reset after it

  const auto close_segment = [&] {
    if (pending.empty()) return;
    auto queued = std::make_unique<std::vector<QueuedOp>>();
    queued->reserve(pending.size());
    for (std::size_t step : pending) {
      const ProgramStep& s = program.steps[step];
      QueuedOp q;
      q.op = s.op;
      for (std::size_t j = 0; j < s.inputs.size(); ++j) {
        q.inputs.push_back({p.names[s.inputs[j]], s.input_specs[j], false});
        ++reads_inside[s.inputs[j]];
      }
      for (std::size_t k = 0; k < s.outputs.size(); ++k) {
        const std::uint32_t slot = s.output_slots[k];
        q.outputs.push_back({{}, slot == kUnusedSlot ? next_unused_id++ : slot + 1, s.outputs[k]});
      }
      queued->push_back(std::move(q));
    }
    Batch batch;
    batch.build(*queued, [&](std::size_t op, std::uint32_t k) {
      const std::uint32_t slot = program.steps[pending[op]].output_slots[k];
      return slot != kUnusedSlot && (use.result[slot] || use.reads[slot] > reads_inside[slot]);
    });
    bool explored = false;
    const auto strategy = planner_.plan(batch, explored);
    if (explored && trace_enabled()) trace_strategy(batch, *strategy);
    for (const Step& st : *strategy) {
      if (!st.plan) {
        bool needed = false;
        for (auto v : batch.ops[st.ops[0]].outputs) needed = needed || batch.needed_outside(v, 0);
        if (needed) alone(pending[st.ops[0]]);
        continue;
      }
      FusionProgram::Unit unit;
      unit.plan = st.plan;
      for (auto i : st.ops) unit.group.push_back(&(*queued)[i]);
      unit.name = group_name(unit.group);
      for (const IoRef& r : st.plan->inputs_from) {
        const ProgramStep& s = program.steps[pending[st.ops[r.op]]];
        unit.inputs.push_back(s.inputs[r.slot]);
        unit.input_specs.push_back(s.input_specs[r.slot]);
      }
      for (const IoRef& r : st.plan->outputs_to)
        unit.outputs.push_back(program.steps[pending[st.ops[r.op]]].output_slots[r.slot]);
      p.units.push_back(std::move(unit));
    }
    p.segments.push_back(std::move(queued));
    for (std::size_t step : pending) {
      for (auto slot : program.steps[step].inputs) reads_inside[slot] = 0;
      for (auto slot : program.steps[step].output_slots)
        if (slot != kUnusedSlot) pending_writes[slot] = false;
    }
    pending.clear();
  };

  for (std::size_t step = 0; step < program.steps.size(); ++step) {
    const ProgramStep& s = program.steps[step];
    if (planner_.may_queue(s.op, s.input_specs, s.outputs)) {
      pending.push_back(step);
      for (auto slot : s.output_slots)
        if (slot != kUnusedSlot) pending_writes[slot] = true;
      continue;
    }
    // An op no fuser takes runs ahead of the pending segment unless it
    // reads a pending result (submit() drains the queue then). Ahead, it
    // is not the last reader of a value the segment reads: reads are
    // counted in the order units run (below), so it never takes over
    // storage the segment still needs.
    bool waits = false;
    for (auto slot : s.inputs) waits = waits || pending_writes[slot];
    if (waits) close_segment();
    alone(step);
  }
  close_segment();

  // Where each computed value is read last, in the order units run.
  const detail::LastReads reads(program.slot_count, p.units.size(),
                                [&](std::size_t u) -> const std::vector<std::uint32_t>& { return p.units[u].inputs; });
  for (std::size_t u = 0; u < p.units.size(); ++u) {
    FusionProgram::Unit& unit = p.units[u];
    unit.takes.resize(unit.inputs.size());
    for (std::size_t j = 0; j < unit.inputs.size(); ++j) {
      const std::uint32_t slot = unit.inputs[j];
      unit.takes[j] = slot >= program.first_computed && !use.result[slot] && reads.last(slot, u, j);
    }
  }
  return compiled;
}

void FusionBackend::run_program(const FusionProgram& p, std::vector<backend::PrimitivePtr>& slots) {
  const Program& program = p.program_;
  std::lock_guard lock(mutex_);
  drain_locked();  // the inputs may be results of work queued before

  std::vector<backend::PrimitivePtr> values(program.slot_count);
  for (std::size_t k = 0; k < program.first_computed; ++k)
    if (slots[k]) values[k] = materialised(lazy_of(slots[k]), program.steps.front().op);

  std::vector<backend::Input> inputs;
  std::vector<backend::PrimitivePtr> outputs;
  for (const FusionProgram::Unit& unit : p.units) {
    inputs.clear();
    for (std::size_t j = 0; j < unit.inputs.size(); ++j) {
      backend::PrimitivePtr v = unit.takes[j] ? std::move(values[unit.inputs[j]]) : values[unit.inputs[j]];
      // Reusable as a drain decides it: the run held the value's only
      // reference. A value the unit reads through two inputs is taken at
      // the last one only, so the earlier input's copy keeps it shared.
      const bool reusable = unit.takes[j] && v && v.use_count() == 1 + static_cast<long>(v->backend_references());
      inputs.push_back({std::move(v), unit.input_specs[j], reusable});
    }
    if (unit.plan) {
      burn::detail::profile::run_timed(
          *inner_, [&] { return std::string_view(unit.name); }, [&] { outputs = unit.plan->run(unit.group, inputs); });
      ++stats_.fused_groups;
      stats_.ops_fused += unit.group.size();
    } else {
      const ProgramStep& s = program.steps[unit.step];
      outputs.assign(s.outputs.size(), nullptr);
      burn::detail::profile::run_timed(
          *inner_, [&] { return ir::op_name(s.op); }, [&] { run_inner(s.op, inputs, s.outputs, outputs.data()); });
      ++stats_.ops_eager;
    }
    inputs.clear();  // what the unit read last dies here
    for (std::size_t k = 0; k < unit.outputs.size(); ++k)
      if (unit.outputs[k] != kUnusedSlot) values[unit.outputs[k]] = std::move(outputs[k]);
  }
  for (auto r : program.results)
    if (r >= program.first_computed && !slots[r]) slots[r] = wrap(std::move(values[r]));
}

}  // namespace burn::fusion
