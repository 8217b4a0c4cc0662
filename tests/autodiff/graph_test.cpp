// Graph behaviour: seeding, accumulation, consumption, detach,
// NoGradGuard, Int/Bool outputs, grad/grad_remove, require_grad errors and
// the tensor-level autodiff context methods.
#include "grad_check.hpp"

#include <thread>

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

class Graph : public AdTest {};

TEST_P(Graph, NonScalarBackwardSeedsOnes) {
  const auto x = leaf<2>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Gradients grads = (x * x).backward();
  expect_grad(x.grad(grads), {2, 3}, {2, 4, 6, 8, 10, 12});
  // A leaf's own backward: d x / d x seeded with ones.
  const auto y = leaf<1>({1, 2, 3}, {3});
  expect_grad(y.grad(y.backward()), {3}, {1, 1, 1});
}

TEST_P(Graph, GradientsAccumulateOverUses) {
  const auto x = leaf<1>({1, 2, 3}, {3});
  const auto y = x * 2.0 + x * x + x.exp() - x;  // d/dx = 2 + 2x + e^x - 1
  const Gradients grads = y.sum().backward();
  expect_grad(x.grad(grads), {3}, {1 + 2 + std::exp(1.0), 1 + 4 + std::exp(2.0), 1 + 6 + std::exp(3.0)});
}

TEST_P(Graph, OneEntryPerLeafReached) {
  const auto a = leaf<1>({1, 2}, {2});
  const auto b = leaf<1>({3, 4}, {2});
  const auto unused = leaf<1>({5, 6}, {2});
  const Gradients grads = (a * b).sum().backward();
  EXPECT_EQ(grads.size(), 2u);
  EXPECT_FALSE(grads.empty());
  expect_grad(a.grad(grads), {2}, {3, 4});
  expect_grad(b.grad(grads), {2}, {1, 2});
  EXPECT_FALSE(unused.grad(grads).has_value());
  // Only leaves collect gradients: an intermediate has none.
  const auto mid = a * 2.0;
  const Gradients g2 = (mid * b).sum().backward();
  EXPECT_FALSE(mid.grad(g2).has_value());
  EXPECT_EQ(g2.size(), 2u);
}

TEST_P(Graph, GradientsKeepTheLeafDtype) {
  for (DType dtype : burn::testing::float_dtypes()) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const auto x = burn::testing::float_tensor<1>({0.5, -1.5, 2.0}, {3}, ad(), dtype).require_grad();
    const Gradients grads = (x * x * 0.5 + x).sum().backward();
    const auto g = x.grad(grads);
    ASSERT_TRUE(g.has_value());
    EXPECT_EQ(g->dtype(), dtype);
    expect_grad(g, {3}, {1.5, -0.5, 3.0}, Tolerance::default_for(dtype));
  }
}

TEST_P(Graph, GradRemove) {
  const auto a = leaf<1>({1, 2}, {2});
  const auto b = leaf<1>({3, 4}, {2});
  Gradients grads = (a * b).sum().backward();
  const auto removed = a.grad_remove(grads);
  expect_grad(removed, {2}, {3, 4});
  EXPECT_FALSE(a.grad(grads).has_value());
  EXPECT_FALSE(a.grad_remove(grads).has_value());
  EXPECT_EQ(grads.size(), 1u);
  expect_grad(b.grad(grads), {2}, {1, 2});
}

TEST_P(Graph, BackwardTwiceOnAConsumedGraphIsAnError) {
  const auto x = leaf<1>({1, 2, 3}, {3});
  const auto y = (x.exp() * x).sum();
  (void)y.backward();
  expect_op_error([&] { (void)y.backward(); }, "backward", "consumed");
  // An intermediate of the consumed graph is consumed too.
  const auto z = x.sin();
  const auto loss = (z * 2.0).sum();
  (void)loss.backward();
  expect_op_error([&] { (void)z.sum().backward(); }, "backward", "consumed");
  // The leaf itself starts new graphs.
  expect_grad(x.grad((x * 3.0).sum().backward()), {3}, {3, 3, 3});
}

TEST_P(Graph, DetachStopsGradients) {
  const auto x = leaf<1>({1, 2, 3}, {3});
  const auto d = x.detach();
  EXPECT_FALSE(d.is_require_grad());
  EXPECT_EQ(values_of(d), values_of(x));
  // y = stop(x) * x: only the second factor is differentiated.
  const Gradients grads = (d * x).sum().backward();
  expect_grad(x.grad(grads), {3}, {1, 2, 3});
  // Detaching an intermediate cuts everything before it.
  const auto e = x.exp().detach();
  const Gradients g2 = (e * x.sin()).sum().backward();
  expect_grad(x.grad(g2), {3},
              {std::exp(1.0) * std::cos(1.0), std::exp(2.0) * std::cos(2.0), std::exp(3.0) * std::cos(3.0)});
}

TEST_P(Graph, NoGradGuardStopsRecording) {
  const auto x = leaf<1>({1, 2, 3}, {3});
  EXPECT_TRUE(is_grad_enabled());
  std::optional<Tensor<1>> y;
  {
    NoGradGuard guard;
    EXPECT_FALSE(is_grad_enabled());
    {
      NoGradGuard nested;
      EXPECT_FALSE(is_grad_enabled());
    }
    EXPECT_FALSE(is_grad_enabled()) << "a nested guard restores the outer state";
    // The guard is per thread: another thread still records.
    bool other_thread_enabled = false;
    std::thread([&] { other_thread_enabled = is_grad_enabled(); }).join();
    EXPECT_TRUE(other_thread_enabled);
    y = x * x;
  }
  EXPECT_TRUE(is_grad_enabled());
  // y was computed without recording: it is a constant for the product below.
  const Gradients grads = (*y * x).sum().backward();
  expect_grad(x.grad(grads), {3}, {1, 4, 9});
}

TEST_P(Graph, IntAndBoolOutputsCarryNoGraph) {
  const auto x = leaf<2>({1, 7, 3, 9, 2, 4}, {2, 3});
  EXPECT_TRUE(x.is_require_grad());
  const auto am = x.argmax(1);
  const auto an = x.argmin(0);
  const auto gt = x.greater_elem(2.5);
  const auto nan = x.is_nan();
  const auto eq = x.equal(x);
  EXPECT_FALSE(am.is_require_grad());
  EXPECT_FALSE(an.is_require_grad());
  EXPECT_FALSE(gt.is_require_grad());
  EXPECT_FALSE(nan.is_require_grad());
  EXPECT_FALSE(eq.is_require_grad());
  EXPECT_FALSE(x.to_int().is_require_grad());
  EXPECT_FALSE(x.any().is_require_grad());
  // Turned back into floats they are constants: d/dx (x * float(x > 2.5)) = mask.
  const Gradients grads =
      ((x * gt.to_float().cast(DType::F64)).sum() + am.to_float().cast(DType::F64).sum()).backward();
  expect_grad(x.grad(grads), {2, 3}, {0, 1, 1, 1, 0, 1});
  // A float result of an Int path has nothing to differentiate.
  const auto through_int = x.to_int().to_float();
  EXPECT_FALSE(through_int.is_require_grad());
}

TEST_P(Graph, UntrackedTensorsOnAnAutodiffDeviceRecordNothing) {
  const auto c = constant<1>({1, 2}, {2});
  EXPECT_TRUE(c.is_autodiff());
  EXPECT_FALSE(c.is_require_grad());
  const auto x = leaf<1>({3, 4}, {2});
  const Gradients grads = ((c * c).exp() * x).sum().backward();
  EXPECT_EQ(grads.size(), 1u);
  expect_grad(x.grad(grads), {2}, {std::exp(1.0), std::exp(4.0)});
}

TEST_P(Graph, SetRequireGrad) {
  const auto c = constant<1>({1, 2}, {2});
  const auto x = c.set_require_grad(true);
  EXPECT_TRUE(x.is_require_grad());
  EXPECT_FALSE(c.is_require_grad()) << "require_grad returns a new handle";
  EXPECT_FALSE(x.set_require_grad(false).is_require_grad());
  expect_grad(x.grad((x * x).sum().backward()), {2}, {2, 4});
}

TEST_P(Graph, RequireGradNeedsAnAutodiffDevice) {
  const auto plain = Tensor<1>::from_floats({1.0, 2.0}, GetParam().device);
  expect_op_error([&] { (void)plain.require_grad(); }, "require_grad", "autodiff()");
  expect_op_error([&] { (void)leaf<1>({1, 2}, {2}).without_autodiff().require_grad(); }, "require_grad", "autodiff");
}

TEST_P(Graph, TensorContextMethods) {
  // A plain tensor switched to autodiff can become a leaf.
  const auto plain = Tensor<1>::from_floats({1.0, 2.0}, {GetParam().device, DType::F64});
  EXPECT_FALSE(plain.is_autodiff());
  const auto x = plain.autodiff().require_grad();
  EXPECT_TRUE(x.is_autodiff());
  expect_grad(x.grad((x * x * x).sum().backward()), {2}, {3, 12});
  // Leaving autodiff drops the graph: ops on the result are not tracked.
  const auto y = leaf<1>({1, 2}, {2});
  const auto off = (y * 2.0).without_autodiff();
  EXPECT_FALSE(off.is_autodiff());
  EXPECT_FALSE(off.is_require_grad());
  EXPECT_EQ(values_of(off), (std::vector<double>{2, 4}));
  const Gradients grads = (off.autodiff() * y).sum().backward();
  expect_grad(y.grad(grads), {2}, {2, 4});
}

TEST_P(Graph, ZeroSizeTensors) {
  const auto a = leaf<2>({}, {2, 0});
  const auto b = leaf<2>({}, {0, 3});
  const auto c = leaf<2>({1, 2, 3, 4, 5, 6}, {2, 3});
  // [2, 0] x [0, 3] is a [2, 3] block of zeros; cat with an empty piece; an empty slice.
  const auto y = (a.matmul(b) + c).exp() + Tensor<2>::cat({b, c}, 0) + c.slice({Range::all(), {1, 1}}).sum_dim(1);
  const Gradients grads = y.sum().backward();
  const auto ga = a.grad(grads);
  const auto gb = b.grad(grads);
  ASSERT_TRUE(ga && gb);
  EXPECT_EQ(ga->shape(), Shape({2, 0}));
  EXPECT_EQ(gb->shape(), Shape({0, 3}));
  std::vector<double> want;
  for (double v : {1, 2, 3, 4, 5, 6}) want.push_back(std::exp(v) + 1);
  expect_grad(c.grad(grads), {2, 3}, want);
}

// Long graphs (an unrolled recurrence) must not overflow the stack, neither
// when backward walks them nor when they are dropped unused. A reduction in
// each step keeps the runs of memory-bound ops short, so checkpointing has
// little to recompute.
TEST_P(Graph, DeepGraphBackward) {
  const auto x = leaf<1>({0.5}, {1});
  Tensor<1> h = x;
  for (int i = 0; i < 20000; ++i) h = (h + 1e-4).sum_dim(0);
  expect_grad(x.grad(h.backward()), {1}, {1});
}

TEST_P(Graph, DeepGraphDroppedUnused) {
  const auto x = leaf<1>({0.5}, {1});
  {
    Tensor<1> h = x;
    for (int i = 0; i < 20000; ++i) h = (h * 1.0).sum_dim(0);
  }  // the whole graph is freed here
  expect_grad(x.grad((x * 2.0).backward()), {1}, {2});
}

TEST_P(Graph, ChainOfManyOps) {
  // A longer mixed chain: memory-bound ops (recomputed under checkpointing)
  // around compute-bound ones (matmul, sum_dim, softmax).
  check(
      [](auto a, auto b) {
        auto h = (a * 0.5 + 0.1).tanh().matmul(b.sin());
        h = activation::softmax(h.exp() - h, 1) * h.cos();
        h = h.slice({Range::all(), {0, 2}}).flip({1}).sum_dim(1) + (h.sum_dim(1).powf_scalar(2.0) + 1.0).sqrt();
        return h.permute({1, 0}).template expand<2>({3, -1}) * (a.abs() + 1.0).log().slice({{0, 1}, {0, 1}});
      },
      Input<2>{rng.uniform(6, -1, 1), {2, 3}}, Input<2>{rng.uniform(9, -1, 1), {3, 3}});
}

BURN_AD_MODES(Graph);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
