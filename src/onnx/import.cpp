// ONNX import: a model file becomes a program of steps (one per node, each an
// import_ops.cpp function) over named values, and its float initializers
// become parameters.
//
// Values known on the host (integer initializers, Constant nodes, Shape of a
// tensor, and whatever is computed only from those: the shape arithmetic
// exporters write around Reshape) are computed on the host and never sent
// to the model's device; the nodes that depend only on constants are
// computed once, at load.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

#include <burn/autodiff.hpp>
#include <burn/detail/ops.hpp>
#include <burn/error.hpp>
#include <burn/onnx.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/checker.h>

#include "onnx/external_data.hpp"
#include "onnx/import_functions.hpp"
#include "onnx/import_ops.hpp"
#include "onnx/import_optimize.hpp"
#include "onnx/model_checks.hpp"

namespace burn::onnx {

using detail::TensorRef;

AnyTensor AnyTensor::detach() const { return AnyTensor(burn::detail::detach(ref_)); }

struct Model::Program {
  ::onnx::ModelProto proto;
  std::string source;
  Device device;           // where load put the parameters
  std::int64_t opset = 0;  // of the default domain: operators read their version's definition
  std::vector<std::string> inputs, outputs;
  struct InputSpec {
    std::optional<DType> dtype;
    bool has_shape = false;
    std::vector<std::optional<std::size_t>> dims;  // nullopt: symbolic
  };
  std::vector<InputSpec> input_specs;
  std::vector<std::string> param_names;
  /// Host values: integer initializers, Constant nodes, nodes folded at load.
  std::unordered_map<std::string, TensorData> constants;
  struct Step {
    const ::onnx::NodeProto* node = nullptr;
    ImportFn fn = nullptr;  // nullptr for Shape
    std::unordered_map<std::string, const ::onnx::AttributeProto*> attrs;
    bool folded = false;  // computed at load: its outputs are constants
    /// Values this step reads last (graph outputs excepted): a run drops
    /// them after it, so their memory goes back to the device as early as
    /// possible and a fusing device (Device::cpu()) may fuse their
    /// producer with this step, as nothing else can observe them.
    std::vector<std::string> last_reads;
    /// The same names as indices into a run's table of values (plan_slots):
    /// the node's inputs and outputs (kNoValue for an absent optional one)
    /// and last_reads.
    std::vector<std::size_t> input_slots, output_slots, release_slots;
  };
  std::vector<Step> steps;
  /// A run keeps its values in a table indexed by slot, one per value name,
  /// so that it looks nothing up by name: constants, parameters (in
  /// param_names' order), graph inputs and outputs.
  static constexpr std::size_t kNoValue = static_cast<std::size_t>(-1);
  std::size_t n_slots = 0;
  std::vector<std::pair<std::size_t, const TensorData*>> constant_slots;
  std::vector<std::size_t> param_slots, input_slots, output_slots;
};

namespace {

/// The device host values are computed on: the reference CPU backend where
/// it is built, else the model's own device.
Device fold_device(const Device& model_device) {
#if BURN_HAS_NDARRAY
  (void)model_device;
  return Device::ndarray();
#elif BURN_HAS_FLEX
  (void)model_device;
  return Device::flex();
#else
  return model_device;
#endif
}

/// A value during a run: a tensor on the model's device, a host value, or both.
struct Value {
  std::optional<TensorRef> tensor;
  const TensorData* host = nullptr;
};

/// The outputs of a Shape node (start and end attributes of opset 15).
TensorData shape_value(const Shape& shape,
                       const std::unordered_map<std::string, const ::onnx::AttributeProto*>& attrs) {
  const auto r = static_cast<std::int64_t>(shape.rank());
  auto get = [&](const char* name, std::int64_t fallback) {
    auto it = attrs.find(name);
    std::int64_t v = it == attrs.end() ? fallback : it->second->i();
    if (v < 0) v += r;
    return std::clamp<std::int64_t>(v, 0, r);
  };
  const std::int64_t start = get("start", 0), end = get("end", r);
  std::vector<std::int64_t> dims;
  for (std::int64_t d = start; d < end; ++d)
    dims.push_back(static_cast<std::int64_t>(shape[static_cast<std::size_t>(d)]));
  return TensorData(dims);
}

/// A Constant node's value.
TensorData constant_value(const ::onnx::NodeProto& node, const std::string& source) {
  if (node.attribute_size() != 1)
    throw Error(kLoadOp,
                fmt::format("{}: Constant node '{}' must have exactly one value attribute", source, node.name()));
  const auto& a = node.attribute(0);
  const std::string& n = a.name();
  if (n == "value") return read_tensor(a.t(), kLoadOp);
  if (n == "value_float") return TensorData(std::vector<float>{a.f()}, Shape{});
  if (n == "value_int") return TensorData(std::vector<std::int64_t>{a.i()}, Shape{});
  if (n == "value_floats") return TensorData(std::vector<float>(a.floats().begin(), a.floats().end()));
  if (n == "value_ints") return TensorData(std::vector<std::int64_t>(a.ints().begin(), a.ints().end()));
  throw Error(kLoadOp,
              fmt::format("{}: Constant node '{}' has a {} value, which burn cannot hold", source, node.name(), n));
}

/// Runs one step: on the host when every input is a host value, else on the
/// inputs' device. Returns the node's outputs in order (absent optional ones empty).
std::vector<Value> run_step(const Model::Program& program, const Model::Program::Step& step, std::vector<Value>& inputs,
                            const Device& device, std::vector<std::unique_ptr<TensorData>>& host_store) {
  const auto& node = *step.node;
  std::vector<Value> out(static_cast<std::size_t>(node.output_size()));
  if (!step.fn) {  // Shape
    const Value& x = inputs.at(0);
    const Shape& shape = x.tensor ? (*x.tensor)->spec.shape : x.host->shape();
    host_store.push_back(std::make_unique<TensorData>(shape_value(shape, step.attrs)));
    out[0].host = host_store.back().get();
    return out;
  }
  bool all_host = node.input_size() > 0;
  for (const auto& v : inputs) all_host &= v.host != nullptr || (!v.tensor && !v.host);
  const Device target = all_host ? fold_device(device) : device;
  std::vector<std::optional<TensorRef>> refs;
  std::vector<const TensorData*> host;
  for (auto& v : inputs) {
    host.push_back(v.host);
    if (!v.tensor && v.host && !all_host) {
      // A host value the device needs: sent once per run.
      v.tensor =
          detail::copy_from_data(*v.host, TensorCreationOptions(target, v.host->dtype()), kind_for(v.host->dtype()));
    }
    if (all_host && v.host) {
      refs.emplace_back(
          detail::copy_from_data(*v.host, TensorCreationOptions(target, v.host->dtype()), kind_for(v.host->dtype())));
    } else {
      refs.push_back(v.tensor);
    }
  }
  std::vector<TensorRef> results;
  try {
    results = step.fn(NodeArgs(node, step.attrs, std::move(refs), std::move(host), target, program.opset));
  } catch (const Error& e) {
    if (e.op() == kRunOp) throw;
    throw Error(kRunOp, fmt::format("node '{}' ({}) in {}: {}", node.name(), node.op_type(), program.source, e.what()));
  }
  for (std::size_t i = 0; i < out.size() && i < results.size(); ++i) {
    if (all_host) {
      host_store.push_back(std::make_unique<TensorData>(detail::to_data(results[i])));
      out[i].host = host_store.back().get();
    } else {
      out[i].tensor = results[i];
    }
  }
  return out;
}

/// The name import's table knows a node's operator by: its type in the
/// default domain, "domain::type" in another (ONNX Runtime's com.microsoft).
std::string import_key(const ::onnx::NodeProto& n) {
  if (n.domain().empty() || n.domain() == "ai.onnx") return n.op_type();
  return n.domain() + "::" + n.op_type();
}

/// Import holds INT4 and UINT4 values a byte each (as I8 and U8), so a
/// QuantizeLinear whose zero point is 4-bit would saturate to 8 bits; its
/// output_dtype (which ONNX requires to match the zero point's type where
/// both are given) is set to the 4-bit type, which the operator reads.
void name_four_bit_outputs(::onnx::GraphProto& graph) {
  std::unordered_map<std::string, std::int32_t> four_bit;  // value -> its 4-bit element type
  for (const auto& init : graph.initializer())
    if (is_four_bit(init.data_type())) four_bit.emplace(init.name(), init.data_type());
  for (const auto& in : graph.input())
    if (in.type().has_tensor_type() && is_four_bit(in.type().tensor_type().elem_type()))
      four_bit.emplace(in.name(), in.type().tensor_type().elem_type());
  for (const auto& n : graph.node())
    if (n.op_type() == "Constant" && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && is_four_bit(a.t().data_type())) four_bit.emplace(n.output(0), a.t().data_type());
  if (four_bit.empty()) return;
  for (auto& n : *graph.mutable_node()) {
    if (import_key(n) != "QuantizeLinear" || n.input_size() < 3) continue;
    const auto it = four_bit.find(n.input(2));
    if (it == four_bit.end()) continue;
    const bool named = std::any_of(n.attribute().begin(), n.attribute().end(),
                                   [](const auto& a) { return a.name() == "output_dtype"; });
    if (!named) set_attribute(n, "output_dtype", std::int64_t{it->second});
  }
}

std::shared_ptr<Model::Program> prepare(::onnx::ModelProto proto, const std::string& source, const Device& device,
                                        std::vector<std::pair<std::string, TensorData>>& float_initializers) {
  auto program = std::make_shared<Model::Program>(
      Model::Program{std::move(proto), source, device, 0, {}, {}, {}, {}, {}, {}, 0, {}, {}, {}, {}});
  const auto& model = program->proto;
  const auto& graph = model.graph();

  // Every operator must be one import runs: list those that are not.
  std::set<std::string> missing;
  for (const auto& n : graph.node()) {
    const std::string key = import_key(n);
    if (key != "Constant" && key != "Shape" && !find_import(key))
      missing.insert(fmt::format("{} (node '{}')", key, n.name()));
  }
  if (!missing.empty()) {
    std::string list, supported;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    for (const auto& s : supported_operators()) supported += (supported.empty() ? "" : ", ") + s;
    throw Error(kLoadOp, fmt::format("{}: unsupported operators: {}. Supported: {}", source, list, supported));
  }

  // Initializers: float tensors are parameters; integers, bools and float
  // scalars (an exporter's literal constants) are host constants.
  std::set<std::string> initializer_names;
  for (auto& init : *program->proto.mutable_graph()->mutable_initializer()) {
    TensorData data = read_tensor(init, kLoadOp);
    initializer_names.insert(init.name());
    // The program keeps the graph, not a second copy of the weights: the
    // initializer keeps its name, type and dims only.
    ::onnx::TensorProto header;
    header.set_name(init.name());
    header.set_data_type(init.data_type());
    *header.mutable_dims() = init.dims();
    init.Swap(&header);
    if (is_float(data.dtype()) && data.shape().rank() > 0) {
      program->param_names.push_back(init.name());
      float_initializers.emplace_back(init.name(), std::move(data));
    } else {
      program->constants.emplace(init.name(), std::move(data));
    }
  }
  // Inputs (IR < 4 lists initializers among them: those are not inputs).
  for (const auto& in : graph.input()) {
    if (initializer_names.count(in.name())) continue;
    program->inputs.push_back(in.name());
    Model::Program::InputSpec spec;
    if (in.type().has_tensor_type()) {
      const auto& tt = in.type().tensor_type();
      spec.dtype = storage_dtype(tt.elem_type());
      if (tt.has_shape()) {
        spec.has_shape = true;
        for (const auto& d : tt.shape().dim())
          spec.dims.push_back(d.has_dim_value() ? std::optional<std::size_t>(static_cast<std::size_t>(d.dim_value()))
                                                : std::nullopt);
      }
    }
    program->input_specs.push_back(spec);
  }
  for (const auto& out : graph.output()) program->outputs.push_back(out.name());
  name_four_bit_outputs(*program->proto.mutable_graph());

  for (const auto& n : graph.node()) {
    Model::Program::Step step;
    step.node = &n;
    for (const auto& a : n.attribute()) step.attrs.emplace(a.name(), &a);
    const std::string key = import_key(n);
    if (key == "Constant") {
      program->constants.emplace(n.output(0), constant_value(n, source));
      step.folded = true;
    } else if (key != "Shape") {
      step.fn = find_import(key);
    }
    program->steps.push_back(std::move(step));
  }
  return program;
}

/// Computes, once, the steps whose inputs are all constants.
void fold_constants(Model::Program& program) {
  std::vector<std::unique_ptr<TensorData>> store;
  for (auto& step : program.steps) {
    if (step.folded || step.node->input_size() == 0) continue;
    std::vector<Value> inputs;
    bool constant = true;
    for (const auto& name : step.node->input()) {
      if (name.empty()) {
        inputs.emplace_back();
        continue;
      }
      auto it = program.constants.find(name);
      if (it == program.constants.end()) {
        constant = false;
        break;
      }
      inputs.push_back({std::nullopt, &it->second});
    }
    if (!constant) continue;
    auto outputs = run_step(program, step, inputs, program.device, store);
    for (std::size_t i = 0; i < outputs.size(); ++i)
      if (!step.node->output(static_cast<int>(i)).empty() && outputs[i].host)
        program.constants.emplace(step.node->output(static_cast<int>(i)), *outputs[i].host);
    step.folded = true;
  }
}

/// Fills each run step's last_reads.
void plan_releases(Model::Program& program) {
  std::unordered_map<std::string, std::size_t> last;  // value -> index of the last step reading it
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    if (program.steps[i].folded) continue;
    for (const auto& name : program.steps[i].node->input())
      if (!name.empty()) last[name] = i;
  }
  for (const auto& name : program.outputs) last.erase(name);
  for (const auto& [name, step] : last) program.steps[step].last_reads.push_back(name);
}

/// Numbers every value name the run reads or writes (Program's slots).
void plan_slots(Model::Program& program) {
  std::unordered_map<std::string, std::size_t> slots;
  auto slot = [&](const std::string& name) { return slots.try_emplace(name, slots.size()).first->second; };
  auto slot_or_none = [&](const std::string& name) { return name.empty() ? Model::Program::kNoValue : slot(name); };
  for (const auto& [name, data] : program.constants) program.constant_slots.emplace_back(slot(name), &data);
  for (const auto& name : program.param_names) program.param_slots.push_back(slot(name));
  for (const auto& name : program.inputs) program.input_slots.push_back(slot(name));
  for (auto& step : program.steps) {
    if (step.folded) continue;
    for (const auto& name : step.node->input()) step.input_slots.push_back(slot_or_none(name));
    for (const auto& name : step.node->output()) step.output_slots.push_back(slot_or_none(name));
    for (const auto& name : step.last_reads) step.release_slots.push_back(slot(name));
  }
  for (const auto& name : program.outputs) program.output_slots.push_back(slot(name));
  program.n_slots = slots.size();
}

/// The model's operator set of the default domain; an error outside the
/// range import reads.
std::int64_t default_opset(const ::onnx::ModelProto& model, const std::string& source) {
  const std::int64_t opset = declared_opset(model);
  if (opset > kNewestImportOpset || opset < kOldestImportOpset)
    throw Error(kLoadOp, fmt::format("{}: the model uses ONNX opset {}; this version reads opsets {} to {} (convert "
                                     "it with onnx.version_converter, or export it with opset_version={})",
                                     source, opset, kOldestImportOpset, kNewestImportOpset, kNewestImportOpset));
  return opset;
}

}  // namespace

Model::Model(std::shared_ptr<const Program> program, std::vector<module::Param<AnyTensor>> params)
    : program_(std::move(program)), params_(std::move(params)) {}

namespace {

/// An error unless `size` bytes can be a model: protobuf parses at most 2 GiB.
void check_model_size(std::uintmax_t size, const std::string& source) {
  if (size > static_cast<std::uintmax_t>(std::numeric_limits<int>::max()))
    throw Error(kLoadOp, fmt::format("{}: {} bytes is beyond protobuf's 2 GiB limit (save a model this large with "
                                     "its tensors in an external data file)",
                                     source, size));
}

/// An error unless the parse of `size` bytes gave a model with a graph.
void check_parsed(bool parsed, const ::onnx::ModelProto& proto, std::uintmax_t size, const std::string& source) {
  if (size == 0 || !parsed || !proto.has_graph())
    throw Error(kLoadOp, fmt::format("{} is not an ONNX model ({} bytes that do not parse as an ONNX ModelProto "
                                     "with a graph): the file is truncated, corrupt or of another format",
                                     source, size));
}

/// `bytes` as a ModelProto with a graph; an error for anything else.
::onnx::ModelProto parse_model(std::span<const std::byte> bytes, const std::string& source) {
  check_model_size(bytes.size(), source);
  ::onnx::ModelProto proto;
  const bool parsed = !bytes.empty() && proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  check_parsed(parsed, proto, bytes.size(), source);
  return proto;
}

/// The file at `path` as a ModelProto, parsed as it is read (no second copy
/// of its bytes in memory).
::onnx::ModelProto parse_model_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!f || ec) throw Error(kLoadOp, fmt::format("cannot open '{}': check the path", path));
  check_model_size(size, path);
  ::onnx::ModelProto proto;
  const bool parsed = proto.ParseFromIstream(&f);
  if (f.bad()) throw Error(kLoadOp, fmt::format("reading '{}' failed", path));
  check_parsed(parsed, proto, size, path);
  return proto;
}

/// A parsed model, its external data read from `dir`, checked and prepared.
Model load_model(::onnx::ModelProto proto, const std::optional<std::filesystem::path>& dir, const Device& device,
                 bool trainable, const std::string& source) {
  load_external_data(proto, dir, kLoadOp, source);
  const std::int64_t opset = default_opset(proto, source);
  if (checker_knows(proto, opset)) {
    try {
      ::onnx::checker::check_model(proto);
    } catch (const std::exception& e) {
      throw Error(kLoadOp, fmt::format("{} fails ONNX's model checker: {}", source, e.what()));
    }
  } else {
    check_graph_structure(proto, source);
  }
  // Calls of the model's own functions become their bodies; the graph they
  // leave must still define each value once, before its readers.
  if (inline_local_functions(proto, opset, source) > 0) check_graph_structure(proto, source);
  // A model that will not be trained runs as its inference form.
  if (!trainable) fold_batch_norms(proto);
  std::vector<std::pair<std::string, TensorData>> float_initializers;
  auto program = prepare(std::move(proto), source, device, float_initializers);
  program->opset = opset;
  fold_constants(*program);
  plan_releases(*program);
  plan_slots(*program);
  std::vector<module::Param<AnyTensor>> params;
  params.reserve(float_initializers.size());
  for (auto& [name, data] : float_initializers) {
    const DType dtype = data.dtype();
    params.emplace_back(
        AnyTensor(detail::from_data(std::move(data), TensorCreationOptions(device, dtype), TensorKind::Float)),
        trainable);
  }
  return Model(std::move(program), std::move(params));
}

}  // namespace

Model Model::load(const std::string& path, const Device& device, bool trainable) {
  return load_model(parse_model_file(path), std::filesystem::path(path).parent_path(), device, trainable, path);
}

Model Model::from_bytes(std::span<const std::byte> bytes, const Device& device, bool trainable,
                        const std::string& source) {
  return load_model(parse_model(bytes, source), std::nullopt, device, trainable, source);
}

const std::vector<std::string>& Model::input_names() const { return program_->inputs; }
const std::vector<std::string>& Model::output_names() const { return program_->outputs; }

void Model::visit_fields(module::Visitor& v, const std::string& prefix) {
  for (std::size_t i = 0; i < params_.size(); ++i)
    module::detail::visit_field(v, module::detail::join_path(prefix, program_->param_names[i]), params_[i]);
}

std::vector<TensorRef> Model::forward(const std::vector<TensorRef>& inputs) const {
  const Program& p = *program_;
  if (inputs.size() != p.inputs.size())
    throw Error(kRunOp, fmt::format("{} takes {} input(s) ({}), got {}", p.source, p.inputs.size(),
                                    fmt::join(p.inputs, ", "), inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& spec = p.input_specs[i];
    const auto& got = inputs[i]->spec;
    if (spec.dtype && *spec.dtype != got.dtype)
      throw Error(kRunOp, fmt::format("input '{}' must be {}, got {}", p.inputs[i], dtype_name(*spec.dtype),
                                      dtype_name(got.dtype)));
    bool ok = !spec.has_shape || spec.dims.size() == got.shape.rank();
    for (std::size_t d = 0; ok && d < spec.dims.size(); ++d) ok = !spec.dims[d] || *spec.dims[d] == got.shape[d];
    if (!ok) {
      std::vector<std::string> want;
      for (const auto& d : spec.dims) want.push_back(d ? std::to_string(*d) : "?");
      throw Error(kRunOp, fmt::format("input '{}' must have shape [{}], got {}", p.inputs[i], fmt::join(want, ", "),
                                      got.shape.to_string()));
    }
  }
  const Device& device = inputs.empty() ? p.device : inputs[0]->device;

  // The run's values by slot; `defined` tells a value some step (or the
  // model's constants, parameters and inputs) set from one never set or
  // already released.
  std::vector<Value> env(p.n_slots);
  std::vector<bool> defined(p.n_slots, false);
  auto set = [&](std::size_t slot, Value v) {
    env[slot] = std::move(v);
    defined[slot] = true;
  };
  for (const auto& [slot, data] : p.constant_slots) set(slot, {std::nullopt, data});
  for (std::size_t i = 0; i < params_.size(); ++i) set(p.param_slots[i], {params_[i].ref(), nullptr});
  for (std::size_t i = 0; i < inputs.size(); ++i) set(p.input_slots[i], {inputs[i], nullptr});

  std::vector<std::unique_ptr<TensorData>> host_store;
  for (const auto& step : p.steps) {
    if (step.folded) continue;
    std::vector<Value> in;
    in.reserve(step.input_slots.size());
    for (std::size_t k = 0; k < step.input_slots.size(); ++k) {
      const std::size_t slot = step.input_slots[k];
      if (slot == Program::kNoValue) {
        in.emplace_back();
        continue;
      }
      if (!defined[slot])
        throw Error(kRunOp, fmt::format("{}: node '{}' reads '{}', which nothing before it defines", p.source,
                                        step.node->name(), step.node->input(static_cast<int>(k))));
      in.push_back(env[slot]);
    }
    auto out = run_step(p, step, in, device, host_store);
    // Host values sent to the device stay sent for later readers.
    for (std::size_t k = 0; k < in.size(); ++k)
      if (in[k].tensor && step.input_slots[k] != Program::kNoValue) env[step.input_slots[k]].tensor = in[k].tensor;
    for (std::size_t i = 0; i < out.size() && i < step.output_slots.size(); ++i)
      if (step.output_slots[i] != Program::kNoValue) set(step.output_slots[i], std::move(out[i]));
    for (const std::size_t slot : step.release_slots) {
      env[slot] = {};
      defined[slot] = false;
    }
  }
  std::vector<TensorRef> results;
  for (std::size_t k = 0; k < p.outputs.size(); ++k) {
    const std::size_t slot = p.output_slots[k];
    const Value& v = env[slot];
    if (!defined[slot] || (!v.tensor && !v.host))
      throw Error(kRunOp, fmt::format("{}: the output '{}' is never computed", p.source, p.outputs[k]));
    if (v.tensor) {
      results.push_back(*v.tensor);
    } else {
      results.push_back(
          detail::copy_from_data(*v.host, TensorCreationOptions(device, v.host->dtype()), kind_for(v.host->dtype())));
    }
  }
  return results;
}

std::vector<TensorData> Model::run(const std::vector<TensorData>& inputs) const {
  const Device device = params_.empty() ? program_->device : params_[0].ref()->device;
  std::vector<TensorRef> refs;
  refs.reserve(inputs.size());
  for (const auto& d : inputs)
    refs.push_back(detail::copy_from_data(d, TensorCreationOptions(device, d.dtype()), kind_for(d.dtype())));
  const auto results = forward(refs);
  std::vector<TensorData> out;
  out.reserve(results.size());
  for (const auto& r : results) out.push_back(detail::to_data(r));
  return out;
}

}  // namespace burn::onnx
