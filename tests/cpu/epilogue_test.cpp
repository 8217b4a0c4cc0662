// The epilogue fuser: a matmul's bias add, scalar steps and relu run as one
// oneDNN matmul with post-ops on Device::cpu(), agreeing with flex; cases the
// post-ops cannot take exactly run op by op with flex's results; a matmul
// chain without relu is left to the elementwise and row fusers.
#include <burn/activation.hpp>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "fusion_support.hpp"

namespace burn::fusion_test {
namespace {

TensorData grid(std::size_t rows, std::size_t cols, float scale, float shift) {
  std::vector<float> v(rows * cols);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = scale * std::cos(0.91f * static_cast<float>(i)) + shift;
  return TensorData(v, {rows, cols});
}

/// Values agree within float rounding (a matmul with post-ops may pick
/// another oneDNN kernel, which sums in another order); -0 equals +0.
void expect_close(const TensorData& got, const TensorData& want) {
  const auto g = got.to_vec<float>(), w = want.to_vec<float>();
  ASSERT_EQ(g.size(), w.size());
  for (std::size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-5 * (1.0 + std::abs(w[i]))) << "at " << i;
}

/// Runs `chain` on cpu — counting only the drain that computes its result —
/// and on flex, checks that the values agree, and returns cpu's counters.
template <class Chain>
fusion::FusionStats fused_against_flex(Chain&& chain) {
  const Device cpu = fused_device();
  auto y = chain(cpu);
  fusion::reset_stats(cpu);
  const auto got = y.to_data();
  const auto s = fusion::stats(cpu);
  expect_close(got, chain(eager_device()).to_data());
  return s;
}

struct Linear {
  TensorData x, w, b;
  Tensor<2> run(const Device& d) const {
    auto out =
        Tensor<2>::from_data(x, d).matmul(Tensor<2>::from_data(w, d)) + Tensor<1>::from_data(b, d).unsqueeze<2>();
    return burn::activation::relu(out);
  }
};

/// 64 x 48 by 48 x 1040: more outputs than flex's small-product path takes
/// (flex::is_small_product), so the matmul can anchor an epilogue.
Linear layer() {
  return {grid(64, 48, 1.0f, 0.1f), grid(48, 1040, 0.3f, 0.0f),
          TensorData(grid(1, 1040, 0.5f, -0.2f).to_vec<float>(), {1040})};
}

TEST(Epilogue, SmallProductsRunAloneAndTheirEpilogueFusesAsElementwise) {
  // 64 x 48 by 48 x 40: flex runs it through dnnl_sgemm, faster than a
  // primitive with post-ops, so cpu runs the matmul alone on flex's kernel
  // and the bias add and relu as one elementwise group: flex's values, bit
  // for bit.
  const Linear small{grid(64, 48, 1.0f, 0.1f), grid(48, 40, 0.3f, 0.0f),
                     TensorData(grid(1, 40, 0.5f, -0.2f).to_vec<float>(), {40})};
  const Device cpu = fused_device();
  cpu.sync();
  fusion::reset_stats(cpu);
  const auto got = small.run(cpu).to_data();
  const auto s = fusion::stats(cpu);
  EXPECT_EQ(bitwise_diff(got, small.run(eager_device()).to_data()), "");
  EXPECT_EQ(s.ops_queued, 3u) << "add, compare and mask_fill; the matmul runs at once";
  EXPECT_EQ(s.ops_eager, 2u) << "the matmul and the bias's reshape";
  EXPECT_EQ(s.fused_groups, 1u);
  EXPECT_EQ(s.ops_fused, 3u) << "add, compare and mask_fill";
}

TEST(Epilogue, LinearBiasReluIsOneMatmul) {
  const Linear l = layer();
  const auto s = fused_against_flex([&](const Device& d) { return l.run(d); });
  EXPECT_EQ(s.fused_groups, 1u);
  EXPECT_EQ(s.ops_fused, 4u) << "matmul, add, compare and mask_fill in one kernel";
  EXPECT_EQ(s.ops_eager, 0u);
}

TEST(Epilogue, ScalarAndTensorSteps) {
  const Linear l = layer();
  // The handles die before the read: a matmul result someone still holds
  // must be materialised, so it could not be fused away.
  auto chain = [&](const Device& d) {
    auto m = Tensor<2>::from_data(l.x, d).matmul(Tensor<2>::from_data(l.w, d));
    auto scale = Tensor<2>::from_data(grid(64, 1, 0.7f, 1.0f), d);  // per-row, broadcast over columns
    return burn::activation::relu(((m * 2.0 - 0.5) / 4.0) * scale + 1.0);
  };
  auto f = [&](const Device& d) { return chain(d).to_data(); };
  const Device cpu = fused_device();
  fusion::reset_stats(cpu);
  expect_close(f(cpu), f(eager_device()));
  EXPECT_EQ(fusion::stats(cpu).fused_groups, 1u);
}

TEST(Epilogue, AThresholdOtherThanZeroRunsOpByOpExactly) {
  // mask_fill(x, x <= 0.25, 0) has relu's shape but is not relu: the plan
  // sees the scalar at run time and runs the ops on flex's kernels.
  const Linear l = layer();
  auto chain = [&](const Device& d) {
    auto m = Tensor<2>::from_data(l.x, d).matmul(Tensor<2>::from_data(l.w, d));
    return m.mask_fill(m.lower_equal_elem(0.25), 0.0);
  };
  const Device cpu = fused_device();
  auto y = chain(cpu);
  fusion::reset_stats(cpu);
  EXPECT_EQ(bitwise_diff(y.to_data(), chain(eager_device()).to_data()), "");
  EXPECT_EQ(fusion::stats(cpu).fused_groups, 1u) << "planned as an epilogue; the kernel then saw the threshold";
}

TEST(Epilogue, IntermediatesSomeoneHoldsAreNotFusedAway) {
  const Linear l = layer();
  auto f = [&](const Device& d) {
    auto m = Tensor<2>::from_data(l.x, d).matmul(Tensor<2>::from_data(l.w, d));
    auto y = burn::activation::relu(m + 1.0);
    return std::pair{m.to_data(), y.to_data()};  // m is read: it must exist
  };
  const auto [m_cpu, y_cpu] = f(fused_device());
  const auto [m_flex, y_flex] = f(eager_device());
  expect_close(m_cpu, m_flex);
  expect_close(y_cpu, y_flex);
}

TensorData volume(std::vector<std::size_t> shape, float scale) {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.53f * static_cast<float>(i));
  return TensorData(v, Shape(shape));
}

/// A 3x3 convolution's input, weights and bias, and the per-channel scale
/// and shift of an inference batch norm after it, as sine volumes; padding
/// 1 keeps the side.
struct ConvAndAffine {
  Tensor<4> x, w;
  Tensor<1> b;
  Tensor<4> scale, shift;
  burn::module::ConvOptions<2> opts{{1, 1}, {1, 1}, {1, 1}, 1};
};

ConvAndAffine conv_and_affine(const Device& d, std::size_t batch, std::size_t in, std::size_t out, std::size_t side) {
  return {Tensor<4>::from_data(volume({batch, in, side, side}, 1.0f), d),
          Tensor<4>::from_data(volume({out, in, 3, 3}, 0.4f), d),
          Tensor<1>::from_data(TensorData(volume({out}, 0.2f).to_vec<float>(), {out}), d),
          Tensor<4>::from_data(volume({1, out, 1, 1}, 1.5f), d), Tensor<4>::from_data(volume({1, out, 1, 1}, 0.3f), d)};
}

TEST(Epilogue, ConvWithChannelScaleShiftAndRelu) {
  // Inference batch norm folded into a per-channel scale and shift, then
  // relu: one oneDNN convolution with post-ops.
  auto chain = [](const Device& d) {
    const auto c = conv_and_affine(d, 2, 3, 5, 9);
    return burn::activation::relu(burn::module::conv2d(c.x, c.w, c.b, c.opts) * c.scale + c.shift);
  };
  const auto s = fused_against_flex(chain);
  EXPECT_EQ(s.fused_groups, 1u);
  EXPECT_EQ(s.ops_fused, 5u) << "conv, mul, add, compare and mask_fill in one kernel";
}

// With small weights beside its output (a first layer), the convolution
// scales its weights and bias by the per-channel factor instead of taking
// the multiply and the add as oneDNN post-ops, which slowed oneDNN's
// first-layer kernel 4x (src/backends/flex/conv.cpp, fold_channel_affine).
// The values agree with flex's op-by-op ones within float rounding, for a
// shift added or subtracted, a scalar factor, and post-ops after the folded
// ones (a residual as oneDNN's sum, relu, then a per-channel multiply,
// whose operand is renumbered).
TEST(Epilogue, ConvWithSmallWeightsFoldsTheChannelScaleIntoThem) {
  enum class Form { ScaleShiftRelu, ScalarScaleMinusShift, ThenResidualReluAndScale };
  for (Form form : {Form::ScaleShiftRelu, Form::ScalarScaleMinusShift, Form::ThenResidualReluAndScale}) {
    SCOPED_TRACE(static_cast<int>(form));
    auto chain = [form](const Device& d) {
      // 1 input channel, 8 outputs at 20 x 20 (batch 4): 12,800 outputs
      // for 72 weights.
      const auto c = conv_and_affine(d, 4, 1, 8, 20);
      auto y = burn::module::conv2d(c.x, c.w, c.b, c.opts);
      switch (form) {
        case Form::ScaleShiftRelu: return burn::activation::relu(y * c.scale + c.shift);
        case Form::ScalarScaleMinusShift: return y * 0.7 - c.shift;
        case Form::ThenResidualReluAndScale: {
          auto residual = Tensor<4>::from_data(volume({4, 8, 20, 20}, 0.7f), d);
          auto after = Tensor<4>::from_data(volume({1, 8, 1, 1}, 2.0f), d);
          return burn::activation::relu(y * c.scale + c.shift + residual) * after;
        }
      }
      throw std::logic_error("unreachable");
    };
    const auto s = fused_against_flex(chain);
    EXPECT_EQ(s.fused_groups, 1u);
    EXPECT_EQ(s.ops_eager, 0u) << "the whole chain in the convolution";
    // Scaled weights round differently from a scaled output: equal bits
    // would mean the group fell back to flex's kernels one by one.
    EXPECT_NE(bitwise_diff(chain(fused_device()).to_data(), chain(eager_device()).to_data()), "")
        << "the convolution did not take the chain";
  }
}

// A pool queues like the ops before it and runs alone at the drain: written
// as one expression, the convolution's output and the batch norm's are
// temporaries the pool no longer sees held, so the convolution still takes
// the scale, shift and relu, and the pool reads its result. Each pool kind.
TEST(Epilogue, APoolAroundTheChainLeavesItOneConvolution) {
  enum class Pool { Max, Avg, Adaptive };
  for (Pool pool : {Pool::Max, Pool::Avg, Pool::Adaptive}) {
    SCOPED_TRACE(static_cast<int>(pool));
    auto chain = [pool](const Device& d) {
      const auto c = conv_and_affine(d, 2, 3, 5, 10);
      switch (pool) {
        case Pool::Max:
          return burn::module::max_pool2d(
              burn::activation::relu(burn::module::conv2d(c.x, c.w, std::nullopt, c.opts) * c.scale + c.shift), {2, 2},
              {2, 2});
        case Pool::Avg:
          return burn::module::avg_pool2d(
              burn::activation::relu(burn::module::conv2d(c.x, c.w, std::nullopt, c.opts) * c.scale + c.shift), {2, 2},
              {2, 2});
        case Pool::Adaptive:
          return burn::module::adaptive_avg_pool2d(
              burn::activation::relu(burn::module::conv2d(c.x, c.w, std::nullopt, c.opts) * c.scale + c.shift), {3, 3});
      }
      throw std::logic_error("unreachable");
    };
    const auto s = fused_against_flex(chain);
    EXPECT_EQ(s.fused_groups, 1u);
    EXPECT_EQ(s.ops_fused, 5u) << "conv, mul, add, compare and mask_fill in one kernel";
    EXPECT_EQ(s.drains, 1u) << "the pool queued after them: one drain ran all";
    EXPECT_EQ(s.ops_eager, 1u) << "the pool, alone";
  }
}

TEST(Epilogue, BatchedMatmulWithScaleMaskAndReluIsOneMatmul) {
  // A batched matmul, a scalar division and a mask broadcast over the
  // batch, then relu: one kernel.
  auto run = [](const Device& d) {
    auto q = Tensor<3>::from_data(TensorData(grid(4 * 16, 32, 0.5f, 0.0f).to_vec<float>(), {4, 16, 32}), d);
    auto k = Tensor<3>::from_data(TensorData(grid(4 * 16, 32, 0.4f, 0.1f).to_vec<float>(), {4, 16, 32}), d);
    auto mask = Tensor<3>::from_data(TensorData(grid(16, 16, 2.0f, -1.0f).to_vec<float>(), {1, 16, 16}), d);
    return burn::activation::relu(q.matmul(k.swap_dims(1, 2)) / std::sqrt(32.0) + mask);
  };
  const auto s = fused_against_flex(run);
  EXPECT_EQ(s.fused_groups, 1u);
  EXPECT_EQ(s.ops_fused, 5u) << "matmul, div, add, compare and mask_fill in one kernel";
  EXPECT_EQ(s.ops_eager, 0u);
}

TEST(Epilogue, WithoutReluTheMatmulRunsPlain) {
  // Attention scores, q k^T / sqrt(d) + mask, then softmax: a matmul's
  // post-ops slow oneDNN's kernel more than they save unless relu is among
  // them, so the matmul runs alone, the scaling and the mask are one
  // elementwise group, and the softmax runs flex's kernel.
  auto run = [](const Device& d) {
    auto q = Tensor<3>::from_data(TensorData(grid(4 * 16, 32, 0.5f, 0.0f).to_vec<float>(), {4, 16, 32}), d);
    auto k = Tensor<3>::from_data(TensorData(grid(4 * 16, 32, 0.4f, 0.1f).to_vec<float>(), {4, 16, 32}), d);
    auto mask = Tensor<3>::from_data(TensorData(grid(16, 16, 2.0f, -1.0f).to_vec<float>(), {1, 16, 16}), d);
    return burn::activation::softmax(q.matmul(k.swap_dims(1, 2)) / std::sqrt(32.0) + mask, 2);
  };
  // The softmax drains the queue when it runs: count from the start.
  const Device cpu = fused_device();
  fusion::reset_stats(cpu);
  const auto got = run(cpu).to_data();
  const auto s = fusion::stats(cpu);
  EXPECT_EQ(bitwise_diff(got, run(eager_device()).to_data()), "");
  EXPECT_EQ(s.fused_groups, 1u) << "one elementwise group: div and add";
  EXPECT_EQ(s.ops_eager, 3u) << "k's transpose (a view), the matmul and the softmax, alone";
}

TEST(Epilogue, GeluJoinsTheBiasAddAsOneElementwiseStep) {
  // Gelu is an elementwise IR op with a flex row function: after a linear
  // layer it fuses with the bias add and the scale after it, flex's bits.
  // Without relu among the steps the matmul runs plain (see above).
  const Linear l = layer();
  auto run = [&](const Device& d) {
    auto h =
        Tensor<2>::from_data(l.x, d).matmul(Tensor<2>::from_data(l.w, d)) + Tensor<1>::from_data(l.b, d).unsqueeze<2>();
    return burn::activation::gelu(h) * 0.5;
  };
  const auto s = fused_against_flex(run);
  EXPECT_EQ(s.fused_groups, 1u);
  EXPECT_EQ(s.ops_fused, 3u) << "add, gelu and mul";
  EXPECT_EQ(s.ops_eager, 1u) << "the matmul";
}

TEST(Epilogue, BroadcastBatchMatmulAgreesWithFlex) {
  // One weight matrix for every batch entry ([1, k, n]), a per-batch bias.
  auto run = [](const Device& d) {
    auto x = Tensor<3>::from_data(TensorData(grid(3 * 8, 12, 1.0f, 0.0f).to_vec<float>(), {3, 8, 12}), d);
    auto w = Tensor<3>::from_data(TensorData(grid(12, 5, 0.3f, 0.0f).to_vec<float>(), {1, 12, 5}), d);
    auto b = Tensor<3>::from_data(TensorData(grid(3, 1, 0.2f, 0.0f).to_vec<float>(), {3, 1, 1}), d);
    return burn::activation::relu(x.matmul(w) * 2.0 + b);
  };
  expect_close(run(fused_device()).to_data(), run(eager_device()).to_data());
}

TEST(Epilogue, BatchedMatmulWithARowBiasIsOneMatmul) {
  // A bias with one value per output column, for a 3-D output, followed by
  // more steps: dense (oneDNN's bias argument) and as a strided view (every
  // other element of a longer vector; a post-op operand oneDNN must get
  // dense, or it reads the wrong elements).
  for (const bool strided : {false, true}) {
    SCOPED_TRACE(strided ? "strided bias" : "dense bias");
    auto run = [strided](const Device& d) {
      auto x = Tensor<3>::from_data(TensorData(grid(3 * 8, 12, 1.0f, 0.0f).to_vec<float>(), {3, 8, 12}), d);
      auto w = Tensor<3>::from_data(TensorData(grid(3 * 12, 5, 0.3f, 0.0f).to_vec<float>(), {3, 12, 5}), d);
      auto wide = Tensor<1>::from_data(TensorData(grid(1, 10, 0.5f, -0.1f).to_vec<float>(), {10}), d);
      auto bias = strided ? wide.slice({Range(0, 10, 2)}) : wide.slice({Range(0, 5)});
      return burn::activation::relu((x.matmul(w) + bias.reshape<3>({1, 1, 5})) * 0.5);
    };
    const auto s = fused_against_flex(run);
    EXPECT_EQ(s.fused_groups, 1u);
    EXPECT_EQ(s.ops_fused, 5u) << "matmul, add, mul, compare and mask_fill in one kernel";
  }
}

TEST(Epilogue, UnderAutodiffTheBiasAddJoinsTheReluGroup) {
  // relu's mask is kept for backward, so relu cannot be a post-op in
  // training, and a bias-only epilogue does not pay (see
  // WithoutReluTheMatmulRunsPlain): the matmul runs plain and the bias add,
  // compare and fill are one elementwise group. Autodiff nodes keep only
  // what backward reads, so nobody keeps the matmul result or the sum.
  const Linear l = layer();
  const Device ad = fused_device().autodiff();
  auto x = Tensor<2>::from_data(l.x, ad);
  auto w = Tensor<2>::from_data(l.w, ad).require_grad();
  auto b = Tensor<1>::from_data(l.b, ad).require_grad();
  auto bias = b.unsqueeze<2>();
  ad.sync();
  fusion::reset_stats(ad);
  auto y = burn::activation::relu(x.matmul(w) + bias);
  const auto got = y.to_data();
  const auto s = fusion::stats(ad);
  expect_close(got, l.run(eager_device()).to_data());
  EXPECT_EQ(s.ops_eager, 1u) << "the matmul, alone";
  EXPECT_EQ(s.fused_groups, 1u) << "add + compare + mask_fill";
  EXPECT_EQ(s.ops_fused, 3u);
  const auto grads = y.sum().backward();
  ASSERT_TRUE(w.grad(grads).has_value());
  ASSERT_TRUE(b.grad(grads).has_value());
}

TEST(Epilogue, LinearLayerTrainsTheSameAsOnFlex) {
  auto run = [](const Device& d) {
    const Device ad = d.autodiff();
    auto x = Tensor<2>::from_data(grid(16, 24, 1.0f, 0.0f), ad);
    auto w = Tensor<2>::from_data(grid(24, 8, 0.4f, 0.05f), ad).require_grad();
    auto b = Tensor<1>::from_data(TensorData(grid(1, 8, 0.3f, 0.0f).to_vec<float>(), {8}), ad).require_grad();
    auto loss = burn::activation::relu(x.matmul(w) + b.unsqueeze<2>()).sum();
    auto grads = loss.backward();
    return std::tuple{loss.to_data(), w.grad(grads)->to_data(), b.grad(grads)->to_data()};
  };
  const auto [l1, w1, b1] = run(fused_device());
  const auto [l2, w2, b2] = run(eager_device());
  expect_close(l1, l2);
  expect_close(w1, w2);
  expect_close(b1, b2);
}

}  // namespace
}  // namespace burn::fusion_test
