// The row-reduce fuser: softmax, log-softmax, layer norm and RMS-norm shapes
// (written out as their composites: burn::activation::softmax is an op of its
// own) run as one row kernel on Device::cpu() and equal flex bit for bit;
// what it must not take (reductions over other dims, rows longer than a flex
// chunk) still runs, eagerly, with the same results.
#include <cmath>
#include <vector>

#include "device/runtime.hpp"
#include "fusion_support.hpp"

namespace burn::fusion_test {
namespace {

TensorData wave(std::vector<std::size_t> shape, float scale) {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = scale * std::sin(0.37f * static_cast<float>(i)) + 0.01f * static_cast<float>(i % 7);
  return TensorData(v, Shape(shape));
}

template <std::size_t D, class F>
void expect_same_on_both(const TensorData& input, F&& f, std::size_t min_groups, std::size_t max_eager) {
  const auto eager = f(Tensor<D>::from_data(input, eager_device())).to_data();
  const Device cpu = fused_device();
  auto x = Tensor<D>::from_data(input, cpu);
  cpu.sync();
  fusion::reset_stats(cpu);
  const auto fused = f(x).to_data();
  const auto s = fusion::stats(cpu);
  EXPECT_EQ(bitwise_diff(fused, eager), "");
  EXPECT_GE(s.fused_groups, min_groups);
  EXPECT_LE(s.ops_eager, max_eager) << "ops that ran alone on flex";
}

template <std::size_t D>
Tensor<D> softmax(const Tensor<D>& x) {
  const auto e = (x - x.max_dim(-1)).exp();
  return e / e.sum_dim(-1);
}

template <std::size_t D>
Tensor<D> log_softmax(const Tensor<D>& x) {
  const auto shifted = x - x.max_dim(-1);
  return shifted - shifted.exp().sum_dim(-1).log();
}

Tensor<2> layer_norm(const Tensor<2>& x, const Tensor<1>& gamma, const Tensor<1>& beta) {
  auto mean = x.mean_dim(-1);
  auto var = x.var_bias(-1);
  return (x - mean) / (var + 1e-5).sqrt() * gamma.unsqueeze<2>() + beta.unsqueeze<2>();
}

TEST(RowReduce, SoftmaxIsOneGroup) {
  expect_same_on_both<2>(
      wave({64, 300}, 4.0f), [](const Tensor<2>& x) { return softmax(x); }, 1, 0);
}

TEST(RowReduce, LogSoftmaxOfA3dTensor) {
  expect_same_on_both<3>(
      wave({4, 9, 130}, 6.0f), [](const Tensor<3>& x) { return log_softmax(x); }, 1, 0);
}

TEST(RowReduce, StridedRowsReadStatisticsBroadcast) {
  // Rows of a permuted view are strided (stride 3 here): the row ops take
  // their generic path, which reads a broadcast statistic at every element,
  // so a statistic's register must outlive the op that reads it last.
  auto permuted = [](const Device& d, auto&& f) {
    return f(Tensor<3>::from_data(wave({2, 4, 3}, 5.0f), d).permute({0, 2, 1})).to_data();
  };
  for (auto f : {+[](const Tensor<3>& x) { return log_softmax(x); }, +[](const Tensor<3>& x) { return softmax(x); },
                 +[](const Tensor<3>& x) { return (x - x.mean_dim(-1)) / (x.var_bias(-1) + 1e-5).sqrt(); }})
    EXPECT_EQ(bitwise_diff(permuted(fused_device(), f), permuted(eager_device(), f)), "");
}

TEST(RowReduce, LayerNormCompositeIsFusedWholly) {
  const Device cpu = fused_device();
  const auto gamma_data = wave({256}, 1.0f), beta_data = wave({256}, 0.5f);
  auto run = [&](const Device& d) {
    auto g = Tensor<1>::from_data(gamma_data, d), b = Tensor<1>::from_data(beta_data, d);
    return layer_norm(Tensor<2>::from_data(wave({48, 256}, 3.0f), d), g, b);
  };
  const auto eager = run(eager_device()).to_data();
  auto x = run(cpu);  // queued: nothing computed yet
  fusion::reset_stats(cpu);
  const auto fused = x.to_data();
  const auto s = fusion::stats(cpu);
  EXPECT_EQ(bitwise_diff(fused, eager), "");
  EXPECT_EQ(s.fused_groups, 1u) << "the whole layer norm is one row kernel";
  EXPECT_EQ(s.ops_eager, 0u);
}

TEST(RowReduce, NnLayerNormForwardAndBackwardMatchFlex) {
  auto run = [](const Device& d) {
    const Device ad = d.autodiff();
    auto norm = burn::nn::LayerNormConfig{96}.init(ad);
    auto x = Tensor<2>::from_data(wave({17, 96}, 2.0f), ad).require_grad();
    auto loss = (norm.forward(x) * Tensor<2>::from_data(wave({17, 96}, 1.5f), ad)).sum();
    auto grads = loss.backward();
    return std::pair{loss.to_data(), x.grad(grads)->to_data()};
  };
  const auto [loss_e, grad_e] = run(eager_device());
  const auto [loss_f, grad_f] = run(fused_device());
  EXPECT_EQ(bitwise_diff(loss_f, loss_e), "");
  EXPECT_EQ(bitwise_diff(grad_f, grad_e), "");
}

// Batch norm's backward rule recomputes x - mean inside each fused pass on
// Device::cpu() and stores it once on flex: the same ops on the same
// values, so the gradients are the same bits. On cpu both per-channel line
// sums (of g and of g * xhat) fold in one pass, and nothing the size of x
// runs alone.
TEST(RowReduce, BatchNormBackwardRecomputesInsteadOfStoringAndMatchesFlex) {
  ASSERT_TRUE(fused_device().runtime().backend().fuses_elementwise());
  ASSERT_FALSE(eager_device().runtime().backend().fuses_elementwise());
  const Shape shape{4, 6, 5, 7};
  auto run = [&](const Device& d, fusion::FusionStats* backward_stats) {
    const Device ad = d.autodiff();
    auto bn = burn::nn::BatchNormConfig{6}.init(ad);
    auto x = Tensor<4>::from_data(wave({4, 6, 5, 7}, 2.0f), ad).require_grad();
    // A weighted sum, so each element's cotangent differs.
    auto loss = (bn.forward(x) * Tensor<4>::from_data(wave({4, 6, 5, 7}, 1.5f), ad)).sum();
    loss.to_data();
    if (backward_stats) fusion::reset_stats(d);
    auto grads = loss.backward();
    std::vector<TensorData> out{x.grad(grads)->to_data(), bn.weight.grad(grads)->to_data(),
                                bn.bias.grad(grads)->to_data()};
    if (backward_stats) *backward_stats = fusion::stats(d);
    return out;
  };
  fusion::FusionStats s;
  const auto eager = run(eager_device(), nullptr);
  const auto fused = run(fused_device(), &s);
  for (std::size_t i = 0; i < eager.size(); ++i) {
    SCOPED_TRACE(i == 0 ? "dx" : i == 1 ? "dweight" : "dbias");
    EXPECT_EQ(bitwise_diff(fused[i], eager[i]), "");
  }
  EXPECT_EQ(fused[0].shape(), shape);
  // Four fused kernels: the weighted sum's cotangent, both line sums in one
  // pass over g and x, the per-channel scales, and dx. Summing g and g *
  // xhat in separate passes (after storing xhat) made five.
  EXPECT_GE(s.fused_groups, 2u);
  EXPECT_LE(s.fused_groups, 4u);
}

TEST(RowReduce, StatisticsKeptByTheUserAreMaterialised) {
  const Device cpu = fused_device();
  const auto data = wave({10, 33}, 5.0f);
  auto x = Tensor<2>::from_data(data, cpu);
  auto m = x.max_dim(-1);  // kept: the user reads it below
  auto e = (x - m).exp();
  auto s = e.sum_dim(-1);  // kept too
  auto y = e / s;
  auto xe = Tensor<2>::from_data(data, eager_device());
  auto me = xe.max_dim(-1);
  auto ee = (xe - me).exp();
  auto se = ee.sum_dim(-1);
  EXPECT_EQ(bitwise_diff(y.to_data(), (ee / se).to_data()), "");
  EXPECT_EQ(bitwise_diff(m.to_data(), me.to_data()), "");
  EXPECT_EQ(bitwise_diff(s.to_data(), se.to_data()), "");
}

TEST(RowReduce, OtherDimsAndLongRowsStayEagerAndCorrect) {
  // A reduction over dim 0 is not a row reduction; a row of 20,000 is longer
  // than one chunk of flex's reduction. Both run, with flex's results.
  expect_same_on_both<2>(
      wave({40, 50}, 2.0f), [](const Tensor<2>& x) { return (x * 2.0).exp().sum_dim(0); }, 0, 1);
  expect_same_on_both<2>(
      wave({3, 20000}, 2.0f), [](const Tensor<2>& x) { return softmax(x); }, 0, 8);
}

TEST(RowReduce, EmptyRowsStillComputeTheirStatistics) {
  // Rows of length 0: each sum is 0 and a mean is NaN, and per-row work on
  // them (found by the fuzz test: acosh of an empty sum was left at 0) runs.
  for (std::size_t rows : {1u, 3u}) {
    SCOPED_TRACE(rows);
    const TensorData empty(std::vector<float>{}, {rows, 0});
    expect_same_on_both<2>(
        empty, [](const Tensor<2>& x) { return x.sum_dim(-1).acosh() + 1.0; }, 1, 0);
    expect_same_on_both<2>(
        empty, [](const Tensor<2>& x) { return (x.mean_dim(-1) * 2.0).exp(); }, 1, 0);
  }
}

TEST(RowReduce, HalfPrecisionRowsRoundLikeFlex) {
  const auto data = wave({12, 70}, 3.0f);
  for (DType dt : {DType::F16, DType::BF16, DType::F64}) {
    SCOPED_TRACE(dtype_name(dt));
    auto f = [dt, &data](const Device& d) {
      auto x = Tensor<2>::from_data(data, d).cast(dt);
      return softmax(x * 1.5).to_data();
    };
    EXPECT_EQ(bitwise_diff(f(fused_device()), f(eager_device())), "");
  }
}

// Rows of up to 64 elements run a block of rows per instruction call; each
// layout below takes a different path into the block's registers.
TEST(RowReduce, ShortRowsRunInBlocksAndEqualFlex) {
  // Several blocks (1000 rows of 10), in every float width.
  for (DType dt : {DType::F32, DType::F64, DType::F16}) {
    SCOPED_TRACE(dtype_name(dt));
    expect_same_on_both<2>(
        wave({1000, 10}, 6.0f), [dt](const Tensor<2>& x) { return log_softmax(x.cast(dt)); }, 1, 1);
  }
  // A layer norm's gamma and beta are read broadcast along the rows: each
  // block copies them out once per row.
  const auto gamma_data = wave({24}, 1.0f), beta_data = wave({24}, 0.5f);
  auto norm = [&](const Device& d) {
    auto g = Tensor<1>::from_data(gamma_data, d), b = Tensor<1>::from_data(beta_data, d);
    return layer_norm(Tensor<2>::from_data(wave({515, 24}, 3.0f), d), g, b).to_data();
  };
  EXPECT_EQ(bitwise_diff(norm(fused_device()), norm(eager_device())), "");
}

TEST(RowReduce, ShortRowsOfViewsAndStatisticInputsEqualFlex) {
  // Rows of a transposed view are spaced by one element and strided along
  // the row; a statistic computed earlier enters the group as an input.
  auto f = [](const Device& d) {
    auto x = Tensor<2>::from_data(wave({12, 300}, 4.0f), d).transpose();  // [300, 12], strides [1, 300]
    auto m = x.max_dim(-1);
    d.sync();  // m is now a materialised input of the next group
    auto y = ((x - m) * 1.5).exp();
    return std::pair{(y / y.sum_dim(-1)).to_data(), (y.sum_dim(-1).log() + m).to_data()};
  };
  const auto [ye, le] = f(eager_device());
  const auto [yf, lf] = f(fused_device());
  EXPECT_EQ(bitwise_diff(yf, ye), "");
  EXPECT_EQ(bitwise_diff(lf, le), "");
  // Rows whose start is not evenly spaced (a permuted 3-D view) take the
  // row-by-row path.
  auto g = [](const Device& d) {
    auto x = Tensor<3>::from_data(wave({5, 7, 6}, 3.0f), d).permute({1, 0, 2});  // [7, 5, 6]
    return softmax(x * 2.0).to_data();
  };
  EXPECT_EQ(bitwise_diff(g(fused_device()), g(eager_device())), "");
}

}  // namespace
}  // namespace burn::fusion_test
