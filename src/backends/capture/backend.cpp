// Device::capture(): records ops instead of running them (graph.hpp has the
// values it makes). Every op and dtype is accepted, shapes and dtypes come
// from ir::infer_outputs as on any device, and nothing is computed, so
// to_data has nothing to return: reading a captured tensor is an error that
// says so. burn::onnx exports what a function records here.
#include <atomic>

#include <burn/backend/registry.hpp>
#include <burn/error.hpp>
#include <fmt/format.h>

#include "backends/capture/graph.hpp"

namespace burn::capture {

ValuePtr captured_value(const backend::PrimitivePtr& primitive, const char* op) {
  auto value = std::dynamic_pointer_cast<const CapturedValue>(primitive);
  if (!value) throw Error(op, "the tensor is not on the capture device");
  return value;
}

namespace {
// The backend whose op support the capture device takes on this thread
// (SupportScope), or null.
thread_local const backend::Backend* t_support_target = nullptr;
}  // namespace

SupportScope::SupportScope(const backend::Backend& target) noexcept : previous_(t_support_target) {
  t_support_target = &target;
}
SupportScope::~SupportScope() { t_support_target = previous_; }

namespace {

class CaptureBackend final : public backend::Backend {
 public:
  std::string name() const override { return "capture"; }
  std::string description() const override {
    return "records operations into a graph instead of running them (ONNX export)";
  }
  PhysicalIdentity identity() const override {
    PhysicalIdentity id;
    id.label = "capture";
    return id;
  }
  std::string physical_name() const override { return "graph capture (no hardware)"; }
  bool supports_dtype(DType) const override { return true; }
  // Batch norm in training is recorded as its composite, which an export
  // writes as ONNX operators; the op itself has none (see export_ops.cpp).
  // Under a SupportScope (burn::trace) the target backend's support rules.
  bool supports_op(const ir::Op& op) const override {
    if (t_support_target) return t_support_target->supports_op(op);
    return !std::holds_alternative<ir::BatchNorm>(op);
  }

  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override {
    auto node = std::make_shared<OpNode>();
    node->op = op;
    node->inputs.reserve(inputs.size());
    const std::string name(ir::op_name(op));
    for (const auto& in : inputs) node->inputs.push_back(captured_value(in.primitive, name.c_str()));
    node->outputs.assign(outputs.begin(), outputs.end());
    node->sequence = next_sequence();
    std::shared_ptr<const OpNode> frozen = std::move(node);
    std::vector<backend::PrimitivePtr> out;
    out.reserve(outputs.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) out.push_back(std::make_shared<CapturedValue>(frozen, i));
    return out;
  }

  backend::PrimitivePtr from_data(TensorData data) override {
    return std::make_shared<CapturedValue>(std::move(data), next_sequence());
  }

  TensorData to_data(const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec) override {
    auto value = captured_value(primitive, "to_data");
    // A constant still has its data (a parameter moved here and back).
    if (value->is_constant()) return value->data();
    throw Error("to_data",
                fmt::format("a tensor computed on the capture device ({} {}) has no values: the capture device "
                            "records operations without running them; compute on another device (Device::cpu(), "
                            "Device::flex(), ...) to read results",
                            dtype_name(spec.dtype), spec.shape.to_string()));
  }

  void seed(std::uint64_t) override {}

 private:
  static std::uint64_t next_sequence() {
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
  }
};

}  // namespace
}  // namespace burn::capture

namespace burn {

Device Device::capture() {
  static const Device d(DispatchDevice{DeviceType::Capture, 0});
  return d;
}

namespace backend {
BackendFactory capture_factory() {
  BackendFactory factory{
      DeviceType::Capture, [] { return default_rank::kNever; }, [] { return std::size_t{1}; },
      [](std::size_t) -> std::unique_ptr<Backend> { return std::make_unique<capture::CaptureBackend>(); }};
  factory.records_only = true;
  return factory;
}
}  // namespace backend

}  // namespace burn
