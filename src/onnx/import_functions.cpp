// Model-local functions, inlined: a node whose (domain, op_type) names one
// of ModelProto.functions becomes the function's body, its formal inputs and
// outputs bound to the node's, its other values renamed under the node's
// name. Import then sees only operators it runs, and a loaded model keeps
// the one flat graph that constant folding, batch-norm folding and release
// planning work on. ONNX Runtime inlines local functions the same way before
// it optimises a graph.
#include "onnx/import_functions.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include <burn/error.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <google/protobuf/unknown_field_set.h>
#include <onnx/defs/schema.h>

#include "onnx/import_ops.hpp"

namespace burn::onnx {
namespace {

// Fields of IR versions 9 and 10, newer than the schema Debian's ONNX
// library was built from (IR 8). Protobuf keeps fields its schema lacks as
// unknown fields; they are read by number, through the schema where it
// knows them.
constexpr int kFunctionAttributeProtoField = 11;  // FunctionProto.attribute_proto: defaults (IR 9)
constexpr int kFunctionOverloadField = 13;        // FunctionProto.overload (IR 10)
constexpr int kNodeOverloadField = 8;             // NodeProto.overload (IR 10)

/// The most nodes inlining may give: functions calling functions can
/// multiply a small file into more nodes than memory holds (a chain of 40,
/// each calling the next twice, is 2^40), so the count is known before any
/// node is made.
constexpr std::size_t kMaxInlinedNodes = std::size_t{1} << 20;

/// The bytes of each occurrence of field `number` of `m` (a string, or a
/// message serialised), whether or not the linked schema knows the field.
std::vector<std::string> field_bytes(const google::protobuf::Message& m, int number) {
  std::vector<std::string> out;
  const auto* reflection = m.GetReflection();
  if (const auto* field = m.GetDescriptor()->FindFieldByNumber(number)) {
    const bool message = field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE;
    if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(m, field); ++i)
        out.push_back(message ? reflection->GetRepeatedMessage(m, field, i).SerializeAsString()
                              : reflection->GetRepeatedString(m, field, i));
    } else if (message ? reflection->HasField(m, field) : !reflection->GetString(m, field).empty()) {
      out.push_back(message ? reflection->GetMessage(m, field).SerializeAsString() : reflection->GetString(m, field));
    }
    return out;
  }
  const auto& unknown = reflection->GetUnknownFields(m);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& f = unknown.field(i);
    if (f.number() == number && f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      out.push_back(f.length_delimited());
  }
  return out;
}

std::string overload_of(const google::protobuf::Message& m, int number) {
  auto values = field_bytes(m, number);
  return values.empty() ? std::string() : std::move(values.back());
}

bool default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

/// A local function as the inliner uses it.
struct Function {
  const ::onnx::FunctionProto* proto = nullptr;
  std::string label;  // "domain::name" (with ":overload"), for messages
  std::map<std::string, ::onnx::AttributeProto, std::less<>> defaults;
};

std::string function_key(const std::string& domain, const std::string& name, const std::string& overload) {
  return domain + '\n' + name + '\n' + overload;
}

class Inliner {
 public:
  Inliner(const ::onnx::ModelProto& model, std::int64_t model_opset, const std::string& source) : source_(source) {
    for (const auto& f : model.functions()) {
      Function fn;
      fn.proto = &f;
      const std::string overload = overload_of(f, kFunctionOverloadField);
      fn.label = fmt::format("{}::{}{}", f.domain(), f.name(), overload.empty() ? "" : ":" + overload);
      for (const std::string& bytes : field_bytes(f, kFunctionAttributeProtoField)) {
        ::onnx::AttributeProto a;
        if (!a.ParseFromString(bytes))
          throw Error(kLoadOp, fmt::format("{}: local function '{}' has an attribute default that does not parse",
                                           source_, fn.label));
        fn.defaults.emplace(a.name(), std::move(a));
      }
      check_opset(fn, model_opset);
      if (!functions_.emplace(function_key(f.domain(), f.name(), overload), std::move(fn)).second)
        throw Error(kLoadOp, fmt::format("{} is not a valid ONNX model: it defines the local function '{}::{}' "
                                         "twice (with the same overload)",
                                         source_, f.domain(), f.name()));
    }
  }

  /// The local function `node` calls, or nullptr.
  const Function* find(const ::onnx::NodeProto& node) const {
    auto it = functions_.find(function_key(node.domain(), node.op_type(), overload_of(node, kNodeOverloadField)));
    return it == functions_.end() ? nullptr : &it->second;
  }

  /// How many nodes `f` becomes, its calls expanded (at most
  /// kMaxInlinedNodes + 1); an error where it calls itself.
  std::size_t size_of(const Function& f) {
    if (auto it = sizes_.find(&f); it != sizes_.end()) return it->second;
    if (std::find(active_.begin(), active_.end(), f.label) != active_.end()) {
      active_.push_back(f.label);
      throw Error(kLoadOp, fmt::format("{}: the local function '{}' calls itself ({}); ONNX functions cannot recurse",
                                       source_, f.label, fmt::join(active_, " -> ")));
    }
    active_.push_back(f.label);
    std::size_t n = f.proto->output_size();  // room for outputs passed through
    for (const auto& node : f.proto->node()) {
      const Function* inner = find(node);
      n = std::min(n + (inner ? size_of(*inner) : 1), kMaxInlinedNodes + 1);
    }
    active_.pop_back();
    sizes_.emplace(&f, n);
    return n;
  }

  /// Appends `call`'s expansion to `out`; `prefix` names its values. The
  /// function's size_of must have been asked first (it rules out recursion).
  void expand(const ::onnx::NodeProto& call, const Function& f, const std::string& prefix,
              google::protobuf::RepeatedPtrField<::onnx::NodeProto>& out) {
    ++expanded_;
    const auto& fp = *f.proto;
    if (call.input_size() > fp.input_size() || call.output_size() > fp.output_size())
      throw Error(kLoadOp, fmt::format("{}: node '{}' calls the local function '{}' with {} inputs and {} outputs; it "
                                       "takes at most {} and {}",
                                       source_, call.name(), f.label, call.input_size(), call.output_size(),
                                       fp.input_size(), fp.output_size()));
    // Formal names bind to the call's; a formal input the call leaves out
    // is an absent optional input ("") inside the body.
    std::unordered_map<std::string, std::string> inputs, outputs;
    for (int i = 0; i < fp.input_size(); ++i) inputs[fp.input(i)] = i < call.input_size() ? call.input(i) : "";
    for (int i = 0; i < fp.output_size(); ++i)
      outputs[fp.output(i)] =
          i < call.output_size() && !call.output(i).empty() ? call.output(i) : prefix + fp.output(i);
    auto read = [&](const std::string& v) {
      if (v.empty()) return v;
      if (auto it = inputs.find(v); it != inputs.end()) return it->second;
      if (auto it = outputs.find(v); it != outputs.end()) return it->second;
      return prefix + v;
    };
    auto write = [&](const std::string& v) {
      if (v.empty()) return v;
      if (auto it = outputs.find(v); it != outputs.end()) return it->second;
      return prefix + v;
    };
    std::map<std::string, const ::onnx::AttributeProto*, std::less<>> given;
    for (const auto& a : call.attribute()) given.emplace(a.name(), &a);

    std::set<std::string> computed;
    for (int k = 0; k < fp.node_size(); ++k) {
      const auto& b = fp.node(k);
      ::onnx::NodeProto n = b;  // keeps what import does not rewrite (domain, overload)
      n.clear_input();
      n.clear_output();
      n.clear_attribute();
      n.set_name(prefix + (b.name().empty() ? fmt::format("{}_{}", b.op_type(), k) : b.name()));
      for (const auto& v : b.input()) n.add_input(read(v));
      for (const auto& v : b.output()) {
        n.add_output(write(v));
        computed.insert(v);
      }
      for (const auto& a : b.attribute()) {
        if (a.ref_attr_name().empty()) {
          *n.add_attribute() = a;
          continue;
        }
        const ::onnx::AttributeProto* value = nullptr;
        if (auto it = given.find(a.ref_attr_name()); it != given.end()) {
          value = it->second;
        } else if (auto d = f.defaults.find(a.ref_attr_name()); d != f.defaults.end()) {
          value = &d->second;
        }
        if (!value) continue;  // neither given nor defaulted: the attribute is absent
        auto* copy = n.add_attribute();
        *copy = *value;
        copy->set_name(a.name());
      }
      if (const Function* inner = find(n)) {
        const std::string inner_prefix = n.name() + "/";
        expand(n, *inner, inner_prefix, out);
      } else {
        *out.Add() = std::move(n);
      }
    }
    // An output no body node computes passes one of the inputs through.
    for (int i = 0; i < call.output_size(); ++i) {
      if (call.output(i).empty() || computed.count(fp.output(i))) continue;
      auto it = inputs.find(fp.output(i));
      if (it == inputs.end() || it->second.empty())
        throw Error(kLoadOp, fmt::format("{} is not a valid ONNX model: the local function '{}' never computes its "
                                         "output '{}' (called by node '{}')",
                                         source_, f.label, fp.output(i), call.name()));
      auto* identity = out.Add();
      identity->set_op_type("Identity");
      identity->set_name(fmt::format("{}output_{}", prefix, i));
      identity->add_input(it->second);
      identity->add_output(call.output(i));
    }
  }

  std::size_t expanded() const { return expanded_; }

 private:
  /// ONNX lets a function import another version of the default operator
  /// set than the model's, as long as each operator its body uses has the
  /// same definition at both. Import runs a model at one opset, so it checks
  /// that (against the schemas ONNX's library knows).
  void check_opset(const Function& f, std::int64_t model_opset) const {
    std::int64_t opset = model_opset;
    for (const auto& o : f.proto->opset_import())
      if (default_domain(o.domain())) opset = o.version();
    if (opset == model_opset) return;
    for (const auto& n : f.proto->node()) {
      if (!default_domain(n.domain())) continue;
      const auto* mine = ::onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), "");
      const auto* model = ::onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(model_opset), "");
      if (mine && model && mine->SinceVersion() == model->SinceVersion()) continue;
      throw Error(kLoadOp, fmt::format("{}: the local function '{}' imports ONNX opset {} and the model opset {}, and "
                                       "its node '{}' ({}) is not known to be the same operator at both; burn runs a "
                                       "model at one opset (export it with a single opset version)",
                                       source_, f.label, opset, model_opset, n.name(), n.op_type()));
    }
  }

  std::string source_;
  std::unordered_map<std::string, Function> functions_;
  std::unordered_map<const Function*, std::size_t> sizes_;  // size_of's answers
  std::vector<std::string> active_;                         // size_of's calls in progress, outermost first
  std::size_t expanded_ = 0;
};

}  // namespace

std::size_t inline_local_functions(::onnx::ModelProto& model, std::int64_t model_opset, const std::string& source) {
  if (model.functions_size() == 0) return 0;
  Inliner inliner(model, model_opset, source);
  const auto& graph = model.graph();
  std::size_t total = 0;
  for (const auto& n : graph.node()) {
    const Function* f = inliner.find(n);
    total = std::min(total + (f ? inliner.size_of(*f) : 1), kMaxInlinedNodes + 1);
  }
  if (total > kMaxInlinedNodes)
    throw Error(kLoadOp, fmt::format("{}: its local functions, expanded, would give more than {} nodes (functions "
                                     "calling functions several times each); burn inlines at most that many",
                                     source, kMaxInlinedNodes));
  google::protobuf::RepeatedPtrField<::onnx::NodeProto> nodes;
  for (int k = 0; k < graph.node_size(); ++k) {
    const auto& n = graph.node(k);
    if (const Function* f = inliner.find(n)) {
      const std::string name = n.name().empty() ? fmt::format("{}_{}", n.op_type(), k) : n.name();
      inliner.expand(n, *f, name + "/", nodes);
    } else {
      *nodes.Add() = n;
    }
  }
  model.mutable_graph()->mutable_node()->Swap(&nodes);
  model.clear_functions();
  return inliner.expanded();
}

}  // namespace burn::onnx
