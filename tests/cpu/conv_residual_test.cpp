// A convolution followed by a residual add (and relu), as in every residual
// network: on Device::cpu() one oneDNN convolution that accumulates onto the
// residual (its sum post-op), in the residual's own storage when nobody else
// can see that tensor. The values agree with flex's; a residual someone
// still holds is never written over.
#include <burn/activation.hpp>
#include <cmath>
#include <vector>

#include "backends/cpu/fused_epilogue.hpp"
#include "backends/flex/dnnl_engine.hpp"
#include "fusion_support.hpp"

namespace burn::fusion_test {
namespace {

using Conv2dOptions = burn::module::ConvOptions<2>;

TensorData sine_volume(std::vector<std::size_t> shape, float scale, float phase) {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + phase);
  return TensorData(v, Shape(shape));
}

/// Agreement within float rounding: with post-ops oneDNN may pick another
/// kernel, which sums in another order.
void expect_near_flex(const TensorData& got, const TensorData& want) {
  const auto g = got.to_vec<float>(), w = want.to_vec<float>();
  ASSERT_EQ(g.size(), w.size());
  for (std::size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 2e-5 * (1.0 + std::abs(w[i]))) << "at " << i;
}

/// A 3x3 convolution of 16 channels with bias and padding 1 (the shape of
/// a residual block's), its weights fixed by `seed`.
struct Conv3x3 {
  Tensor<4> w;
  Tensor<1> b;
  Conv3x3(const Device& d, float seed)
      : w(Tensor<4>::from_data(sine_volume({16, 16, 3, 3}, 0.08f, seed), d)),
        b(Tensor<1>::from_data(TensorData(sine_volume({16}, 0.1f, seed + 1.0f).to_vec<float>(), {16}), d)) {}
  Tensor<4> operator()(const Tensor<4>& x) const {
    return burn::module::conv2d(x, w, b, Conv2dOptions({1, 1}, {1, 1}, {1, 1}, 1));
  }
};

/// relu(conv2(relu(conv1(h))) + h): a residual network's basic block.
Tensor<4> basic_block(Tensor<4> h, const Conv3x3& conv1, const Conv3x3& conv2) {
  auto inner = burn::activation::relu(conv1(h));
  return burn::activation::relu(conv2(inner) + std::move(h));
}

/// The input of the blocks below: itself a convolution's output, so it is
/// in the layout oneDNN's convolutions write.
Tensor<4> stem(const Device& d) {
  const Conv3x3 conv(d, 0.5f);
  return burn::activation::relu(conv(Tensor<4>::from_data(sine_volume({2, 16, 10, 10}, 1.0f, 0.0f), d)));
}

cpu::EpilogueCounters counters_since(const cpu::EpilogueCounters& before) {
  const auto now = cpu::epilogue_counters();
  return {now.groups_op_by_op - before.groups_op_by_op, now.residuals_in_place - before.residuals_in_place};
}

TEST(ConvResidual, BlocksAccumulateOntoTheirResidualInPlace) {
  auto run = [](const Device& d) {
    const Conv3x3 a1(d, 1.0f), a2(d, 2.0f), b1(d, 3.0f), b2(d, 4.0f);
    // Two blocks in a row: the second block's residual is the first's
    // output, which itself took over the stem's storage.
    return basic_block(basic_block(stem(d), a1, a2), b1, b2).to_data();
  };
  const auto before = cpu::epilogue_counters();
  const auto got = run(fused_device());
  const auto did = counters_since(before);
  expect_near_flex(got, run(eager_device()));
  EXPECT_EQ(did.groups_op_by_op, 0u) << "every conv + add + relu is one convolution";
  EXPECT_EQ(did.residuals_in_place, 2u) << "each block writes into its residual's storage";
}

TEST(ConvResidual, AResidualSomeoneHoldsIsCopiedNotOverwritten) {
  auto run = [](const Device& d) {
    const Conv3x3 c1(d, 1.0f), c2(d, 2.0f);
    const auto h = stem(d);
    const auto y = burn::activation::relu(c2(burn::activation::relu(c1(h))) + h);
    return std::pair{y.to_data(), h.to_data()};  // h is read after y: it must be intact
  };
  const auto before = cpu::epilogue_counters();
  const auto [y_cpu, h_cpu] = run(fused_device());
  const auto did = counters_since(before);
  const auto [y_flex, h_flex] = run(eager_device());
  expect_near_flex(y_cpu, y_flex);
  expect_near_flex(h_cpu, h_flex);
  EXPECT_EQ(did.groups_op_by_op, 0u);
  EXPECT_EQ(did.residuals_in_place, 0u);
}

/// Whether oneDNN has a fast (not reference or gemm) kernel for the
/// convolution of Conv3x3 on a [2, 16, 10, 10] input with the post-ops
/// sum(scale) + relu, as the epilogue fuser asks for it. oneDNN 2.6's AVX2
/// convolutions take a sum post-op only with scale 1.
bool fast_kernel_for_sum_relu(float scale) {
  using dnnl::memory;
  const memory::desc any4({2, 16, 10, 10}, memory::data_type::f32, memory::format_tag::any);
  const memory::desc w({16, 16, 3, 3}, memory::data_type::f32, memory::format_tag::any);
  const memory::desc b({16}, memory::data_type::f32, memory::format_tag::a);
  dnnl::post_ops ops;
  ops.append_sum(scale);
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             any4, w, b, any4, {1, 1}, {1, 1}, {1, 1});
  return !flex::dnn::is_fallback(dnnl::convolution_forward::primitive_desc(desc, attr, flex::dnn::engine()));
}

TEST(ConvResidual, SubtractedAndHostResiduals) {
  // conv(x) - r accumulates r scaled by -1; a residual made from host data
  // is row-major, and is reordered into the convolution's layout.
  auto subtracted = [](const Device& d) {
    const Conv3x3 c(d, 1.5f);
    auto r = Tensor<4>::from_data(sine_volume({2, 16, 10, 10}, 0.7f, 2.0f), d);
    return burn::activation::relu(c(stem(d)) - std::move(r)).to_data();
  };
  auto host_residual = [](const Device& d) {
    const Conv3x3 c(d, 1.5f);
    auto s = Tensor<4>::from_data(sine_volume({2, 16, 10, 10}, 0.4f, 1.0f), d);
    return (c(stem(d)) + std::move(s)).to_data();  // no relu after the add
  };
  auto before = cpu::epilogue_counters();
  const auto y_cpu = subtracted(fused_device());
  const auto did_subtracted = counters_since(before);
  before = cpu::epilogue_counters();
  const auto z_cpu = host_residual(fused_device());
  const auto did_host = counters_since(before);
  expect_near_flex(y_cpu, subtracted(eager_device()));
  expect_near_flex(z_cpu, host_residual(eager_device()));
  // Where oneDNN has no fast kernel for sum(-1) + relu (its AVX2
  // convolutions), the fuser runs that group op by op rather than send the
  // convolution to oneDNN's reference kernel.
  EXPECT_EQ(did_subtracted.groups_op_by_op, fast_kernel_for_sum_relu(-1.0f) ? 0u : 1u);
  EXPECT_EQ(did_host.groups_op_by_op, 0u);
}

TEST(ConvResidual, AConvolutionOfItsOwnResidual) {
  // relu(conv(x) + x): x is the convolution's input too, so its storage
  // must not become the output the convolution writes while reading x.
  auto run = [](const Device& d) {
    const Conv3x3 c(d, 2.5f);
    auto x = stem(d);
    auto y = c(x);
    return burn::activation::relu(std::move(y) + std::move(x)).to_data();
  };
  const auto before = cpu::epilogue_counters();
  const auto got = run(fused_device());
  const auto did = counters_since(before);
  expect_near_flex(got, run(eager_device()));
  EXPECT_EQ(did.residuals_in_place, 0u);
}

TEST(ConvResidual, ABroadcastResidualOfTheOutputsShape) {
  // A per-channel tensor expanded to the output's shape: a view with zero
  // strides, copied densely before the convolution accumulates onto it.
  auto run = [](const Device& d) {
    const Conv3x3 c(d, 3.5f);
    auto r = Tensor<4>::from_data(sine_volume({1, 16, 1, 1}, 1.0f, 0.3f), d).expand({2, 16, 10, 10});
    return burn::activation::relu(c(stem(d)) + r).to_data();
  };
  expect_near_flex(run(fused_device()), run(eager_device()));
}

TEST(ConvResidual, GradientsThroughAResidualBlockMatchFlex) {
  // Under autodiff the residual is kept for the backward pass (never taken
  // over); the gradients of both convolutions and of the input agree.
  auto run = [](const Device& d) {
    const Device ad = d.autodiff();
    Conv3x3 c1(ad, 1.0f), c2(ad, 2.0f);
    c1.w = c1.w.require_grad();
    c2.w = c2.w.require_grad();
    auto x = Tensor<4>::from_data(sine_volume({2, 16, 10, 10}, 1.0f, 0.0f), ad).require_grad();
    auto h = burn::activation::relu(c1(x));
    auto loss = burn::activation::relu(c2(h) + h).sum();
    auto grads = loss.backward();
    return std::tuple{loss.to_data(), c1.w.grad(grads)->to_data(), c2.w.grad(grads)->to_data(),
                      x.grad(grads)->to_data()};
  };
  const auto [l1, g11, g21, gx1] = run(fused_device());
  const auto [l2, g12, g22, gx2] = run(eager_device());
  expect_near_flex(l1, l2);
  expect_near_flex(g11, g12);
  expect_near_flex(g21, g22);
  expect_near_flex(gx1, gx2);
}

}  // namespace
}  // namespace burn::fusion_test
