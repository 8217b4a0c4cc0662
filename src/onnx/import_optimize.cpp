// Graph rewrites for models loaded for inference only (Model::load with
// trainable = false), made on the ModelProto before import reads it.
//
// BatchNormalization after a Conv folds into the Conv's weight and bias, as
// ONNX Runtime's and PyTorch's inference optimisers do: eval-mode batch norm
// is a per-channel affine map, so the convolution can produce its result
// directly. Without the fold every forward recomputed the scale and shift
// from four parameter tensors and made two more passes over each
// activation, and the Conv could not fuse with the ReLU after it.
#include "onnx/import_optimize.hpp"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/proto.hpp"

namespace burn::onnx {
namespace {

constexpr std::string_view kOptimizeOp = "onnx::Model::load";

struct GraphIndex {
  std::map<std::string, int> initializer;  // name -> index in graph.initializer
  std::map<std::string, int> producer;     // value name -> node index
  std::map<std::string, int> readers;      // value name -> node inputs and graph outputs reading it
};

GraphIndex index_graph(const ::onnx::GraphProto& g) {
  GraphIndex ix;
  for (int i = 0; i < g.initializer_size(); ++i) ix.initializer[g.initializer(i).name()] = i;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& in : g.node(i).input())
      if (!in.empty()) ++ix.readers[in];
    for (const auto& out : g.node(i).output())
      if (!out.empty()) ix.producer[out] = i;
  }
  for (const auto& out : g.output()) ++ix.readers[out.name()];
  return ix;
}

float float_attr(const ::onnx::NodeProto& node, const std::string& name, float fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.f();
  return fallback;
}

std::int64_t int_attr(const ::onnx::NodeProto& node, const std::string& name, std::int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

/// An f32 initializer read by exactly one node input (so rewriting it in
/// place changes nothing else), as values; nullopt otherwise.
std::optional<std::vector<float>> private_f32(const ::onnx::GraphProto& g, const GraphIndex& ix,
                                              const std::string& name) {
  const auto it = ix.initializer.find(name);
  const auto r = ix.readers.find(name);
  if (it == ix.initializer.end() || r == ix.readers.end() || r->second != 1) return std::nullopt;
  const ::onnx::TensorProto& t = g.initializer(it->second);
  if (t.data_type() != ::onnx::TensorProto::FLOAT) return std::nullopt;
  return read_tensor(t, kOptimizeOp).to_vec<float>();
}

/// Folds node `bn` into the Conv producing its input, when the shapes of
/// everything involved allow; returns whether it did.
bool fold_into_conv(::onnx::GraphProto& g, const GraphIndex& ix, int bn) {
  const ::onnx::NodeProto& norm = g.node(bn);
  if (norm.input_size() != 5 || norm.output_size() < 1 || norm.output(0).empty() ||
      int_attr(norm, "training_mode", 0) != 0)
    return false;
  for (int o = 1; o < norm.output_size(); ++o)
    if (!norm.output(o).empty()) return false;  // running statistics are wanted
  const auto p = ix.producer.find(norm.input(0));
  if (p == ix.producer.end() || g.node(p->second).op_type() != "Conv") return false;
  ::onnx::NodeProto& conv = *g.mutable_node(p->second);
  if (conv.output_size() != 1 || ix.readers.at(conv.output(0)) != 1) return false;  // only the batch norm reads it
  // A Conv without its weight is left for the operator to refuse when it runs
  // (newer models than ONNX's checker knows reach here unchecked).
  if (conv.input_size() < 2) return false;

  const auto w_it = ix.initializer.find(conv.input(1));
  if (w_it == ix.initializer.end()) return false;
  auto weight = private_f32(g, ix, conv.input(1));
  const bool has_bias = conv.input_size() > 2 && !conv.input(2).empty();
  std::optional<std::vector<float>> conv_bias;
  if (has_bias && !(conv_bias = private_f32(g, ix, conv.input(2)))) return false;
  const auto scale = private_f32(g, ix, norm.input(1));
  const auto shift = private_f32(g, ix, norm.input(2));
  const auto mean = private_f32(g, ix, norm.input(3));
  const auto var = private_f32(g, ix, norm.input(4));
  if (!weight || !scale || !shift || !mean || !var) return false;
  const ::onnx::TensorProto& w_proto = g.initializer(w_it->second);
  const std::size_t channels = scale->size();
  if (w_proto.dims_size() < 3 || static_cast<std::size_t>(w_proto.dims(0)) != channels || shift->size() != channels ||
      mean->size() != channels || var->size() != channels || (conv_bias && conv_bias->size() != channels) ||
      weight->size() % channels != 0)
    return false;

  // y = s * (conv(x) + b - mean) + shift, s = scale / sqrt(var + eps), in double.
  const double eps = float_attr(norm, "epsilon", 1e-5F);
  const std::size_t per_channel = weight->size() / channels;
  std::vector<float> bias(channels);
  for (std::size_t c = 0; c < channels; ++c) {
    const double s = static_cast<double>((*scale)[c]) / std::sqrt(static_cast<double>((*var)[c]) + eps);
    for (std::size_t k = 0; k < per_channel; ++k) {
      float& w = (*weight)[c * per_channel + k];
      w = static_cast<float>(static_cast<double>(w) * s);
    }
    const double b = conv_bias ? static_cast<double>((*conv_bias)[c]) : 0.0;
    bias[c] = static_cast<float>((b - static_cast<double>((*mean)[c])) * s + static_cast<double>((*shift)[c]));
  }
  std::vector<std::size_t> w_dims(w_proto.dims().begin(), w_proto.dims().end());
  const std::string w_name = conv.input(1);
  fill_tensor(*g.mutable_initializer(w_it->second), TensorData(*weight, Shape(w_dims)), w_name);
  // The folded bias takes the batch norm's bias initializer (read by the
  // batch norm alone), which keeps its name unique in the graph.
  const std::string b_name = norm.input(2);
  fill_tensor(*g.mutable_initializer(ix.initializer.at(b_name)), TensorData(bias, Shape{channels}), b_name);
  if (conv.input_size() > 2) conv.set_input(2, b_name);
  else conv.add_input(b_name);
  conv.set_output(0, norm.output(0));
  return true;
}

/// Drops initializers no node input or graph output reads any more (and
/// their entries among the graph inputs, where IR < 4 lists them).
void drop_unread_initializers(::onnx::GraphProto& g) {
  std::set<std::string> read, dropped;
  for (const auto& n : g.node())
    for (const auto& in : n.input()) read.insert(in);
  for (const auto& out : g.output()) read.insert(out.name());
  auto* inits = g.mutable_initializer();
  for (int i = inits->size(); i-- > 0;)
    if (!read.count(inits->Get(i).name())) {
      dropped.insert(inits->Get(i).name());
      inits->DeleteSubrange(i, 1);
    }
  auto* inputs = g.mutable_input();
  for (int i = inputs->size(); i-- > 0;)
    if (dropped.count(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
}

}  // namespace

std::size_t fold_batch_norms(::onnx::ModelProto& model) {
  ::onnx::GraphProto& g = *model.mutable_graph();
  const GraphIndex ix = index_graph(g);
  std::vector<bool> folded(static_cast<std::size_t>(g.node_size()), false);
  std::size_t count = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (n.op_type() != "BatchNormalization" || !(n.domain().empty() || n.domain() == "ai.onnx")) continue;
    // Each fold touches its own conv and initializers only (each is read
    // once), so one index serves every fold.
    if (fold_into_conv(g, ix, i)) {
      folded[static_cast<std::size_t>(i)] = true;
      ++count;
    }
  }
  if (count == 0) return 0;
  ::google::protobuf::RepeatedPtrField<::onnx::NodeProto> kept;
  for (int i = 0; i < g.node_size(); ++i)
    if (!folded[static_cast<std::size_t>(i)]) kept.Add()->Swap(g.mutable_node(i));
  g.mutable_node()->Swap(&kept);
  drop_unread_initializers(g);
  return count;
}

}  // namespace burn::onnx
