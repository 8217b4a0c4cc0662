// An LSTM sequence classifier defined in PyTorch, run in burn from its
// torch.save state dict.
//
//   build/full/examples/burn-example-lstm-sequence [--device flex|cpu|ndarray|vulkan|all]
//
// torch_reference.py's LstmClassifier: nn.LSTM(8, 16, num_layers=2,
// bidirectional=True, batch_first=True), its output at the last step
// (both directions, 32 features) and nn.Linear(32, 3). burn's Lstm takes
// PyTorch's parameter names (weight_ih_l0, ..., weight_hh_l1_reverse), so the
// state dict loads as saved.
#include <cstdio>

#include <burn/burn.hpp>
#include <burn/record/module_record.hpp>

#include "torch_reference.hpp"

namespace {

using namespace burn;

struct LstmClassifier {
  nn::Lstm lstm;
  nn::Linear head;
  BURN_MODULE(lstm, head)

  /// Sequences [batch, seq, 8] -> logits [batch, 3].
  Tensor<2> forward(const Tensor<3>& x) const {
    const auto [hidden, states] = lstm.forward_states(x);  // [batch, seq, 32]: forward | reverse
    return head.forward(hidden.narrow(1, -1, 1).squeeze<2>(1));
  }

  static LstmClassifier init(const Device& device) {
    return {nn::LstmConfig{8, 16}.with_num_layers(2).with_bidirectional(true).init(device),
            nn::LinearConfig{32, 3}.init(device)};
  }
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto options = example::parse_options(argc, argv, "[--device NAME|all]");
    const example::Reference torch("lstm");
    bool ok = true;
    for (const Device& device : options.devices) {
      const auto input = Tensor<3>::from_data(torch.input(), device);
      const auto model = record::load_module(LstmClassifier::init(device), torch.weights());
      const auto logits = model.forward(input).to_data();
      ok = example::compare(device, logits, torch.output()) && ok;
      const auto from_safetensors = record::load_module(LstmClassifier::init(device), torch.safetensors_weights());
      ok = example::same_logits(from_safetensors.forward(input).to_data(), logits) && ok;
    }
    return ok ? 0 : 1;
  } catch (const burn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
