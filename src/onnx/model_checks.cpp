// The model-level checks of model_checks.hpp.
#include "onnx/model_checks.hpp"

#include <set>

#include <burn/error.hpp>
#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include "onnx/import_ops.hpp"

namespace burn::onnx {

std::int64_t declared_opset(const ::onnx::ModelProto& model) {
  std::int64_t opset = 0;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  return opset;
}

bool checker_knows(const ::onnx::ModelProto& model, std::int64_t opset) {
  const auto& ranges = ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto it = ranges.find(::onnx::ONNX_DOMAIN);
  return model.ir_version() <= ::onnx::IR_VERSION && it != ranges.end() && opset <= it->second.second;
}

void check_graph_structure(const ::onnx::ModelProto& model, const std::string& source) {
  if (model.ir_version() > kNewestIrVersion)
    throw Error(kLoadOp, fmt::format("{}: the model has ONNX IR version {}; this version reads IR versions up to {} "
                                     "(save it with an older onnx package or exporter)",
                                     source, model.ir_version(), kNewestIrVersion));
  const auto& graph = model.graph();
  std::set<std::string> defined;
  auto define = [&](const std::string& name, const std::string& what) {
    if (name.empty()) return;
    if (!defined.insert(name).second)
      throw Error(kLoadOp, fmt::format("{} is not a valid ONNX model: the value '{}' ({}) is defined twice", source,
                                       name, what));
  };
  for (const auto& init : graph.initializer()) define(init.name(), "an initializer");
  for (const auto& in : graph.input())
    if (!defined.count(in.name())) define(in.name(), "a graph input");
  for (const auto& node : graph.node()) {
    if (node.op_type().empty())
      throw Error(kLoadOp, fmt::format("{} is not a valid ONNX model: node '{}' has no operator", source, node.name()));
    for (const auto& in : node.input())
      if (!in.empty() && !defined.count(in))
        throw Error(kLoadOp, fmt::format("{} is not a valid ONNX model: node '{}' ({}) reads '{}', which no graph "
                                         "input, initializer or earlier node defines",
                                         source, node.name(), node.op_type(), in));
    for (const auto& out : node.output()) define(out, fmt::format("an output of node '{}'", node.name()));
  }
  for (const auto& out : graph.output())
    if (!defined.count(out.name()))
      throw Error(kLoadOp, fmt::format("{} is not a valid ONNX model: the graph output '{}' is never defined", source,
                                       out.name()));
}

}  // namespace burn::onnx
