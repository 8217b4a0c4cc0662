// The capture device's tensors: values in a recorded graph instead of data.
//
// A captured tensor is a CapturedValue. It is a constant (host data brought
// to the device with from_data: parameters, example inputs, constants a
// forward pass makes), or output `output` of a recorded op, whose node holds
// the op (the IR value itself) and its inputs. Nodes keep their inputs alive,
// so the graph of a result is reachable from the result alone; ONNX export
// walks it from the outputs a function returned.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <burn/backend/backend.hpp>
#include <burn/detail/ops.hpp>
#include <burn/ir/op.hpp>
#include <burn/tensor_data.hpp>

namespace burn::capture {

class CapturedValue;
using ValuePtr = std::shared_ptr<const CapturedValue>;

/// One recorded op.
struct OpNode {
  ir::Op op;
  std::vector<ValuePtr> inputs;
  std::vector<ir::TensorSpec> outputs;
  /// Recording order: a valid topological order of the whole capture.
  std::uint64_t sequence = 0;
};

/// A composite operation whose primitives produced a value (from
/// detail::mark_composite): an exporter may write it as one operator.
struct CompositeMark {
  detail::Composite kind;
  std::vector<ValuePtr> inputs;
  std::int64_t dim = 0;
  double epsilon = 0.0;
};

class CapturedValue final : public backend::Primitive {
 public:
  /// A constant holding `data`.
  CapturedValue(TensorData data, std::uint64_t sequence)
      : spec_{data.shape(), data.dtype()}, data_(std::move(data)), sequence_(sequence) {}
  /// Output `output` of `node`.
  CapturedValue(std::shared_ptr<const OpNode> node, std::size_t output)
      : spec_(node->outputs.at(output)), node_(std::move(node)), output_(output), sequence_(node_->sequence) {}

  const ir::TensorSpec& spec() const noexcept { return spec_; }
  bool is_constant() const noexcept { return data_.has_value(); }
  /// The constant's data (is_constant()).
  const TensorData& data() const { return *data_; }
  /// The producing op (null for a constant) and which of its outputs this is.
  const std::shared_ptr<const OpNode>& node() const noexcept { return node_; }
  std::size_t output() const noexcept { return output_; }
  std::uint64_t sequence() const noexcept { return sequence_; }
  /// The composite that produced this value, if one was marked.
  const std::shared_ptr<const CompositeMark>& composite() const noexcept { return composite_; }
  /// Marks the value; done right after the composite computed it, before any reader sees it.
  void mark(std::shared_ptr<const CompositeMark> mark) const { composite_ = std::move(mark); }

 private:
  ir::TensorSpec spec_;
  std::optional<TensorData> data_;
  std::shared_ptr<const OpNode> node_;
  std::size_t output_ = 0;
  std::uint64_t sequence_ = 0;
  mutable std::shared_ptr<const CompositeMark> composite_;
};

/// The captured value behind a capture-device primitive; throws burn::Error
/// naming `op` when the primitive belongs to another backend.
ValuePtr captured_value(const backend::PrimitivePtr& primitive, const char* op);

/// While alive, the capture device takes on this thread exactly the ops
/// `target` supports, so that frontends choose what they would choose on
/// `target` (an optional op or its composite: softmax, batch norm, ...) and
/// a recording replays there as the eager calls would have run (burn::trace).
class SupportScope {
 public:
  explicit SupportScope(const backend::Backend& target) noexcept;
  ~SupportScope();
  SupportScope(const SupportScope&) = delete;
  SupportScope& operator=(const SupportScope&) = delete;

 private:
  const backend::Backend* previous_;
};

}  // namespace burn::capture
