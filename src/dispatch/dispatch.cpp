// Dispatch: checks devices, infers outputs through the IR, and runs the op on
// the backend the device names, then lets the autodiff layer record a node
// when an input is tracked.
#include <cstddef>
#include <new>

#include <fmt/format.h>

#include <burn/detail/ops.hpp>

#include "amp/autocast_hooks.hpp"
#include "autodiff/graph.hpp"
#include "core/object_pool.hpp"
#include "device/runtime.hpp"
#include "dispatch/backend_call.hpp"
#include "ir/spec_list.hpp"

namespace burn::detail {
namespace {

// Most ops take at most four inputs: their specs, backend inputs and output
// handles live on the stack (each heap allocation is a visible share of a
// tiny op's cost).
constexpr std::size_t kInlineInputs = 4;

/// `n` values of T, on the stack up to kInlineInputs. Only the used slots
/// are constructed (a default TensorSpec or Input is not free either).
template <class T>
class InlineList {
 public:
  explicit InlineList(std::size_t n) : n_(n) {
    if (n > kInlineInputs) heap_.reserve(n);
  }
  ~InlineList() {
    if (n_ <= kInlineInputs)
      for (std::size_t i = 0; i < built_; ++i) slot(i)->~T();
  }
  InlineList(const InlineList&) = delete;
  InlineList& operator=(const InlineList&) = delete;

  /// Appends T{args...}, built in place (at most n values). Braces, so that
  /// aggregates work with compilers that lack C++20's parenthesised
  /// aggregate initialisation (clang 14, which the static checks use).
  template <class... Args>
  void emplace(Args&&... args) {
    if (n_ > kInlineInputs) heap_.push_back(T{std::forward<Args>(args)...});
    else new (slot(built_)) T{std::forward<Args>(args)...};
    ++built_;
  }
  std::span<const T> span() const {
    return n_ > kInlineInputs ? std::span<const T>(heap_) : std::span<const T>(slot(0), built_);
  }
  std::size_t size() const noexcept { return built_; }
  T& operator[](std::size_t i) { return n_ > kInlineInputs ? heap_[i] : *slot(i); }

 private:
  T* slot(std::size_t i) const { return std::launder(reinterpret_cast<T*>(const_cast<std::byte*>(storage_)) + i); }

  std::size_t n_;
  std::size_t built_ = 0;
  alignas(T) std::byte storage_[kInlineInputs * sizeof(T)];
  std::vector<T> heap_;
};

// What dispatch needs from a runtime before running an op on it: its
// settings locked (the first op locks them; the mutex that takes is worth
// skipping on every later op) and the backend's single-output path, if any
// (a virtual call per op is cheap, but this is cheaper still). Both
// are fixed for a runtime's life, and runtimes live as long as the process,
// so each thread keeps them for the last runtime it ran an op on.
backend::SingleOutputExecution* prepare(DeviceRuntime& runtime) {
  struct Last {
    const DeviceRuntime* runtime = nullptr;
    backend::SingleOutputExecution* single = nullptr;
  };
  thread_local Last last;
  if (last.runtime != &runtime) {
    runtime.lock_settings();
    last = {&runtime, runtime.backend().single_output()};
  }
  return last.single;
}

// Runs the op and hands each output to emit(index, handle), in order. A
// template so that execute1 keeps its one output without building a vector.
template <class Emit>
void run(const ir::Op& op, std::span<const TensorRef> inputs, const Device& device, Emit&& emit) {
  InlineList<ir::TensorSpec> specs(inputs.size());
  for (const auto& t : inputs) specs.emplace(t->spec);
  ir::SpecList outputs = ir::infer_output_list(op, specs.span());

  auto& runtime = device.runtime();
  backend::SingleOutputExecution* const single = prepare(runtime);
  auto& backend = runtime.backend();
  if (!backend.supports_op(op))
    throw Error(ir::op_name(op), fmt::format("not supported by the {} backend ({}); use another device", backend.name(),
                                             device.to_string()));
  for (const auto& s : outputs)
    if (!backend.supports_dtype(s.dtype))
      throw Error(ir::op_name(op),
                  fmt::format("{} does not support dtype {}", device.to_string(), dtype_name(s.dtype)));

  // In-place execution: an input may take the output when nothing else can
  // observe it — this call holds the only handle, that handle the only
  // reference to the primitive besides the backend's own pending readers
  // (backends also check their buffer for views), and the autodiff node
  // recorded for this op will not keep it for backward. The backend's count
  // is read first: a drain between the two reads can only lower use_count,
  // which makes the test fail (no reuse), never pass wrongly.
  bool tracked = false;
  for (const auto& t : inputs) {
    tracked = tracked || t->node != nullptr;
    if (!t->primitive)
      throw ExecutionError(ir::op_name(op),
                           "an input has no storage: an autodiff backward rule read a value its "
                           "node did not keep (autodiff::saved_values); this is a bug in burn");
  }
  const std::uint32_t kept = tracked ? autodiff::inputs_kept(op, inputs) : 0;
  InlineList<backend::Input> ins(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorRef& t = inputs[i];
    bool reusable = !autodiff::keeps_slot(kept, i) && t.use_count() == 1;
    if (reusable) {
      const auto pending = static_cast<long>(t->primitive->backend_references());
      reusable = t->primitive.use_count() == 1 + pending;
    }
    ins.emplace(t->primitive, t->spec, reusable);
  }
  backend::PrimitivePtr prim;                // one ? the output : unused
  std::vector<backend::PrimitivePtr> prims;  // one ? unused : the outputs
  const bool one = call_backend(runtime, single, op, ins.span(), outputs.span(), prim, prims);
  InlineList<TensorRef> out(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i)
    out.emplace(
        make_pooled<TensorImpl>(TensorImpl{std::move(outputs.data()[i]), device, std::move(one ? prim : prims[i])}));

  // Autodiff: with a tracked input, the float outputs join the graph.
  if (tracked) {
    if (auto node = autodiff::record(op, inputs, out.span())) {
      for (std::size_t i = 0; i < out.size(); ++i)
        if (is_float(out[i]->spec.dtype))
          out[i] = make_pooled<TensorImpl>(TensorImpl{out[i]->spec, out[i]->device, out[i]->primitive, node, i});
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) emit(i, std::move(out[i]));
}

// Outputs take the autodiff context of the first tracked input (else the
// first input), and every input must be on that device.
const Device& common_device(const ir::Op& op, std::span<const TensorRef> inputs) {
  if (inputs.empty()) throw Error(ir::op_name(op), "needs at least one input tensor");
  // Tensor checks its own handle; this covers handles that reach dispatch
  // some other way (module and autodiff code hold TensorRefs directly).
  for (const auto& t : inputs)
    if (!t) [[unlikely]]
      throw_moved_from(ir::op_name(op));
  const TensorRef* context = &inputs[0];
  for (const auto& t : inputs)
    if (t->node) {
      context = &t;
      break;
    }
  const Device& device = (*context)->device;
  for (const auto& t : inputs.subspan(1))
    if (!(t->device == device))
      throw Error(ir::op_name(op),
                  fmt::format("tensors are on different devices: {} and {}; move one with to_device() first",
                              device.to_string(), t->device.to_string()));
  return device;
}

// The first output, for the ops that have one (the others keep it too).
TensorRef run1(const ir::Op& op, std::span<const TensorRef> inputs, const Device& device) {
  TensorRef first;
  run(op, inputs, device, [&](std::size_t i, TensorRef&& t) {
    if (i == 0) first = std::move(t);
  });
  if (!first) throw ExecutionError(ir::op_name(op), "produced no output tensor");
  return first;
}

}  // namespace

// Under an autocast scope (include/burn/amp/autocast.hpp) the op may run on
// cast inputs; the casts are ops of their own, recorded for autodiff.
std::vector<TensorRef> execute(const ir::Op& op, std::span<const TensorRef> inputs) {
  if (amp::detail::may_apply()) [[unlikely]] {
    if (auto cast = amp::detail::autocast_inputs(op, inputs)) {
      std::vector<TensorRef> out;
      run(op, *cast, common_device(op, *cast), [&](std::size_t, TensorRef&& t) { out.push_back(std::move(t)); });
      return out;
    }
  }
  std::vector<TensorRef> out;
  run(op, inputs, common_device(op, inputs), [&](std::size_t, TensorRef&& t) { out.push_back(std::move(t)); });
  return out;
}

TensorRef execute1(const ir::Op& op, std::span<const TensorRef> inputs) {
  if (amp::detail::may_apply()) [[unlikely]] {
    if (auto cast = amp::detail::autocast_inputs(op, inputs)) return run1(op, *cast, common_device(op, *cast));
  }
  return run1(op, inputs, common_device(op, inputs));
}

TensorRef create(const ir::Op& op, const Device& device) { return run1(op, {}, device); }

}  // namespace burn::detail
