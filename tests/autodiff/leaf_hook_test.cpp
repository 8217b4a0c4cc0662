// The leaf-gradient hook of detail::backward, which gradient synchronisation
// starts its all-reduces from: each leaf is reported once, with its
// complete gradient, as soon as the pass has finished it.
#include "ad_support.hpp"

#if BURN_HAS_AUTODIFF

#include <cstdint>
#include <map>
#include <vector>

namespace {

using burn::Device;
using burn::Tensor;

TEST(LeafGradientHook, ReportsEachLeafOnceWithItsFinalGradientLastLayerFirst) {
  const Device device = Device::flex().autodiff();
  // x feeds two branches, so its gradient is the sum of two contributions:
  // a hook called before both arrived would see a partial one.
  const auto x = Tensor<1>::from_floats({1.0, 2.0}, device).require_grad();
  const auto w1 = Tensor<1>::from_floats({3.0, -1.0}, device).require_grad();
  const auto w2 = Tensor<1>::from_floats({0.5, 4.0}, device).require_grad();
  const auto h = (x * w1).tanh();
  const auto loss = ((h * w2).sum() + (x * x).sum());
  std::vector<std::uint64_t> order;
  std::map<std::uint64_t, std::vector<float>> seen;
  const burn::Gradients grads =
      burn::detail::backward(loss.ref(), [&](std::uint64_t leaf, const burn::detail::TensorRef& grad) {
        order.push_back(leaf);
        seen[leaf] = burn::detail::to_data(grad).to_vec<float>();
      });
  ASSERT_EQ(order.size(), 3U);
  EXPECT_EQ(seen.size(), 3U) << "a leaf was reported twice";
  for (const auto* leaf : {&x, &w1, &w2}) {
    const auto id = burn::detail::leaf_id(leaf->ref());
    ASSERT_TRUE(id.has_value());
    ASSERT_TRUE(seen.count(*id));
    EXPECT_EQ(seen[*id], leaf->grad(grads)->to_data().to_vec<float>()) << "the hook saw another gradient";
  }
  // w2 is nearest the loss: finished first.
  EXPECT_EQ(order.front(), *burn::detail::leaf_id(w2.ref()));
  // x's gradient: w1 (1 - tanh^2(x w1)) w2 + 2x, both branches included.
  const std::vector<float> dx = seen[*burn::detail::leaf_id(x.ref())];
  for (std::size_t i = 0; i < 2; ++i) {
    const double xv = i == 0 ? 1.0 : 2.0, w1v = i == 0 ? 3.0 : -1.0, w2v = i == 0 ? 0.5 : 4.0;
    const double t = std::tanh(xv * w1v);
    EXPECT_NEAR(dx[i], w1v * (1 - t * t) * w2v + 2 * xv, 1e-5);
  }
  EXPECT_FALSE(burn::detail::leaf_id(h.ref()).has_value()) << "an op's output is not a leaf";
}

}  // namespace

#endif  // BURN_HAS_AUTODIFF
