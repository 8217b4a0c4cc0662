// Models the ONNX tests export and import: an MLP, burn-train's CNN (smaller
// channels), and an attention block with layer norm, gelu and softmax.
#pragma once

#include <burn/activation.hpp>
#include <burn/burn.hpp>
#include <burn/nn/batch_norm.hpp>
#include <burn/nn/conv2d.hpp>
#include <burn/nn/dropout.hpp>
#include <burn/nn/layer_norm.hpp>
#include <burn/nn/linear.hpp>
#include <burn/nn/lstm.hpp>
#include <burn/nn/pool.hpp>
#include <burn/nn/transformer.hpp>
#include <onnx/onnx_pb.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace burn::onnx_test {

struct Mlp {
  nn::Linear fc1, fc2;
  BURN_MODULE(fc1, fc2)
  Tensor<2> forward(const Tensor<2>& x) const { return fc2.forward(activation::relu(fc1.forward(x))); }
};
inline Mlp make_mlp(const Device& device) {
  return {nn::LinearConfig{6, 16}.init(device), nn::LinearConfig{16, 3}.init(device)};
}

struct Cnn {
  nn::Conv2d conv1;
  nn::BatchNorm bn1;
  nn::Conv2d conv2;
  nn::BatchNorm bn2;
  nn::MaxPool2d pool;
  nn::Linear fc1;
  nn::Dropout dropout;
  nn::Linear fc2;
  BURN_MODULE(conv1, bn1, conv2, bn2, pool, fc1, dropout, fc2)
  Tensor<2> forward(const Tensor<4>& images) const {
    using activation::relu;
    auto x = pool.forward(relu(bn1.forward(conv1.forward(images))));
    x = pool.forward(relu(bn2.forward(conv2.forward(x))));
    const auto [batch, c, h, w] = x.dims();
    auto flat = x.reshape(std::array<std::size_t, 2>{batch, c * h * w});
    return fc2.forward(dropout.forward(relu(fc1.forward(flat))));
  }
};
inline Cnn make_cnn(const Device& device) {
  using namespace nn;
  auto conv = [&](std::size_t in, std::size_t out) {
    return Conv2dConfig{{in, out}, {3, 3}}.with_padding(PaddingConfig2d::same()).with_bias(false).init(device);
  };
  Cnn m{conv(1, 4),
        BatchNormConfig{4}.init(device),
        conv(4, 8),
        BatchNormConfig{8}.init(device),
        MaxPool2dConfig{{2, 2}}.with_strides({2, 2}).init(),
        LinearConfig{8 * 3 * 3, 16}.init(device),
        DropoutConfig{0.25}.init(),
        LinearConfig{16, 10}.init(device)};
  // Running statistics other than 0 and 1, so the exported batch norm is not an identity.
  m.bn1.running_mean.update(Tensor<1>::random({4}, Distribution::uniform(-0.5, 0.5), device));
  m.bn1.running_var.update(Tensor<1>::random({4}, Distribution::uniform(0.5, 2.0), device));
  m.bn2.running_mean.update(Tensor<1>::random({8}, Distribution::uniform(-0.5, 0.5), device));
  m.bn2.running_var.update(Tensor<1>::random({8}, Distribution::uniform(0.5, 2.0), device));
  return m;
}

/// Single-head self-attention with a pre-norm and a gelu feed-forward:
/// x + attn(ln1(x)), then + ff(ln2(.)).
struct AttentionBlock {
  nn::LayerNorm ln1, ln2;
  nn::Linear q, k, v, out, ff1, ff2;
  BURN_MODULE(ln1, ln2, q, k, v, out, ff1, ff2)
  Tensor<3> forward(const Tensor<3>& x) const {
    const auto h = ln1.forward(x);
    const auto scores = q.forward(h).matmul(k.forward(h).swap_dims(1, 2)) / std::sqrt(8.0);
    const auto attn = activation::softmax(scores, 2).matmul(v.forward(h));
    const auto y = x + out.forward(attn);
    return y + ff2.forward(activation::gelu(ff1.forward(ln2.forward(y))));
  }
};
inline AttentionBlock make_attention(const Device& device) {
  using namespace nn;
  return {LayerNormConfig{8}.init(device),  LayerNormConfig{8}.init(device), LinearConfig{8, 8}.init(device),
          LinearConfig{8, 8}.init(device),  LinearConfig{8, 8}.init(device), LinearConfig{8, 8}.init(device),
          LinearConfig{8, 16}.init(device), LinearConfig{16, 8}.init(device)};
}

/// burn's own Transformer encoder (one post-norm layer, gelu, no dropout).
struct Encoder {
  nn::TransformerEncoder encoder;
  BURN_MODULE(encoder)
  Tensor<3> forward(const Tensor<3>& x) const { return encoder.forward(nn::TransformerEncoderInput{x}); }
};
inline Encoder make_encoder(const Device& device) {
  return {nn::TransformerEncoderConfig{8, 16, 2, 1}.with_dropout(0.0).init(device)};
}

/// burn's LSTM over a [batch, seq, 4] sequence: every step's hidden state.
struct LstmModel {
  nn::Lstm lstm;
  BURN_MODULE(lstm)
  Tensor<3> forward(const Tensor<3>& x) const { return lstm.forward(x).first; }
};
inline LstmModel make_lstm(const Device& device) { return {nn::LstmConfig{4, 5}.init(device)}; }

/// A fresh path in the test's temporary directory.
inline std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "burn_onnx_tests";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

inline ::onnx::ModelProto read_model(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  ::onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromIstream(&f)) << path;
  return m;
}

inline void write_model(const ::onnx::ModelProto& m, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&f));
}

/// How many nodes of `op_type` the graph has.
inline int count_nodes(const ::onnx::ModelProto& m, const std::string& op_type) {
  int n = 0;
  for (const auto& node : m.graph().node()) n += node.op_type() == op_type;
  return n;
}

}  // namespace burn::onnx_test
