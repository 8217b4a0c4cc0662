// What autodiff nodes keep (autodiff::saved_values): only the values a
// backward rule reads. Ops whose gradient needs shapes only (add, scalar
// mul, reshape...) keep no activation, and their inputs may be overwritten
// in place by the op's output — gradients are unchanged.
#include "grad_check.hpp"

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

#if BURN_HAS_FLEX
std::uint64_t bytes_in_use(const Device& d) { return d.memory_pool_usage().value().bytes_in_use; }

TEST(SavedValues, ShapeOnlyRulesKeepNoActivations) {
  const Device ad = Device::flex().autodiff();
  constexpr std::size_t n = 1u << 20;
  const auto x = Tensor<1>::from_data(TensorData(std::vector<float>(n, 0.25f), {n}), ad).require_grad();
  const std::uint64_t before = bytes_in_use(ad);
  std::optional<Tensor<1>> loss;
  {
    Tensor<1> h = x;
    for (int i = 0; i < 10; ++i) h = ((h + 0.5) * 1.5).reshape<2>({1024, 1024}).reshape<1>({n});
    loss = h.sum();
  }
  // 40 recorded ops, none of which needs a value for its gradient: only
  // the loss (and no intermediate) is still allocated.
  const std::uint64_t kept = bytes_in_use(ad) - before;
  EXPECT_LT(kept, n * sizeof(float)) << "the graph kept " << kept << " bytes of activations";
  const Gradients grads = loss->backward();
  // d/dx of 1.5 (... 1.5 (x + 0.5) ...) = 1.5^10 = 59049 / 1024, exact in f32.
  const auto g = x.grad(grads)->to_data().to_vec<float>();
  ASSERT_EQ(g.size(), n);
  for (std::size_t i = 0; i < n; i += 4099) ASSERT_EQ(g[i], 59049.0f / 1024.0f) << "at " << i;
}

TEST(SavedValues, ValueRulesStillKeepWhatTheyRead) {
  // exp keeps its output, mul by a tensor both inputs: dropping the handles
  // must leave those values alive for backward.
  const Device ad = Device::flex().autodiff();
  constexpr std::size_t n = 1u << 18;
  const auto x = Tensor<1>::from_data(TensorData(std::vector<float>(n, 0.5f), {n}), ad).require_grad();
  const std::uint64_t before = bytes_in_use(ad);
  std::optional<Tensor<1>> loss;
  {
    auto y = (x * 2.0).exp();  // x * 2 is consumed in place by exp; exp keeps y
    loss = (y * x).sum();      // the product keeps y and x
  }
  EXPECT_GE(bytes_in_use(ad) - before, n * sizeof(float)) << "y must survive for backward";
  const Gradients grads = loss->backward();
  // d/dx [x e^{2x}] = e^{2x} (1 + 2x) = 2e at x = 0.5.
  const auto g = x.grad(grads)->to_data().to_vec<float>();
  for (std::size_t i = 0; i < n; i += 997) ASSERT_NEAR(g[i], 2.0 * std::exp(1.0), 1e-5) << "at " << i;
}
#endif

class SavedValuesGrad : public AdTest {};

// In-place execution under autodiff (an unshared temporary overwritten by an
// op that keeps nothing of it) gives the gradients the chain rule says, on
// every device and with checkpointing.
TEST_P(SavedValuesGrad, InPlaceChainsKeepExactGradients) {
  const auto x = leaf<2>({0.5, -1.0, 2.0, 0.25, -0.75, 1.5}, {2, 3});
  const auto w = leaf<2>({0.1, -0.2, 0.3, 0.4, -0.5, 0.6}, {3, 2});
  const auto b = leaf<1>({0.05, -0.1}, {2});
  // tanh keeps its output, the bias add and scalar steps keep nothing,
  // mask_fill keeps only its mask.
  const auto h = activation::relu(((x.matmul(w) + b.unsqueeze<2>()) * 2.0 - 0.1).tanh());
  const Gradients grads = (h * h).sum().backward();
  // Reference: the same chain on the host.
  const double xv[6] = {0.5, -1.0, 2.0, 0.25, -0.75, 1.5}, wv[6] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6};
  const double bv[2] = {0.05, -0.1};
  std::vector<double> gx(6, 0.0), gw(6, 0.0), gb(2, 0.0);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) {
      double z = bv[c];
      for (int k = 0; k < 3; ++k) z += xv[r * 3 + k] * wv[k * 2 + c];
      const double t = std::tanh(z * 2.0 - 0.1);
      if (t <= 0) continue;                             // relu passes nothing
      const double dz = 2.0 * t * (1.0 - t * t) * 2.0;  // d(h^2)/dh * tanh' * 2
      gb[c] += dz;
      for (int k = 0; k < 3; ++k) {
        gx[r * 3 + k] += dz * wv[k * 2 + c];
        gw[k * 2 + c] += dz * xv[r * 3 + k];
      }
    }
  expect_grad(x.grad(grads), {2, 3}, gx);
  expect_grad(w.grad(grads), {3, 2}, gw);
  expect_grad(b.grad(grads), {2}, gb);
}

// Kept-value masks name 32 slots: a cat of more inputs keeps none of them
// (its rule reads shapes only) and every input still gets its gradient.
TEST_P(SavedValuesGrad, CatOfManyInputsGivesEveryInputItsGradient) {
  std::vector<Tensor<1>> parts;
  for (int i = 0; i < 40; ++i) parts.push_back(leaf<1>({0.5 * i, -1.0}, {2}));
  std::vector<double> w(80);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.25 * static_cast<double>(i) - 3.0;
  const auto weights = constant<1>(w, {80});
  const Gradients grads = (Tensor<1>::cat(parts, 0) * weights).sum().backward();
  for (std::size_t i = 0; i < parts.size(); ++i) expect_grad(parts[i].grad(grads), {2}, {w[2 * i], w[2 * i + 1]});
}

BURN_AD_MODES(SavedValuesGrad);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
