// A Transformer encoder classifier defined in PyTorch, run in burn from its
// torch.save state dict.
//
//   build/full/examples/burn-example-encoder-classifier [--device flex|cpu|ndarray|vulkan|all]
//
// torch_reference.py's EncoderClassifier: nn.Embedding(100, 32), an
// nn.TransformerEncoder of two nn.TransformerEncoderLayer(32, 4, 64,
// batch_first=True), the mean over the sequence and nn.Linear(32, 5). Its
// state dict keeps PyTorch's names (encoder.layers.0.self_attn.in_proj_weight,
// linear1, norm1, ...); the PyTorch adapter splits the fused attention
// projection into burn's query, key and value and maps the layer names, so
// the burn model below loads it as saved.
#include <cstdio>

#include <burn/burn.hpp>
#include <burn/record/module_record.hpp>

#include "torch_reference.hpp"

namespace {

using namespace burn;

struct EncoderClassifier {
  nn::Embedding embedding;
  nn::TransformerEncoder encoder;
  nn::Linear head;
  BURN_MODULE(embedding, encoder, head)

  /// Token ids [batch, seq] -> logits [batch, 5].
  Tensor<2> forward(const Tensor<2, Int>& tokens) const {
    const auto h = encoder.forward(nn::TransformerEncoderInput(embedding.forward(tokens)));
    return head.forward(h.mean_dim(1).squeeze<2>(1));
  }

  static EncoderClassifier init(const Device& device) {
    // PyTorch's defaults: relu feed-forward, d_ff as given, post-norm.
    return {nn::EmbeddingConfig{100, 32}.init(device),
            nn::TransformerEncoderConfig::pytorch_defaults(32, 4, 2, 64).init(device),
            nn::LinearConfig{32, 5}.init(device)};
  }
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto options = example::parse_options(argc, argv, "[--device NAME|all]");
    const example::Reference torch("encoder");
    bool ok = true;
    for (const Device& device : options.devices) {
      const auto input = Tensor<2, Int>::from_data(torch.input(), device);
      const auto model = record::load_module(EncoderClassifier::init(device), torch.weights());
      const auto logits = model.forward(input).to_data();
      ok = example::compare(device, logits, torch.output()) && ok;
      const auto from_safetensors = record::load_module(EncoderClassifier::init(device), torch.safetensors_weights());
      ok = example::same_logits(from_safetensors.forward(input).to_data(), logits) && ok;
    }
    return ok ? 0 : 1;
  } catch (const burn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
