// The state ONNX export shares between assembling the model (export.cpp)
// and writing each recorded op as ONNX operators (export_ops.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <burn/scalar.hpp>

#include "backends/capture/graph.hpp"
#include "onnx/proto.hpp"

namespace burn::onnx {

inline constexpr std::string_view kExportOp = "onnx::export";

/// A recorded value as export sees it: its ONNX name and, with a dynamic
/// batch, which of its dims change with the batch size (from the second trace).
struct ExportedValue {
  std::string name;
  std::vector<bool> dynamic;  // per dim; empty when no dim is dynamic
  bool any_dynamic() const {
    for (bool d : dynamic)
      if (d) return true;
    return false;
  }
};

class GraphWriter {
 public:
  explicit GraphWriter(::onnx::GraphProto& graph) : graph_(graph) {}

  /// A fresh value name starting with `hint`.
  std::string fresh(std::string_view hint);
  /// The ONNX name of a recorded value (named before the op that reads it is written).
  const ExportedValue& value(const capture::CapturedValue* v) const;
  bool has_value(const capture::CapturedValue* v) const { return values_.count(v) > 0; }
  void set_value(const capture::CapturedValue* v, ExportedValue exported) { values_[v] = std::move(exported); }

  /// Adds a node; returns it for attributes.
  ::onnx::NodeProto& node(std::string_view op_type, std::vector<std::string> inputs, std::vector<std::string> outputs);
  /// One-output node whose output gets a fresh name; returns that name.
  std::string node1(std::string_view op_type, std::vector<std::string> inputs, ::onnx::NodeProto** out = nullptr);

  /// An initializer holding `data` (a fresh name from `hint`).
  std::string initializer(const TensorData& data, std::string_view hint);
  std::string initializer_named(const TensorData& data, const std::string& name);
  /// A 1-D int64 initializer (shapes, axes, pads as inputs).
  std::string ints(const std::vector<std::int64_t>& values, std::string_view hint = "ints");
  /// A rank-0 initializer holding `value` as `dtype`.
  std::string scalar(Scalar value, DType dtype);

  /// A symbolic dim (a dynamic axis): its name, the graph input and dim that
  /// carry it, and its sizes in the two traces (unique to it: the second
  /// trace moves each symbol by its own step).
  struct Symbol {
    std::string name;
    std::string input;
    std::size_t dim = 0;
    std::size_t a = 0, b = 0;
    std::string value;  // the running size as a 1-D int64 tensor, once written
  };
  void add_symbol(Symbol symbol) { symbols_.push_back(std::move(symbol)); }
  /// The symbol whose sizes in the two traces are `a` and `b`, or nullptr.
  const Symbol* symbol_of(std::size_t a, std::size_t b) const;
  /// A symbol's running size as a 1-D int64 tensor of one element (Shape and
  /// Gather of its input, written once, where first needed).
  const std::string& symbol_value(const Symbol& symbol);

 private:
  ::onnx::GraphProto& graph_;
  std::unordered_map<const capture::CapturedValue*, ExportedValue> values_;
  std::unordered_map<std::string, std::size_t> counters_;
  std::size_t nodes_ = 0;
  std::vector<Symbol> symbols_;
};

/// The recorded op being written: the op, its inputs' and outputs' names and
/// specs, and the same op of the second trace when the batch is dynamic.
struct OpContext {
  const capture::OpNode& node;
  const capture::OpNode* twin = nullptr;  // the op at the other batch size (dynamic batch only)
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  /// Whether each input's and output's dims change with the batch (empty vectors when static).
  std::vector<std::vector<bool>> input_dynamic;
  std::vector<std::vector<bool>> output_dynamic;
  /// Whether output i is read by anything (the graph's outputs included).
  std::vector<bool> output_used;

  const ir::TensorSpec& in_spec(std::size_t i) const { return node.inputs.at(i)->spec(); }
  const ir::TensorSpec& out_spec(std::size_t i) const { return node.outputs.at(i); }
  bool input_dim_dynamic(std::size_t i, std::size_t d) const {
    return i < input_dynamic.size() && d < input_dynamic[i].size() && input_dynamic[i][d];
  }
  bool output_dim_dynamic(std::size_t i, std::size_t d) const {
    return i < output_dynamic.size() && d < output_dynamic[i].size() && output_dynamic[i][d];
  }
};

/// Writes the composite that produced the op's single output (softmax,
/// layer norm, linear, batch norm) as one ONNX operator over `inputs` (the
/// composite's own inputs, already named) producing ctx.outputs[0].
void write_composite(GraphWriter& w, const OpContext& ctx, const capture::CompositeMark& mark,
                     const std::vector<std::string>& inputs);

/// Writes one recorded op as ONNX nodes producing ctx.outputs; throws
/// burn::Error("[onnx::export] ...") for an op (or an op's use) ONNX cannot express.
void write_op(GraphWriter& w, const OpContext& ctx);

}  // namespace burn::onnx
