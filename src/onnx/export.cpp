// ONNX export: record a function on Device::capture(), then write the ops
// its outputs depend on as an ONNX graph (opset kOpsetVersion), parameters
// as initializers. The model is checked with ONNX's own checker and strict
// shape inference before it is written, so a file export produces is one
// every ONNX runtime accepts.
//
// Dynamic axes (a batch, a sequence length): the function is traced twice,
// at the examples' sizes and at others, each symbol moved by its own step.
// The two recordings must be the same ops wired the same way; the dims that
// differ between them are the dynamic ones (the inputs' symbolic dims and
// whatever follows from them). Ops whose attributes hold such dims (reshape,
// expand, slice, fills) are written in ONNX's size-independent forms (0 / -1
// in a Reshape shape, 1 in an Expand shape, an omitted Slice axis) or read
// the symbol's size at run time (Shape, Gather); where neither works the
// export says which op depends on the sizes.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <type_traits>
#include <unordered_set>

#include <burn/detail/ops.hpp>
#include <burn/error.hpp>
#include <burn/onnx.hpp>
#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "onnx/export_writer.hpp"
#include "onnx/external_data.hpp"
#include "record/safetensors_internal.hpp"

namespace burn::onnx {

using capture::CapturedValue;
using capture::OpNode;
using capture::ValuePtr;

// ---- GraphWriter ------------------------------------------------------------------------

std::string GraphWriter::fresh(std::string_view hint) {
  std::size_t& n = counters_[std::string(hint)];
  return fmt::format("{}_{}", hint, n++);
}

const ExportedValue& GraphWriter::value(const CapturedValue* v) const {
  auto it = values_.find(v);
  if (it == values_.end()) throw Error(kExportOp, "internal error: a recorded value was read before it was named");
  return it->second;
}

::onnx::NodeProto& GraphWriter::node(std::string_view op_type, std::vector<std::string> inputs,
                                     std::vector<std::string> outputs) {
  auto* n = graph_.add_node();
  n->set_op_type(std::string(op_type));
  n->set_name(fmt::format("{}_{}", op_type, nodes_++));
  for (auto& i : inputs) n->add_input(std::move(i));
  for (auto& o : outputs) n->add_output(std::move(o));
  return *n;
}

std::string GraphWriter::node1(std::string_view op_type, std::vector<std::string> inputs, ::onnx::NodeProto** out) {
  std::string name = fresh(std::string(op_type));
  auto& n = node(op_type, std::move(inputs), {name});
  if (out) *out = &n;
  return name;
}

std::string GraphWriter::initializer_named(const TensorData& data, const std::string& name) {
  fill_tensor(*graph_.add_initializer(), data, name);
  return name;
}

std::string GraphWriter::initializer(const TensorData& data, std::string_view hint) {
  return initializer_named(data, fresh(hint));
}

std::string GraphWriter::ints(const std::vector<std::int64_t>& values, std::string_view hint) {
  return initializer(TensorData(values), hint);
}

std::string GraphWriter::scalar(Scalar value, DType dtype) {
  TensorData data = value.kind() == Scalar::Kind::Float
                        ? TensorData(std::vector<double>{value.as_double()}, Shape{})
                        : TensorData(std::vector<std::int64_t>{value.as_int()}, Shape{});
  return initializer(data.convert(dtype), "scalar");
}

const GraphWriter::Symbol* GraphWriter::symbol_of(std::size_t a, std::size_t b) const {
  for (const auto& s : symbols_)
    if (s.a == a && s.b == b) return &s;
  return nullptr;
}

const std::string& GraphWriter::symbol_value(const Symbol& symbol) {
  auto& s = const_cast<Symbol&>(symbol);  // one of symbols_: the cache is ours to fill
  if (s.value.empty()) {
    const std::string shape = node1("Shape", {s.input});
    auto& gather = node("Gather", {shape, ints({static_cast<std::int64_t>(s.dim)}, "axis")}, {fresh(s.name)});
    set_attribute(gather, "axis", std::int64_t{0});
    s.value = gather.output(0);
  }
  return s.value;
}

namespace {

// ---- recording ----------------------------------------------------------------------------

/// One recording of the function: its inputs and outputs on the capture
/// device, and every op the outputs depend on, in recording order.
struct Trace {
  std::vector<ValuePtr> inputs;
  std::vector<ValuePtr> outputs;
  std::vector<std::shared_ptr<const OpNode>> nodes;
};

Trace record(const GraphFunction& fn, std::span<const TensorData> examples) {
  const Device device = Device::capture();
  std::vector<detail::TensorRef> in;
  Trace trace;
  for (const auto& ex : examples) {
    in.push_back(detail::from_data(ex, TensorCreationOptions(device, ex.dtype()), kind_for(ex.dtype())));
    trace.inputs.push_back(capture::captured_value(in.back()->primitive, "onnx::export"));
  }
  const std::vector<detail::TensorRef> out = fn(in);
  if (out.empty()) throw Error(kExportOp, "the function returned no tensors: there is nothing to export");
  for (const auto& t : out) {
    if (!t || t->device.type() != DeviceType::Capture)
      throw Error(kExportOp,
                  "the function returned a tensor that is not on the capture device: compute every output from "
                  "the inputs it is given (and the model's parameters), not from tensors made on another device");
    trace.outputs.push_back(capture::captured_value(t->primitive, "onnx::export"));
  }
  // Every op the outputs depend on, once each, in recording order (which is
  // topological: an op is recorded after the ops that made its inputs).
  std::unordered_set<const OpNode*> seen;
  std::vector<const CapturedValue*> stack;
  for (const auto& o : trace.outputs) stack.push_back(o.get());
  while (!stack.empty()) {
    const CapturedValue* v = stack.back();
    stack.pop_back();
    const auto& node = v->node();
    if (!node || !seen.insert(node.get()).second) continue;
    trace.nodes.push_back(node);
    for (const auto& i : node->inputs) stack.push_back(i.get());
  }
  std::sort(trace.nodes.begin(), trace.nodes.end(),
            [](const auto& a, const auto& b) { return a->sequence < b->sequence; });
  return trace;
}

bool same_scalar(const std::optional<Scalar>& a, const std::optional<Scalar>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->kind() == b->kind() && a->as_int() == b->as_int() &&
         (a->as_double() == b->as_double() || (std::isnan(a->as_double()) && std::isnan(b->as_double())));
}

/// Whether two recordings of one op (at two sizes of the dynamic axes) agree in every
/// attribute that is not a shape: the same kind of op with the same scalars,
/// dims and geometry. Shapes (reshape targets, slice ranges, fills) are
/// compared by the writer, which knows which of their dims may be dynamic.
bool same_attributes(const ir::Op& a, const ir::Op& b) {
  return std::visit(
      [&b](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, ir::Unary>) return x.op == y.op;
        if constexpr (std::is_same_v<T, ir::Binary>) return x.op == y.op && same_scalar(x.scalar, y.scalar);
        if constexpr (std::is_same_v<T, ir::Clamp>) return same_scalar(x.min, y.min) && same_scalar(x.max, y.max);
        if constexpr (std::is_same_v<T, ir::Cast>) return x.dtype == y.dtype;
        if constexpr (std::is_same_v<T, ir::Reduce>)
          return x.op == y.op && x.dim == y.dim && x.index_dtype == y.index_dtype;
        if constexpr (std::is_same_v<T, ir::Cumulative>) return x.op == y.op && x.dim == y.dim;
        if constexpr (std::is_same_v<T, ir::Sort>)
          return x.dim == y.dim && x.descending == y.descending && x.index_dtype == y.index_dtype;
        if constexpr (std::is_same_v<T, ir::Permute>) return x.axes == y.axes;
        if constexpr (std::is_same_v<T, ir::Flip>) return x.axes == y.axes;
        if constexpr (std::is_same_v<T, ir::Cat>) return x.dim == y.dim;
        if constexpr (std::is_same_v<T, ir::Unfold>) return x.dim == y.dim && x.size == y.size && x.step == y.step;
        if constexpr (std::is_same_v<T, ir::Gather> || std::is_same_v<T, ir::Select>) return x.dim == y.dim;
        if constexpr (std::is_same_v<T, ir::Scatter> || std::is_same_v<T, ir::SelectAssign>)
          return x.dim == y.dim && x.reduce == y.reduce;
        if constexpr (std::is_same_v<T, ir::MaskFill>) return same_scalar(x.value, y.value);
        if constexpr (std::is_same_v<T, ir::Full>) return same_scalar(x.value, y.value) && x.dtype == y.dtype;
        if constexpr (std::is_same_v<T, ir::Conv>)
          return x.stride == y.stride && x.padding == y.padding && x.dilation == y.dilation && x.groups == y.groups &&
                 x.has_bias == y.has_bias;
        if constexpr (std::is_same_v<T, ir::ConvTranspose>)
          return x.stride == y.stride && x.padding == y.padding && x.padding_out == y.padding_out &&
                 x.dilation == y.dilation && x.groups == y.groups && x.has_bias == y.has_bias;
        if constexpr (std::is_same_v<T, ir::MaxPool>)
          return x.kernel == y.kernel && x.stride == y.stride && x.padding == y.padding && x.dilation == y.dilation &&
                 x.ceil_mode == y.ceil_mode && x.with_indices == y.with_indices;
        if constexpr (std::is_same_v<T, ir::AvgPool>)
          return x.kernel == y.kernel && x.stride == y.stride && x.padding == y.padding &&
                 x.count_include_pad == y.count_include_pad && x.ceil_mode == y.ceil_mode;
        if constexpr (std::is_same_v<T, ir::AdaptiveAvgPool>) return x.output_size == y.output_size;
        if constexpr (std::is_same_v<T, ir::Interpolate>)
          return x.output_size == y.output_size && x.mode == y.mode && x.align_corners == y.align_corners;
        if constexpr (std::is_same_v<T, ir::LayerNorm>) return x.epsilon == y.epsilon;
        if constexpr (std::is_same_v<T, ir::Softmax>) return x.log == y.log;
        if constexpr (std::is_same_v<T, ir::Gelu>) return x.tanh == y.tanh;
        return true;  // matmul, mask_where; reshape, expand, slice, arange, random: see the writer
      },
      a);
}

/// Checks that trace `b` (the function traced at other sizes of its dynamic axes) is the
/// same graph as trace `a`: the same ops in the same order, wired alike, every
/// value of the same rank and dtype, and constants that do not change shape.
void check_same_graph(const Trace& a, const Trace& b) {
  const std::string mismatch =
      "the function records different operations at two sizes of its dynamic axes (it branches on a size), so "
      "ONNX cannot express it with those axes dynamic: export with fixed sizes";
  if (a.nodes.size() != b.nodes.size() || a.outputs.size() != b.outputs.size()) throw Error(kExportOp, mismatch);
  auto same_kind = [](const ir::TensorSpec& x, const ir::TensorSpec& y, std::string_view what) {
    if (x.shape.rank() != y.shape.rank() || x.dtype != y.dtype)
      throw Error(kExportOp, fmt::format("{} changes rank or dtype with the sizes of the dynamic axes ({} {} and "
                                         "{} {}): export with fixed sizes",
                                         what, dtype_name(x.dtype), x.shape.to_string(), dtype_name(y.dtype),
                                         y.shape.to_string()));
  };
  std::unordered_map<const CapturedValue*, const CapturedValue*> input_twin;
  for (std::size_t i = 0; i < a.inputs.size(); ++i) input_twin[a.inputs[i].get()] = b.inputs[i].get();
  std::unordered_map<const OpNode*, const OpNode*> node_twin;
  for (std::size_t n = 0; n < a.nodes.size(); ++n) {
    const OpNode& x = *a.nodes[n];
    const OpNode& y = *b.nodes[n];
    if (x.op.index() != y.op.index() || x.inputs.size() != y.inputs.size() || x.outputs.size() != y.outputs.size())
      throw Error(kExportOp, mismatch);
    if (!same_attributes(x.op, y.op))
      throw Error(kExportOp, fmt::format("{} records different attributes at two sizes of the dynamic axes (a "
                                         "scalar or a dim computed from a size?), so ONNX cannot express it with "
                                         "those axes dynamic: export with fixed sizes",
                                         ir::op_name(x.op)));
    node_twin[&x] = &y;
    for (std::size_t o = 0; o < x.outputs.size(); ++o)
      same_kind(x.outputs[o], y.outputs[o], fmt::format("the output of {}", ir::op_name(x.op)));
    for (std::size_t i = 0; i < x.inputs.size(); ++i) {
      const CapturedValue* xi = x.inputs[i].get();
      const CapturedValue* yi = y.inputs[i].get();
      bool wired_alike = false;
      if (auto t = input_twin.find(xi); t != input_twin.end()) {
        wired_alike = t->second == yi;
      } else if (xi->is_constant()) {
        // A constant of the function itself (a parameter, a literal tensor):
        // the same object in both traces, or one made afresh with the same shape.
        if (!yi->is_constant() || (xi != yi && xi->spec() != yi->spec()))
          throw Error(kExportOp, fmt::format("a constant tensor read by {} has a shape that depends on a dynamic "
                                             "axis ({}): compute it from the input (for example with expand) or "
                                             "export with fixed sizes",
                                             ir::op_name(x.op), xi->spec().shape.to_string()));
        wired_alike = true;
      } else if (yi->node()) {
        auto t = node_twin.find(xi->node().get());
        wired_alike = t != node_twin.end() && t->second == yi->node().get() && xi->output() == yi->output();
      }
      if (!wired_alike) throw Error(kExportOp, mismatch);
    }
  }
}

std::vector<bool> dims_differing(const ir::TensorSpec& x, const ir::TensorSpec& y) {
  std::vector<bool> d(x.shape.rank());
  for (std::size_t i = 0; i < d.size() && i < y.shape.rank(); ++i) d[i] = x.shape[i] != y.shape[i];
  return d;
}

void set_value_info(::onnx::ValueInfoProto& info, const std::string& name, const ir::TensorSpec& spec,
                    const std::vector<bool>& dynamic, const ir::TensorSpec* twin, const GraphWriter& w) {
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx_type(spec.dtype));
  auto* shape = tensor->mutable_shape();
  for (std::size_t i = 0; i < spec.shape.rank(); ++i) {
    auto* dim = shape->add_dim();
    if (i < dynamic.size() && dynamic[i]) {
      // A symbol's name where the dim is that symbol; a dim derived from
      // symbols (batch * tokens after a reshape) stays unnamed.
      if (twin && i < twin->shape.rank())
        if (const auto* s = w.symbol_of(spec.shape[i], twin->shape[i])) dim->set_dim_param(s->name);
    } else {
      dim->set_dim_value(static_cast<std::int64_t>(spec.shape[i]));
    }
  }
}

/// Drops the nodes nothing reads (a relu's comparison once the relu is one
/// node) and the initializers only they read.
void prune_unused(::onnx::GraphProto& graph) {
  std::unordered_set<std::string> needed;
  for (const auto& o : graph.output()) needed.insert(o.name());
  std::vector<bool> keep(static_cast<std::size_t>(graph.node_size()), false);
  for (int i = graph.node_size() - 1; i >= 0; --i) {
    const auto& n = graph.node(i);
    bool used = false;
    for (const auto& o : n.output()) used |= needed.count(o) > 0;
    if (!used) continue;
    keep[static_cast<std::size_t>(i)] = true;
    for (const auto& in : n.input()) needed.insert(in);
  }
  ::onnx::GraphProto kept;
  for (int i = 0; i < graph.node_size(); ++i)
    if (keep[static_cast<std::size_t>(i)]) *kept.add_node() = std::move(*graph.mutable_node(i));
  graph.mutable_node()->Swap(kept.mutable_node());
  auto* inits = graph.mutable_initializer();
  inits->erase(std::remove_if(inits->begin(), inits->end(),
                              [&](const ::onnx::TensorProto& t) { return needed.count(t.name()) == 0; }),
               inits->end());
}

std::string name_or(const std::vector<std::string>& names, std::size_t i, std::string_view prefix) {
  if (i < names.size() && !names[i].empty()) return names[i];
  return fmt::format("{}_{}", prefix, i);
}

}  // namespace

// ---- the export ------------------------------------------------------------------------------

void export_graph(const GraphFunction& fn, std::span<const TensorData> examples,
                  std::span<const std::pair<std::string, detail::TensorRef>> params, const std::string& path,
                  const ExportOptions& options) {
  if (examples.empty()) throw Error(kExportOp, "no example inputs: give one example tensor per model input");

  // The dynamic axes, each symbol with its size in the examples.
  std::vector<ExportOptions::DynamicAxis> axes = options.dynamic_axes;
  if (options.dynamic_batch)
    for (std::size_t i = 0; i < examples.size(); ++i) axes.push_back({i, 0, options.batch_dim_name});
  struct SymbolSizes {
    std::string name;
    std::size_t input, dim, a, b;
  };
  std::vector<SymbolSizes> symbols;
  for (const auto& axis : axes) {
    if (axis.input >= examples.size() || axis.dim >= examples[axis.input].shape().rank())
      throw Error(kExportOp, fmt::format("dynamic axis '{}' names dim {} of input {}, which does not exist ({} "
                                         "inputs{})",
                                         axis.name, axis.dim, axis.input, examples.size(),
                                         axis.input < examples.size()
                                             ? ", that one of shape " + examples[axis.input].shape().to_string()
                                             : std::string()));
    if (axis.name.empty()) throw Error(kExportOp, "a dynamic axis needs a name");
    const std::size_t size = examples[axis.input].shape()[axis.dim];
    auto same = std::find_if(symbols.begin(), symbols.end(), [&](const auto& s) { return s.name == axis.name; });
    if (same == symbols.end()) {
      // Each symbol moves by its own step in the second trace, so a dim's two
      // sizes say which symbol it is.
      symbols.push_back({axis.name, axis.input, axis.dim, size, size + 3 + 2 * symbols.size()});
    } else if (same->a != size) {
      throw Error(kExportOp, fmt::format("the dims named '{}' differ in the examples ({} and {}): dims that share a "
                                         "name must have one size",
                                         axis.name, same->a, size));
    }
  }

  const Trace trace = record(fn, examples);

  // The second trace, at other sizes of the dynamic axes.
  std::optional<Trace> other;
  if (!symbols.empty()) {
    std::vector<TensorData> resized;
    for (std::size_t i = 0; i < examples.size(); ++i) {
      Shape s = examples[i].shape();
      for (const auto& axis : axes)
        if (axis.input == i)
          for (const auto& sym : symbols)
            if (sym.name == axis.name) s.dims()[axis.dim] = sym.b;
      resized.push_back(TensorData::zeros(s, examples[i].dtype()));
    }
    other = record(fn, resized);
  }

  ::onnx::ModelProto model;
  model.set_ir_version(8);  // the IR version opset 17 came with
  model.set_producer_name("burn-cpp");
  model.set_producer_version(BURN_VERSION);
  if (!options.doc_string.empty()) model.set_doc_string(options.doc_string);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpsetVersion);
  auto& graph = *model.mutable_graph();
  graph.set_name(options.graph_name);
  GraphWriter w(graph);

  // Which dims of each value are dynamic: from the twin of each value.
  std::unordered_map<const OpNode*, const OpNode*> node_twin;
  if (other) {
    check_same_graph(trace, *other);
    for (std::size_t n = 0; n < trace.nodes.size(); ++n) node_twin[trace.nodes[n].get()] = other->nodes[n].get();
  }
  auto dynamic_dims_of_output = [&](const OpNode& node, std::size_t o) -> std::vector<bool> {
    if (!other) return {};
    return dims_differing(node.outputs[o], node_twin.at(&node)->outputs[o]);
  };

  // Inputs.
  std::unordered_set<std::string> used_names;
  for (std::size_t i = 0; i < trace.inputs.size(); ++i) {
    const std::string name = name_or(options.input_names, i, "input");
    if (!used_names.insert(name).second) throw Error(kExportOp, fmt::format("two inputs are named '{}'", name));
    std::vector<bool> dynamic;
    if (other) dynamic = dims_differing(trace.inputs[i]->spec(), other->inputs[i]->spec());
    w.set_value(trace.inputs[i].get(), {name, dynamic});
    for (const auto& sym : symbols)
      if (sym.input == i) w.add_symbol({sym.name, name, sym.dim, sym.a, sym.b, {}});
  }
  for (std::size_t i = 0; i < trace.inputs.size(); ++i) {
    const ir::TensorSpec* twin = other ? &other->inputs[i]->spec() : nullptr;
    set_value_info(*graph.add_input(), w.value(trace.inputs[i].get()).name, trace.inputs[i]->spec(),
                   w.value(trace.inputs[i].get()).dynamic, twin, w);
  }

  // Parameters, by the names given; other constants as they are met.
  std::unordered_map<const CapturedValue*, std::string> param_names;
  for (const auto& [name, ref] : params) {
    if (!ref || ref->device.type() != DeviceType::Capture) continue;
    param_names.emplace(capture::captured_value(ref->primitive, "onnx::export").get(), name);
  }
  auto name_constant = [&](const CapturedValue* v) {
    if (w.has_value(v)) return;  // an input, or a constant read before
    auto p = param_names.find(v);
    std::string name;
    if (p != param_names.end() && used_names.insert(p->second).second) {
      name = w.initializer_named(v->data(), p->second);
    } else {
      name = w.initializer(v->data(), "const");
      used_names.insert(name);
    }
    w.set_value(v, {name, {}});
  };

  // Which op outputs are read (an unused output, such as max pooling's
  // indices, need not be expressible).
  std::unordered_map<const OpNode*, std::vector<bool>> used_outputs;
  for (const auto& n : trace.nodes)
    for (const auto& in : n->inputs)
      if (in->node()) {
        auto& u = used_outputs[in->node().get()];
        u.resize(in->node()->outputs.size());
        u[in->output()] = true;
      }
  for (const auto& o : trace.outputs)
    if (o->node()) {
      auto& u = used_outputs[o->node().get()];
      u.resize(o->node()->outputs.size());
      u[o->output()] = true;
    }

  // The recorded values are found through their readers: map (node, slot)
  // to the value objects the readers hold.
  std::unordered_map<const OpNode*, std::vector<const CapturedValue*>> outputs_of;
  auto remember = [&](const CapturedValue* v) {
    if (!v->node()) return;
    auto& slots = outputs_of[v->node().get()];
    slots.resize(v->node()->outputs.size(), nullptr);
    if (!slots[v->output()]) slots[v->output()] = v;
  };
  for (const auto& n : trace.nodes)
    for (const auto& in : n->inputs) remember(in.get());
  for (const auto& o : trace.outputs) remember(o.get());

  for (const auto& node : trace.nodes) {
    OpContext ctx{*node, other ? node_twin.at(node.get()) : nullptr, {}, {}, {}, {}, {}};
    for (const auto& in : node->inputs) {
      if (in->is_constant()) name_constant(in.get());
      const auto& exported = w.value(in.get());
      ctx.inputs.push_back(exported.name);
      ctx.input_dynamic.push_back(exported.dynamic);
    }
    const auto& used = used_outputs[node.get()];
    const auto& slots = outputs_of[node.get()];
    for (std::size_t o = 0; o < node->outputs.size(); ++o) {
      std::string name = w.fresh(std::string(ir::op_name(node->op)));
      ctx.outputs.push_back(name);
      ctx.output_dynamic.push_back(dynamic_dims_of_output(*node, o));
      ctx.output_used.push_back(o < used.size() && used[o]);
      if (o < slots.size() && slots[o]) w.set_value(slots[o], {name, ctx.output_dynamic.back()});
    }
    // A value a composite marked (softmax, layer norm, ...) is written as
    // that one operator over the composite's inputs; the primitives that
    // computed it are then unread and pruned.
    const CapturedValue* result = node->outputs.size() == 1 && !slots.empty() ? slots[0] : nullptr;
    if (result && result->composite()) {
      const auto& mark = *result->composite();
      std::vector<std::string> names;
      for (const auto& in : mark.inputs) {
        if (in->is_constant()) name_constant(in.get());
        if (!w.has_value(in.get())) break;
        names.push_back(w.value(in.get()).name);
      }
      if (names.size() == mark.inputs.size()) {
        write_composite(w, ctx, mark, names);
        continue;
      }
    }
    write_op(w, ctx);
  }

  // Outputs: an Identity gives each its own name.
  for (std::size_t i = 0; i < trace.outputs.size(); ++i) {
    const CapturedValue* v = trace.outputs[i].get();
    if (v->is_constant()) name_constant(v);
    const ExportedValue& exported = w.value(v);
    const std::string name = name_or(options.output_names, i, "output");
    if (!used_names.insert(name).second)
      throw Error(kExportOp, fmt::format("the output name '{}' is already an input's, a parameter's or another "
                                         "output's: choose another in ExportOptions::output_names",
                                         name));
    w.node("Identity", {exported.name}, {name});
    const ir::TensorSpec* twin = other ? &other->outputs[i]->spec() : nullptr;
    set_value_info(*graph.add_output(), name, v->spec(), exported.dynamic, twin, w);
  }

  prune_unused(graph);

  // ONNX's checker and strict shape inference: the file must be valid for
  // every runtime, and the shapes ONNX infers must be ours.
  try {
    ::onnx::checker::check_model(model);
    ::onnx::ModelProto inferred = model;
    ::onnx::shape_inference::InferShapes(inferred, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(/*check_type=*/true, /*strict=*/1));
  } catch (const std::exception& e) {
    throw Error(kExportOp, fmt::format("internal error: the exported graph fails ONNX's checks ({}); please "
                                       "report this with the model",
                                       e.what()));
  }

  // Parameters go to an external data file when asked, and when the model
  // would pass protobuf's 2 GiB message limit (which no reader accepts).
  constexpr std::size_t kExternalThreshold = 1024;
  const std::filesystem::path model_path(path);
  if (options.external_data || model.ByteSizeLong() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    const std::string location = model_path.filename().string() + ".data";
    const auto data = move_to_external_data(model, location, kExternalThreshold);
    // The data file first: a model file never names data that is not there.
    record::detail::write_file_atomically(model_path.parent_path() / location, data, kExportOp);
  }
  std::string bytes;
  if (model.ByteSizeLong() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !model.SerializeToString(&bytes))
    throw Error(kExportOp, fmt::format("the model could not be serialised: its graph alone passes protobuf's 2 GiB "
                                       "limit ({} bytes without the parameters)",
                                       model.ByteSizeLong()));
  record::detail::write_file_atomically(path, std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()),
                                        kExportOp);
}

}  // namespace burn::onnx
