// Test-local modules and snapshots for the module-record tests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <burn/nn/layer_norm.hpp>
#include <burn/nn/linear.hpp>
#include <burn/record/module_record.hpp>

#include "burn_test.hpp"
#include "record_test_util.hpp"

namespace burn::record::test {

struct Block {
  nn::Linear fc;
  nn::LayerNorm norm;
  BURN_MODULE(fc, norm)
};

/// Nested modules, a vector, an optional, a float and an int running state:
/// every kind of field a record has to reach.
struct Net {
  std::vector<Block> blocks;
  std::optional<nn::Linear> head;
  module::RunningState<Tensor<1>> steps;
  module::RunningState<Tensor<1, Int>> counter;
  BURN_MODULE(blocks, head, steps, counter)

  Tensor<2> forward(const Tensor<2>& x) const {
    Tensor<2> h = x;
    for (const auto& b : blocks) h = b.norm.forward(b.fc.forward(h));
    return head ? head->forward(h) : h;
  }
};

/// A Net of `width` features; every float tensor (LayerNorm's ones and zeros
/// and the running state included) gets random values so a load that skips
/// any of them is caught.
inline Net make_net(const TensorCreationOptions& o, std::size_t width = 3, bool with_head = true) {
  Net net{{},
          std::nullopt,
          module::RunningState(Tensor<1>::zeros(Shape{2}, o)),
          module::RunningState(Tensor<1, Int>::from_ints({3, -7}, o.device))};
  for (int i = 0; i < 2; ++i)
    net.blocks.push_back({nn::LinearConfig{width, width}.init(o), nn::LayerNormConfig{width}.init(o)});
  if (with_head) net.head = nn::LinearConfig{width, 2}.init(o);
  return module::map_tensors(std::move(net), [](const std::string&, const module::ParamBase& p) {
    const auto& t = *p.ref();
    if (!is_float(t.spec.dtype)) return p.ref();
    return burn::detail::random(t.spec.shape, Distribution::uniform(-2.0, 2.0), {t.device, t.spec.dtype},
                                TensorKind::Float);
  });
}

/// What a record must preserve of one tensor.
struct Entry {
  std::string path;
  TensorData data;
  module::ParamId id;
  bool trainable;
  Device device;
};

template <module::Module M>
std::vector<Entry> snapshot(const M& m) {
  std::vector<Entry> out;
  module::for_each_tensor(m, [&](const std::string& path, const module::ParamBase& p) {
    out.push_back({path, burn::detail::to_data(p.ref()), p.id(), p.is_trainable(), p.ref()->device});
  });
  return out;
}

inline std::vector<std::string> paths_of(const std::vector<Entry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.path);
  return out;
}

}  // namespace burn::record::test
