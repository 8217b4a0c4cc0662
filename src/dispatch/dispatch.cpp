// Dispatch: checks devices, infers outputs through the IR, and runs the op on
// the backend the device names, then lets the autodiff layer record a node
// when an input is tracked.
#include <cstddef>
#include <new>

#include <fmt/format.h>

#include <burn/detail/ops.hpp>

#include "autodiff/graph.hpp"
#include "device/runtime.hpp"
#include "dispatch/op_profile.hpp"

namespace burn::detail {
namespace {

// Most ops take at most four inputs: their specs and backend inputs live on
// the stack (each heap allocation is a visible share of a tiny op's cost).
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

  /// Appends a value (at most n of them).
  void push(T value) {
    if (n_ > kInlineInputs) heap_.push_back(std::move(value));
    else new (slot(built_)) T(std::move(value));
    ++built_;
  }
  std::span<const T> span() const {
    return n_ > kInlineInputs ? std::span<const T>(heap_) : std::span<const T>(slot(0), built_);
  }

 private:
  T* slot(std::size_t i) const { return std::launder(reinterpret_cast<T*>(const_cast<std::byte*>(storage_)) + i); }

  std::size_t n_;
  std::size_t built_ = 0;
  alignas(T) std::byte storage_[kInlineInputs * sizeof(T)];
  std::vector<T> heap_;
};

std::vector<TensorRef> run(const ir::Op& op, std::span<const TensorRef> inputs, const Device& device) {
  InlineList<ir::TensorSpec> specs(inputs.size());
  for (const auto& t : inputs) specs.push(t->spec);
  std::vector<ir::TensorSpec> outputs = ir::infer_outputs(op, specs.span());

  auto& runtime = device.runtime();
  runtime.lock_settings();
  auto& backend = runtime.backend();
  if (!backend.supports_op(op))
    throw Error(ir::op_name(op), fmt::format("not supported by the {} backend ({}); use another device",
                                             backend.name(), device.to_string()));
  for (const auto& s : outputs)
    if (!backend.supports_dtype(s.dtype))
      throw Error(ir::op_name(op), fmt::format("{} does not support dtype {}", device.to_string(), dtype_name(s.dtype)));

  // In-place execution: an input may take the output when nothing else can
  // observe it — this call holds the only handle, that handle the only
  // reference to the primitive (backends also check their buffer for views),
  // and no autodiff node will keep the inputs for backward.
  bool tracked = false;
  for (const auto& t : inputs) tracked = tracked || t->node != nullptr;
  InlineList<backend::Input> ins(inputs.size());
  for (const auto& t : inputs) {
    const bool reusable = !tracked && t.use_count() == 1 && t->primitive.use_count() == 1;
    ins.push({t->primitive, t->spec, reusable});
  }
  std::vector<backend::PrimitivePtr> prims;
  if (profile::enabled()) {
    // Synchronous backends finish inside execute; asynchronous ones are synced
    // so the time belongs to this op.
    const auto start = std::chrono::steady_clock::now();
    prims = backend.execute(op, ins.span(), outputs);
    backend.sync();
    profile::record(ir::op_name(op), std::chrono::steady_clock::now() - start);
  } else {
    prims = backend.execute(op, ins.span(), outputs);
  }
  runtime.count_op();
  if (prims.size() != outputs.size())
    throw ExecutionError(ir::op_name(op), fmt::format("the {} backend returned {} outputs, {} expected",
                                                      backend.name(), prims.size(), outputs.size()));
  std::vector<TensorRef> out;
  out.reserve(prims.size());
  for (std::size_t i = 0; i < prims.size(); ++i)
    out.push_back(std::make_shared<const TensorImpl>(TensorImpl{outputs[i], device, std::move(prims[i])}));

  // Autodiff: with a tracked input, the float outputs join the graph.
  if (auto node = autodiff::record(op, inputs, out)) {
    for (std::size_t i = 0; i < out.size(); ++i)
      if (is_float(out[i]->spec.dtype))
        out[i] = std::make_shared<const TensorImpl>(TensorImpl{out[i]->spec, out[i]->device, out[i]->primitive, node, i});
  }
  return out;
}

}  // namespace

std::vector<TensorRef> execute(const ir::Op& op, std::span<const TensorRef> inputs) {
  if (inputs.empty()) throw Error(ir::op_name(op), "needs at least one input tensor");
  // Outputs take the autodiff context of the first tracked input (else the first input).
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
  return run(op, inputs, device);
}

TensorRef execute1(const ir::Op& op, std::span<const TensorRef> inputs) { return execute(op, inputs).at(0); }

TensorRef create(const ir::Op& op, const Device& device) { return run(op, {}, device).at(0); }

}  // namespace burn::detail
