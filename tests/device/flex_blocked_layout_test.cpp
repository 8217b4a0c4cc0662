// flex keeps a convolution's output in oneDNN's blocked layout until
// something other than a convolution reads it (no reorder out of
// one convolution and into the next). White-box: the tests look at the
// storage (src/backends/host/cpu_tensor.hpp) to see the layout, and
// check values against the reference backend, which never blocks.
#include <burn_test.hpp>

#include <burn/activation.hpp>
#include <burn/module/ops.hpp>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "backends/host/cpu_tensor.hpp"
#if BURN_HAS_CPU
#include "fusion/lazy_tensor.hpp"
#endif

#if BURN_HAS_FLEX && BURN_HAS_NDARRAY

namespace {

using namespace burn;

TensorData wave(const Shape& shape, double scale, double phase) {
  std::vector<float> v(shape.num_elements());
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(scale * std::sin(0.37 * static_cast<double>(i) + phase));
  return TensorData(v, shape);
}

template <std::size_t D>
bool is_blocked(const Tensor<D>& t) {
  backend::PrimitivePtr p = t.ref()->primitive;
#if BURN_HAS_CPU
  if (const auto* lazy = dynamic_cast<const fusion::LazyTensor*>(p.get())) p = lazy->value;
#endif
  return host::as_cpu(p).is_opaque();
}

struct Net {
  TensorData x = wave({2, 16, 12, 12}, 1.0, 0.0);
  TensorData w1 = wave({32, 16, 3, 3}, 0.2, 0.5), w2 = wave({32, 32, 3, 3}, 0.15, 1.0);
  TensorData b1 = wave({32}, 0.1, 2.0), b2 = wave({32}, 0.1, 3.0);
  module::ConvOptions<2> pad1{{1, 1}, {1, 1}, {1, 1}};

  Tensor<4> conv1(const Device& d) const {
    return module::conv2d(Tensor<4>::from_data(x, d), Tensor<4>::from_data(w1, d), Tensor<1>::from_data(b1, d), pad1);
  }
  Tensor<4> conv2(const Tensor<4>& h) const {
    const Device& d = h.device();
    return module::conv2d(h, Tensor<4>::from_data(w2, d), Tensor<1>::from_data(b2, d), pad1);
  }
};

const Tolerance kConvTol = Tolerance::rel_abs(1e-4, 1e-4);

TEST(FlexBlockedLayout, ConvToConvStaysBlockedAndMatchesTheReference) {
  const Net net;
  const Device flex = Device::flex(), ref = Device::ndarray();
  auto h = net.conv1(flex);
  ASSERT_TRUE(is_blocked(h)) << "32 channels on this CPU: oneDNN writes a blocked layout";
  auto y = net.conv2(h);
  EXPECT_TRUE(is_blocked(h)) << "the second convolution read h without reordering it";
  // Values: through the blocked intermediate, and the intermediate itself.
  y.to_data().assert_approx_eq(net.conv2(net.conv1(ref)).to_data(), kConvTol);
  EXPECT_TRUE(is_blocked(h)) << "reading y does not touch h";
  h.to_data().assert_approx_eq(net.conv1(ref).to_data(), kConvTol);
  EXPECT_FALSE(is_blocked(h)) << "a read turns the tensor plain, once";
  h.to_data().assert_approx_eq(net.conv1(ref).to_data(), kConvTol);
}

TEST(FlexBlockedLayout, EveryOtherConsumerSeesRowMajorData) {
  const Net net;
  const Device flex = Device::flex(), ref = Device::ndarray();
  auto run = [&](const Device& d) {
    auto h = net.conv1(d);
    // A view, an elementwise op, a reduction and a convolution of the same
    // blocked tensor, in an order where the view comes first.
    auto flat = h.reshape<2>({2, 32 * 144});
    auto r = activation::relu(h);
    auto s = h.sum_dim(1);
    auto y = net.conv2(r);
    return std::tuple{flat.to_data(), r.to_data(), s.to_data(), y.to_data()};
  };
  const auto [f1, r1, s1, y1] = run(flex);
  const auto [f2, r2, s2, y2] = run(ref);
  f1.assert_approx_eq(f2, kConvTol);
  r1.assert_approx_eq(r2, kConvTol);
  s1.assert_approx_eq(s2, Tolerance::rel_abs(1e-4, 1e-3));
  y1.assert_approx_eq(y2, kConvTol);
}

TEST(FlexBlockedLayout, ThreadsReadingOneBlockedTensorAllSeeItsValues) {
  const Net net;
  const Device flex = Device::flex();
  const auto want = net.conv1(Device::ndarray()).to_data();
  for (int round = 0; round < 5; ++round) {
    auto h = net.conv1(flex);
    ASSERT_TRUE(is_blocked(h));
    std::vector<TensorData> got(4);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < got.size(); ++i)
      threads.emplace_back([&, i] { got[i] = (i % 2 ? (h * 1.0) : h).to_data(); });
    for (auto& t : threads) t.join();
    for (const auto& g : got) g.assert_approx_eq(want, kConvTol);
  }
}

TEST(FlexBlockedLayout, OneDimensionalAndHalfPrecisionChains) {
  const Device flex = Device::flex(), ref = Device::ndarray();
  // 1-D: oneDNN sees [N, C, L] descriptors.
  auto chain1d = [](const Device& d, DType dtype) {
    auto x = Tensor<3>::from_data(wave({2, 16, 40}, 1.0, 0.1), {d, dtype});
    auto w1 = Tensor<3>::from_data(wave({32, 16, 5}, 0.2, 0.2), {d, dtype});
    auto w2 = Tensor<3>::from_data(wave({16, 32, 3}, 0.2, 0.3), {d, dtype});
    const module::ConvOptions<1> o{{1}, {2}, {1}};
    return module::conv1d(module::conv1d(x, w1, std::nullopt, o), w2, std::nullopt, o);
  };
  chain1d(flex, DType::F32).to_data().assert_approx_eq(chain1d(ref, DType::F32).to_data(), kConvTol);
  // Half dtypes stage through f32 or run oneDNN natively; either way the
  // values are the reference's within half rounding.
  for (DType dtype : {DType::BF16, DType::F16}) {
    SCOPED_TRACE(dtype_name(dtype));
    chain1d(flex, dtype)
        .to_data()
        .convert(DType::F32)
        .assert_approx_eq(chain1d(ref, DType::F32).to_data(), Tolerance::rel_abs(0.05, 0.05));
  }
}

TEST(FlexBlockedLayout, ConvPoolConvStaysBlocked) {
  const Net net;
  const Device flex = Device::flex(), ref = Device::ndarray();
  auto run = [&](const Device& d, bool check_layout) {
    auto h = net.conv1(d);
    // k3 s2 p1 with dilation, and a plain k2 s2: the window rules of the
    // row-major loop (padding never selected).
    auto p1 = module::max_pool2d(h, {3, 3}, {2, 2}, {1, 1}, {1, 2});
    auto p2 = module::max_pool2d(h, {2, 2}, {2, 2});
    if (check_layout) {
      EXPECT_TRUE(is_blocked(p1)) << "the pool wrote the blocked layout it read";
      EXPECT_TRUE(is_blocked(h));
    }
    auto y = net.conv2(p2);
    return std::tuple{p1.to_data(), y.to_data()};
  };
  const auto [p_flex, y_flex] = run(flex, true);
  const auto [p_ref, y_ref] = run(ref, false);
  p_flex.assert_approx_eq(p_ref, kConvTol);
  y_flex.assert_approx_eq(y_ref, kConvTol);
}

TEST(FlexBlockedLayout, BlockedPoolPropagatesNaNAndIndexedPoolsSeeRowMajorData) {
  const Device flex = Device::flex(), ref = Device::ndarray();
  // A 1x1 identity convolution over 24 channels (not a multiple of 16: the
  // last channel block is padded) puts NaN and inf into a blocked tensor.
  std::vector<float> xs = wave({1, 24, 6, 6}, 1.0, 0.4).to_vec<float>();
  xs[5] = std::numeric_limits<float>::quiet_NaN();
  xs[36 * 23 + 7] = std::numeric_limits<float>::infinity();
  std::vector<float> eye(24 * 24, 0.0f);
  for (std::size_t c = 0; c < 24; ++c) eye[c * 24 + c] = 1.0f;
  auto run = [&](const Device& d) {
    auto h = module::conv2d(Tensor<4>::from_data(TensorData(xs, {1, 24, 6, 6}), d),
                            Tensor<4>::from_data(TensorData(eye, {24, 24, 1, 1}), d), std::nullopt);
    auto pooled = module::max_pool2d(h, {2, 2}, {2, 2});
    if (d == flex) {
      EXPECT_TRUE(is_blocked(pooled)) << "pooled in the convolution's layout";
    }
    auto [values, indices] = module::max_pool2d_with_indices(h, {3, 3}, {1, 1}, {1, 1});
    return std::tuple{pooled.to_data(), values.to_data(), indices.to_data()};
  };
  const auto [a1, b1, i1] = run(flex);
  const auto [a2, b2, i2] = run(ref);
  const auto got = a1.to_vec<float>(), want = a2.to_vec<float>();
  ASSERT_EQ(got.size(), want.size());
  EXPECT_TRUE(std::isnan(got[0])) << "the NaN's window";
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    else EXPECT_FLOAT_EQ(got[i], want[i]) << "at " << i;
  }
  b1.assert_approx_eq(b2, kConvTol);
  i1.assert_eq(i2);
}

#if BURN_HAS_AUTODIFF
TEST(FlexBlockedLayout, GradientsThroughABlockedChain) {
  const Net net;
  auto grads_on = [&](const Device& base) {
    const Device d = base.autodiff();
    auto w1 = Tensor<4>::from_data(net.w1, d).require_grad();
    auto x = Tensor<4>::from_data(net.x, d);
    auto h = module::conv2d(x, w1, std::nullopt, net.pad1);
    auto y = net.conv2(h);
    auto g = (y * y).sum().backward();
    return w1.grad(g)->to_data();
  };
  grads_on(Device::flex()).assert_approx_eq(grads_on(Device::ndarray()), Tolerance::rel_abs(1e-3, 1e-3));
}
#endif

#if BURN_HAS_CPU
TEST(FlexBlockedLayout, FusedConvReluFeedsTheNextConvBlocked) {
  // On cpu the epilogue fuser runs conv + relu as one oneDNN convolution;
  // its output stays blocked for the next convolution too.
  const Net net;
  const Device cpu = Device::cpu();
  auto h = activation::relu(net.conv1(cpu));
  cpu.sync();
  EXPECT_TRUE(is_blocked(h));
  auto y = net.conv2(h);
  const Device ref = Device::ndarray();
  y.to_data().assert_approx_eq(net.conv2(activation::relu(net.conv1(ref))).to_data(), kConvTol);
}
#endif

}  // namespace

#endif
