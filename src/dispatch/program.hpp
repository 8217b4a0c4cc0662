// A recorded program: backend calls over numbered value slots, as
// burn::trace builds it (src/trace/), and the optional service of a backend
// that prepares such a program once to run it many times.
//
// Slots [0, first_computed) hold values from outside (the call's inputs and
// the recording's constants); every step writes the slots of the outputs
// something reads. A backend that executes op by op needs nothing more
// than the steps; one that plans across ops (the fusion layer) or runs
// them elsewhere (the remote backend, whose server keeps the program)
// takes the whole program at once, so that work is done once instead of
// per call.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <burn/backend/backend.hpp>
#include <burn/ir/op.hpp>

namespace burn::detail {

struct ProgramStep {
  ir::Op op;
  std::vector<std::uint32_t> inputs;  ///< slots
  /// Per input: this step reads the slot last (and this is its last
  /// position in the step), so a call may take the value out of the slot.
  std::vector<bool> takes;
  std::vector<ir::TensorSpec> input_specs;
  std::vector<ir::TensorSpec> outputs;
  std::vector<std::uint32_t> output_slots;  ///< kUnusedSlot: nothing reads that output
};

inline constexpr std::uint32_t kUnusedSlot = ~std::uint32_t{0};

struct Program {
  std::vector<ProgramStep> steps;
  std::vector<std::uint32_t> results;  ///< slots the caller reads after a run
  std::size_t slot_count = 0;
  std::size_t first_computed = 0;  ///< slots below are filled by the caller
};

/// The result slots a step computes (the caller holds the others already).
inline std::vector<std::uint32_t> computed_results(const Program& p) {
  std::vector<std::uint32_t> out;
  for (auto slot : p.results)
    if (slot >= p.first_computed) out.push_back(slot);
  return out;
}

/// Where each slot is read last over units that run in order (a program's
/// steps, or a backend's own units of them): the unit and, within it, the
/// input position. A value may be taken out of its slot there.
class LastReads {
 public:
  /// `inputs_of(u)` is unit u's list of input slots.
  template <class InputsOf>
  LastReads(std::size_t slot_count, std::size_t units, InputsOf&& inputs_of)
      : unit_(slot_count, kNever), position_(slot_count, 0) {
    for (std::size_t u = 0; u < units; ++u) {
      const std::vector<std::uint32_t>& inputs = inputs_of(u);
      for (std::size_t j = 0; j < inputs.size(); ++j) {
        unit_[inputs[j]] = u;
        position_[inputs[j]] = j;
      }
    }
  }
  /// Whether any unit reads `slot`.
  bool read(std::uint32_t slot) const { return unit_[slot] != kNever; }
  /// Whether input `position` of unit `unit` is the last read of `slot`.
  bool last(std::uint32_t slot, std::size_t unit, std::size_t position) const {
    return unit_[slot] == unit && position_[slot] == position;
  }

 private:
  static constexpr std::size_t kNever = ~std::size_t{0};
  std::vector<std::size_t> unit_, position_;
};

/// Completes a program whose steps name every output's slot: marks each
/// step input that is the last read of a computed slot the caller does not
/// get back (ProgramStep::takes), and turns the slots of outputs that
/// nothing reads or returns into kUnusedSlot.
inline void mark_reads(Program& p) {
  const LastReads reads(p.slot_count, p.steps.size(),
                        [&](std::size_t s) -> const std::vector<std::uint32_t>& { return p.steps[s].inputs; });
  std::vector<bool> is_result(p.slot_count, false);
  for (std::uint32_t r : p.results) is_result[r] = true;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    ProgramStep& step = p.steps[s];
    step.takes.resize(step.inputs.size());
    for (std::size_t j = 0; j < step.inputs.size(); ++j) {
      const std::uint32_t slot = step.inputs[j];
      step.takes[j] = slot >= p.first_computed && !is_result[slot] && reads.last(slot, s, j);
    }
    for (std::uint32_t& slot : step.output_slots)
      if (slot != kUnusedSlot && !is_result[slot] && !reads.read(slot)) slot = kUnusedSlot;
  }
}

/// Runs the steps one by one: `execute(step, inputs, outputs)` runs one
/// step's op, filling `outputs` (cleared before) with one primitive per
/// output. A value read for the last time leaves its slot as its step takes
/// it, and is handed over as reusable when nothing else holds it, the test
/// dispatch makes.
template <class Execute>
void run_steps(const Program& p, std::vector<backend::PrimitivePtr>& slots, Execute&& execute) {
  std::vector<backend::Input> ins;
  std::vector<backend::PrimitivePtr> outs;
  for (const ProgramStep& step : p.steps) {
    ins.clear();
    for (std::size_t j = 0; j < step.inputs.size(); ++j) {
      const std::uint32_t slot = step.inputs[j];
      backend::PrimitivePtr prim = step.takes[j] ? std::move(slots[slot]) : slots[slot];
      const bool reusable = step.takes[j] && prim.use_count() == 1 + static_cast<long>(prim->backend_references());
      ins.push_back({std::move(prim), step.input_specs[j], reusable});
    }
    outs.clear();
    execute(step, std::span<const backend::Input>(ins), outs);
    ins.clear();  // what the step read last dies here
    for (std::size_t k = 0; k < outs.size() && k < step.output_slots.size(); ++k)
      if (step.output_slots[k] != kUnusedSlot) slots[step.output_slots[k]] = std::move(outs[k]);
  }
}

/// A program prepared by a backend (ProgramCompiler::compile).
class CompiledProgram {
 public:
  virtual ~CompiledProgram() = default;
  /// Runs the program. `slots` has Program::slot_count entries, those below
  /// first_computed filled with the backend's primitives (never handed to
  /// an op as reusable). On return the result slots hold the results; other
  /// computed slots may be empty. Work may still be queued on the backend
  /// (as after any op).
  virtual void run(std::vector<backend::PrimitivePtr>& slots) const = 0;
};

/// Implemented by backends that gain from seeing a whole program before it
/// runs; found by dynamic_cast on the backend.
class ProgramCompiler {
 public:
  virtual ~ProgramCompiler() = default;
  /// Prepares `program` (which must stay alive and unchanged while the
  /// result is used) for this backend; null when this one is better run
  /// step by step (run_steps).
  virtual std::unique_ptr<CompiledProgram> compile(const Program& program) = 0;
};

}  // namespace burn::detail
