// burn::trace (include/burn/trace.hpp): a function recorded on the capture
// device, replayed as a flat program of backend calls.
//
// A function is recorded once per backend it is called on, with the
// capture device taking that backend's op support (capture::SupportScope):
// frontends choose an optional op or its composite as they would there
// (softmax, batch norm in training, ...), so the program is the eager
// calls' sequence on that backend. Building a program walks the capture
// graph back from the function's results and numbers every value with a
// slot: the inputs first, then the constants the function brought to the
// device (uploaded to the backend once, and kept), then each recorded op's
// outputs in recording order. A call fills the input slots, runs the ops in
// order on the inputs' backend, and empties each slot after the op that
// reads it last, handing that op the value as reusable when nothing else
// holds it — the test dispatch makes, so a backend computes in place
// exactly where it would have eagerly. A backend that compiles programs
// (dispatch/program.hpp: the fusion layer, the remote backend) gets the
// whole program once per recording and runs each call its own way.
#include <burn/trace.hpp>

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include <burn/detail/ops.hpp>
#include <burn/device.hpp>
#include <burn/error.hpp>
#include <burn/kind.hpp>

#include "backends/capture/graph.hpp"
#include "core/object_pool.hpp"
#include "device/runtime.hpp"
#include "dispatch/backend_call.hpp"
#include "dispatch/program.hpp"

namespace burn {
namespace {
constexpr const char* kWhat = "trace";

std::string spec_text(const ir::TensorSpec& s) {
  return fmt::format("{} {}", dtype_name(s.dtype), s.shape.to_string());
}
}  // namespace

namespace detail {

struct TracedProgram {
  std::vector<ir::TensorSpec> input_specs;
  std::vector<TensorData> constants;  ///< slot input_specs.size() + k
  Program program;
  std::vector<ir::TensorSpec> result_specs;

  /// The constants on the backend the program was recorded for.
  std::vector<backend::PrimitivePtr> uploaded;
  /// The backend's own preparation of the program, where it makes one
  /// (the fusion layer plans it once); null: run step by step.
  std::unique_ptr<const CompiledProgram> compiled;
};

/// A traced function: the function, its input specs, the program recorded
/// for the capture device's own op support (validated at construction),
/// and one program per backend it has been called on.
class TracedState {
 public:
  TracedFunction::Function fn;
  std::shared_ptr<const TracedProgram> generic;

  /// The program for `backend` and inputs of these specs (recorded on
  /// first use).
  std::shared_ptr<const TracedProgram> program_for(backend::Backend& backend, const Device& device,
                                                   const TracedFunction::Tensors& inputs) const;

 private:
  struct Recorded {
    // The device runtime (one backend) the program was prepared for, held
    // weakly: a remote device whose connection was lost gets a new runtime
    // and backend, which an entry of the old one must never match, even at
    // the old one's address.
    std::weak_ptr<DeviceRuntime> runtime;
    std::shared_ptr<const TracedProgram> program;
  };
  mutable std::mutex mutex_;
  mutable std::vector<Recorded> programs_;  // few: one per device runtime and set of input specs
};

}  // namespace detail

namespace {

using detail::mark_reads;
using detail::Program;
using detail::ProgramStep;
using detail::TracedProgram;
using detail::TracedState;
using ValuePtr = capture::ValuePtr;

// Builds the program: slots for inputs, constants and op outputs, the ops
// in recording order, and where each value is read last.
std::shared_ptr<TracedProgram> build(const std::vector<ValuePtr>& placeholders, const std::vector<ValuePtr>& results,
                                     std::vector<ir::TensorSpec> specs) {
  auto program = std::make_shared<TracedProgram>();
  program->input_specs = std::move(specs);

  // Every node the results depend on, and the constants they read.
  std::unordered_map<const capture::CapturedValue*, std::uint32_t> input_slot;
  for (std::size_t k = 0; k < placeholders.size(); ++k)
    input_slot.emplace(placeholders[k].get(), static_cast<std::uint32_t>(k));
  std::vector<std::shared_ptr<const capture::OpNode>> nodes;
  std::vector<ValuePtr> constants;
  std::unordered_set<const void*> seen;
  std::vector<ValuePtr> stack(results.begin(), results.end());
  while (!stack.empty()) {
    ValuePtr v = std::move(stack.back());
    stack.pop_back();
    if (input_slot.contains(v.get())) continue;
    if (v->is_constant()) {
      if (seen.insert(v.get()).second) constants.push_back(v);
      continue;
    }
    const auto& node = v->node();
    if (!seen.insert(node.get()).second) continue;
    nodes.push_back(node);
    for (const auto& in : node->inputs) stack.push_back(in);
  }
  std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a->sequence < b->sequence; });
  std::sort(constants.begin(), constants.end(),
            [](const auto& a, const auto& b) { return a->sequence() < b->sequence(); });

  // Slots: inputs, constants, then each node's outputs.
  std::unordered_map<const capture::CapturedValue*, std::uint32_t> constant_slot;
  const auto first_constant = static_cast<std::uint32_t>(program->input_specs.size());
  for (std::size_t k = 0; k < constants.size(); ++k) {
    constant_slot.emplace(constants[k].get(), first_constant + static_cast<std::uint32_t>(k));
    program->constants.push_back(constants[k]->data());
  }
  std::uint32_t next = first_constant + static_cast<std::uint32_t>(constants.size());
  std::unordered_map<const capture::OpNode*, std::uint32_t> first_output;
  for (const auto& node : nodes) {
    first_output.emplace(node.get(), next);
    next += static_cast<std::uint32_t>(node->outputs.size());
  }
  program->program.slot_count = next;
  program->program.first_computed = first_constant + constants.size();
  const auto slot_of = [&](const ValuePtr& v) -> std::uint32_t {
    if (auto it = input_slot.find(v.get()); it != input_slot.end()) return it->second;
    if (v->is_constant()) return constant_slot.at(v.get());
    return first_output.at(v->node().get()) + static_cast<std::uint32_t>(v->output());
  };

  Program& p = program->program;
  for (const ValuePtr& r : results) {
    p.results.push_back(slot_of(r));
    program->result_specs.push_back(r->spec());
  }
  for (const auto& node : nodes) {
    ProgramStep step;
    step.op = node->op;
    step.outputs = node->outputs;
    for (const auto& in : node->inputs) {
      step.inputs.push_back(slot_of(in));
      step.input_specs.push_back(in->spec());
    }
    p.steps.push_back(std::move(step));
  }

  // Each step's output slots, then what reads them: the last reads, and
  // outputs nothing reads.
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const std::uint32_t base = first_output.at(nodes[s].get());
    for (std::uint32_t k = 0; k < p.steps[s].outputs.size(); ++k) p.steps[s].output_slots.push_back(base + k);
  }
  mark_reads(p);
  return program;
}

// Runs fn on placeholders of `specs` on the capture device (with autodiff)
// and builds the program of what it recorded.
std::shared_ptr<TracedProgram> record(const TracedFunction::Function& fn, const std::vector<ir::TensorSpec>& specs) {
  const Device capture = Device::capture().autodiff();
  TracedFunction::Tensors placeholders;
  std::vector<capture::ValuePtr> values;
  for (const auto& spec : specs) {
    placeholders.push_back(detail::copy_from_data(TensorData::zeros(spec.shape, spec.dtype),
                                                  TensorCreationOptions(capture, spec.dtype),
                                                  kind_of_dtype(spec.dtype)));
    values.push_back(capture::captured_value(placeholders.back()->primitive, kWhat));
  }
  TracedFunction::Tensors results;
  try {
    results = fn(placeholders);
  } catch (const Error& e) {
    std::string inputs;
    for (const auto& spec : specs) inputs += (inputs.empty() ? "" : ", ") + spec_text(spec);
    throw Error(kWhat, fmt::format("the function failed while it was traced for inputs ({}): {}", inputs, e.what()));
  }
  if (results.empty()) throw Error(kWhat, "the traced function returned no tensor; return what it computes");
  std::vector<capture::ValuePtr> result_values;
  for (std::size_t k = 0; k < results.size(); ++k) {
    if (!results[k]) throw Error(kWhat, fmt::format("result {} of the traced function is an empty handle", k));
    if (results[k]->device.type() != DeviceType::Capture)
      throw Error(kWhat, fmt::format("result {} of the traced function is on {}, not computed from its inputs; "
                                     "compute results from the inputs the function is given",
                                     k, results[k]->device.to_string()));
    result_values.push_back(capture::captured_value(results[k]->primitive, kWhat));
  }
  return build(values, result_values, specs);
}

// Runs the steps one by one on the runtime's backend, as dispatch would.
void run_steps_on(detail::DeviceRuntime& runtime, const Program& p, std::vector<backend::PrimitivePtr>& slots) {
  backend::SingleOutputExecution* const single = runtime.backend().single_output();
  backend::PrimitivePtr one;
  detail::run_steps(
      p, slots,
      [&](const ProgramStep& step, std::span<const backend::Input> ins, std::vector<backend::PrimitivePtr>& outs) {
        if (detail::call_backend(runtime, single, step.op, ins, step.outputs, one, outs))
          outs.push_back(std::move(one));  // moved: no second handle keeps it from reuse
      });
}

}  // namespace

namespace detail {

std::shared_ptr<const TracedProgram> TracedState::program_for(backend::Backend& backend, const Device& device,
                                                              const TracedFunction::Tensors& inputs) const {
  const auto same_specs = [&](const TracedProgram& p) {
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k]->spec != p.input_specs[k]) return false;
    return true;
  };
  const std::weak_ptr<DeviceRuntime> runtime = device.runtime().weak_from_this();
  const auto same_runtime = [&](const Recorded& r) {
    return !r.runtime.owner_before(runtime) && !runtime.owner_before(r.runtime);
  };
  const std::lock_guard lock(mutex_);
  std::erase_if(programs_, [](const Recorded& r) { return r.runtime.expired(); });
  for (const Recorded& r : programs_)
    if (same_runtime(r) && same_specs(*r.program)) return r.program;
  std::vector<ir::TensorSpec> specs;
  for (const auto& t : inputs) specs.push_back(t->spec);
  std::shared_ptr<TracedProgram> program;
  {
    const capture::SupportScope as_target(backend);
    program = record(fn, specs);
  }
  for (const auto& s : program->program.steps) {
    // Optional ops follow the backend's support; a required one it lacks
    // has no composite to fall back on.
    if (!backend.supports_op(s.op))
      throw Error(kWhat, fmt::format("the traced function uses {}, which the {} backend ({}) does not support; "
                                     "call it on another device",
                                     ir::op_name(s.op), backend.name(), device.to_string()));
    for (const auto& o : s.outputs)
      if (!backend.supports_dtype(o.dtype))
        throw Error(kWhat, fmt::format("the traced function computes {} in {}, which {} does not support",
                                       ir::op_name(s.op), dtype_name(o.dtype), device.to_string()));
  }
  for (const TensorData& c : program->constants) program->uploaded.push_back(backend.from_data(c));
  if (auto* compiler = dynamic_cast<ProgramCompiler*>(&backend); compiler && !program->program.steps.empty())
    program->compiled = compiler->compile(program->program);
  programs_.push_back({runtime, program});
  return program;
}

}  // namespace detail

TracedFunction::TracedFunction(const Function& fn, const std::vector<ir::TensorSpec>& inputs) {
  if (inputs.empty()) throw Error(kWhat, "a traced function needs at least one input tensor");
  auto state = std::make_shared<TracedState>();
  state->fn = fn;
  state->generic = record(fn, inputs);
  state_ = std::move(state);
}

TracedFunction::Tensors TracedFunction::operator()(const Tensors& inputs) const {
  const std::vector<ir::TensorSpec>& specs = state_->generic->input_specs;
  if (inputs.size() != specs.size())
    throw Error(kWhat,
                fmt::format("the function was traced with {} inputs, called with {}", specs.size(), inputs.size()));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k]) throw Error(kWhat, fmt::format("input {} is an empty (moved-from) tensor handle", k));
    if (inputs[k]->node)
      throw Error(kWhat, fmt::format("input {} is tracked by autodiff; a traced function is not differentiated "
                                     "(its gradients are computed inside it): pass detach()ed tensors",
                                     k));
    if (!(inputs[k]->device == inputs[0]->device))
      throw Error(kWhat, fmt::format("inputs are on different devices: {} and {}; move one with to_device() first",
                                     inputs[0]->device.to_string(), inputs[k]->device.to_string()));
  }
  const Device& device = inputs[0]->device;
  if (device.type() == DeviceType::Capture)
    throw Error(kWhat,
                "calling a traced function on the capture device records nothing; call it on a device "
                "that computes");
  auto& runtime = device.runtime();
  runtime.lock_settings();
  backend::Backend& backend = runtime.backend();
  const auto program = state_->program_for(backend, device, inputs);
  const TracedProgram& traced = *program;
  const Program& p = traced.program;

  std::vector<backend::PrimitivePtr> slots(p.slot_count);
  for (std::size_t k = 0; k < inputs.size(); ++k) slots[k] = inputs[k]->primitive;
  std::copy(traced.uploaded.begin(), traced.uploaded.end(), slots.begin() + static_cast<std::ptrdiff_t>(inputs.size()));
  if (traced.compiled) {
    traced.compiled->run(slots);
    for (std::size_t s = 0; s < p.steps.size(); ++s) runtime.count_op();
  } else {
    run_steps_on(runtime, p, slots);
  }
  Tensors results;
  results.reserve(p.results.size());
  for (std::size_t k = 0; k < p.results.size(); ++k)
    results.push_back(detail::make_pooled<detail::TensorImpl>(
        detail::TensorImpl{traced.result_specs[k], device, slots[p.results[k]]}));
  return results;
}

const std::vector<ir::TensorSpec>& TracedFunction::input_specs() const noexcept { return state_->generic->input_specs; }
std::size_t TracedFunction::num_ops() const noexcept { return state_->generic->program.steps.size(); }

}  // namespace burn
