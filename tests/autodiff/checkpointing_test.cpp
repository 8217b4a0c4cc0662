// Gradient checkpointing and graph memory: a deep memory-bound
// chain keeps far less with checkpointing and gives identical gradients; a
// training-like loop stays flat because backward frees the graph; tensors
// with different checkpointing settings do not combine; to_device is tracked.
#include "grad_check.hpp"

#include <burn/module/ops.hpp>

#include "device/runtime.hpp"

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

std::uint64_t bytes_in_use(const Device& d) {
  const auto u = d.memory_pool_usage();
  if (!u) throw std::runtime_error(d.to_string() + " reports no memory pool usage");
  return u->bytes_in_use;
}

#if BURN_HAS_FLEX
struct ChainRun {
  std::uint64_t kept_after_forward = 0;  // bytes the graph holds once the intermediates are dropped
  std::uint64_t left_after_backward = 0;
  TensorData grad;
};

/// 50 memory-bound ops on a 1M-element tracked f32 tensor, then sum and backward.
ChainRun run_chain(const Device& ad) {
  std::vector<float> host(1u << 20);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((i % 1000) * 0.002 - 1.0);
  const auto x = Tensor<1>::from_data(TensorData(host, {host.size()}), {ad, DType::F32}).require_grad();
  ChainRun out;
  const std::uint64_t before = bytes_in_use(ad);
  std::optional<Tensor<1>> loss;
  {
    Tensor<1> h = x;
    for (int i = 0; i < 50; ++i) {
      switch (i % 5) {  // each rule needs a saved input or output; values stay bounded
        case 0: h = h.sin(); break;
        case 1: h = h.tanh(); break;
        case 2: h = h.exp(); break;
        case 3: h = h.cos(); break;
        default: h = h.erf(); break;
      }
    }
    loss = h.sum();
  }  // every intermediate handle is gone: only the graph keeps values now
  out.kept_after_forward = bytes_in_use(ad) - before;
  {
    const Gradients grads = loss->backward();
    out.grad = x.grad(grads)->to_data();
  }
  loss.reset();
  const std::uint64_t after = bytes_in_use(ad);
  out.left_after_backward = after > before ? after - before : 0;
  return out;
}

TEST(Checkpointing, DeepChainKeepsFarLessMemoryWithIdenticalGradients) {
  const Device flex = Device::flex();
  const ChainRun plain = run_chain(flex.autodiff());
  const ChainRun ckpt = run_chain(flex.autodiff().gradient_checkpointing());
  const std::uint64_t one_tensor = (1u << 20) * sizeof(float);
  EXPECT_GE(plain.kept_after_forward, 20 * one_tensor) << "without checkpointing the graph keeps the activations";
  EXPECT_LT(ckpt.kept_after_forward * 5, plain.kept_after_forward)
      << "checkpointing kept " << ckpt.kept_after_forward << " bytes, plain " << plain.kept_after_forward;
  ckpt.grad.assert_eq(plain.grad);
  // Backward freed the graph in both modes.
  EXPECT_LT(plain.left_after_backward, one_tensor / 4);
  EXPECT_LT(ckpt.left_after_backward, one_tensor / 4);
}
#endif

class GraphMemory : public AdTest {};

TEST_P(GraphMemory, TrainingLoopStaysFlat) {
  const Device ad_device = ad();
  auto w = leaf<2>(rng.uniform(12, -1, 1), {4, 3});
  const auto inputs = constant<2>(rng.uniform(32, -1, 1), {8, 4});
  const auto target = inputs.matmul(constant<2>(rng.uniform(12, -1, 1), {4, 3}));
  std::optional<MemoryPoolUsage> at10;
  double first_loss = 0, last_loss = 0;
  for (int step = 1; step <= 1000; ++step) {
    {
      const auto diff = activation::tanh(inputs.matmul(w)) * 2.0 - target;
      const auto loss = (diff * diff).mean();
      const Gradients grads = loss.backward();
      const auto g = w.grad(grads);
      ASSERT_TRUE(g.has_value());
      w = (w.detach() - *g * 0.05).require_grad();
      if (step == 1) first_loss = loss.into_scalar<double>();
      if (step == 1000) last_loss = loss.into_scalar<double>();
    }
    if (step == 10) at10 = ad_device.memory_pool_usage();
  }
  EXPECT_LT(last_loss, first_loss) << "gradient descent must make progress";
  const auto at1000 = ad_device.memory_pool_usage();
  // A backend without allocator figures (LibTorch on the CPU) cannot show the flat memory.
  if (!at1000) return;
  ASSERT_TRUE(at10);
  EXPECT_LE(at1000->bytes_in_use, at10->bytes_in_use) << "the graph of each step must be freed by its backward";
  EXPECT_LE(at1000->number_allocs, at10->number_allocs);
}

TEST_P(GraphMemory, ToDeviceIsTracked) {
  for (const Device& dest : burn::testing::all_devices()) {
    SCOPED_TRACE("to " + dest.to_string());
    const auto x = leaf<1>({0.5, -1.0, 2.0}, {3});
    // There and back: z = x * exp(x moved) moved back.
    const auto moved = x.to_device(dest);
    EXPECT_EQ(moved.device(), dest);
    EXPECT_TRUE(moved.is_autodiff());
    const auto back = moved.exp().to_device(x.device());
    const Gradients grads = (x * back).sum().backward();
    const auto g = x.grad(grads);
    ASSERT_TRUE(g.has_value());
    EXPECT_EQ(g->device(), x.device()) << "the gradient comes back on the source device";
    expect_grad(g, {3}, {1.5 * std::exp(0.5), 0.0, 3.0 * std::exp(2.0)});
    // Backward started on the destination device.
    const Gradients g2 = (x.to_device(dest) * 3.0).sum().backward();
    const auto gx = x.grad(g2);
    ASSERT_TRUE(gx.has_value());
    EXPECT_EQ(gx->device(), x.device());
    expect_grad(gx, {3}, {3, 3, 3});
  }
}

BURN_AD_MODES(GraphMemory);

class CheckpointingPerDevice : public ::testing::TestWithParam<Device> {};

TEST_P(CheckpointingPerDevice, GradientsIdenticalToPlain) {
  Rng rng(99);
  const auto xv = rng.uniform(2 * 2 * 5 * 5, -1, 1);
  const auto wv = rng.uniform(3 * 2 * 3 * 3, -1, 1);
  const auto mv = rng.uniform(3 * 4, -1, 1);
  auto run = [&](const Device& ad) {
    const auto x = Tensor<4>::from_data(TensorData(xv, {2, 2, 5, 5}), {ad, DType::F64}).require_grad();
    const auto w = Tensor<4>::from_data(TensorData(wv, {3, 2, 3, 3}), {ad, DType::F64}).require_grad();
    const auto m = Tensor<2>::from_data(TensorData(mv, {3, 4}), {ad, DType::F64}).require_grad();
    auto h = (x * 2.0).sin().exp();                                         // memory-bound chain
    auto c = module::conv2d(h, w, std::nullopt, {{1, 1}, {1, 1}, {1, 1}});  // compute-bound
    auto p = module::max_pool2d((c.tanh() + 0.5).abs(), {2, 2}, {2, 2});
    auto f = p.flatten<2>(1, 3).slice({Range::all(), {0, 3}});
    auto y = activation::softmax(f.matmul(m).cos(), 1) * f.sum_dim(1).expand<2>({2, 4});
    const Gradients grads = (y * y).sum().backward();
    return std::vector<TensorData>{x.grad(grads)->to_data(), w.grad(grads)->to_data(), m.grad(grads)->to_data()};
  };
  const auto plain = run(GetParam().autodiff());
  const auto ckpt = run(GetParam().autodiff().gradient_checkpointing());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    SCOPED_TRACE("input " + std::to_string(i));
    ckpt[i].assert_eq(plain[i]);
  }
}

// A value used twice (h * h) must not make backward recompute its whole
// history twice: 13 such diamonds would mean about 4^13 recomputations.
// Counting the ops backward dispatches catches that exponential blow-up
// (recomputing the forward once adds a few ops per layer; a clock would also
// count a GPU's first kernel compilations).
TEST_P(CheckpointingPerDevice, ReusedValuesDoNotMultiplyRecomputation) {
  auto run = [&](const Device& ad) {
    const auto x =
        Tensor<1>::from_data(TensorData(std::vector<double>(64, 0.5), {64}), {ad, DType::F64}).require_grad();
    Tensor<1> h = x;
    for (int i = 0; i < 13; ++i) h = (h * h).sin() + 0.5;
    const auto loss = h.sum();
    const std::uint64_t before = ad.runtime().op_count();
    const Gradients grads = loss.backward();
    const std::uint64_t ops = ad.runtime().op_count() - before;
    return std::pair{x.grad(grads)->to_data(), ops};
  };
  const auto [plain_grad, plain_ops] = run(GetParam().autodiff());
  const auto [ckpt_grad, ckpt_ops] = run(GetParam().autodiff().gradient_checkpointing());
  ckpt_grad.assert_eq(plain_grad);
  EXPECT_GT(plain_ops, 13u);
  EXPECT_LT(ckpt_ops, 3 * plain_ops) << "backward with checkpointing ran " << ckpt_ops << " ops, plain " << plain_ops
                                     << ": recomputed values must be reused, not recomputed per use";
}

TEST_P(CheckpointingPerDevice, DifferentSettingsDoNotCombine) {
  const auto a = Tensor<1>::from_floats({1.0, 2.0}, GetParam().autodiff()).require_grad();
  const auto b = Tensor<1>::from_floats({3.0, 4.0}, GetParam().autodiff().gradient_checkpointing()).require_grad();
  for (int order = 0; order < 2; ++order) {
    try {
      (void)(order == 0 ? a * b : b * a);
      ADD_FAILURE() << "combining tracked tensors with different checkpointing settings must throw";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("[", 0), 0u) << msg;
      EXPECT_NE(msg.find("checkpointing"), std::string::npos) << msg;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, CheckpointingPerDevice, ::testing::ValuesIn(burn::testing::all_devices()),
                         burn::adtest::device_name);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
