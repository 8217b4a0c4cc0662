// flex keeps a convolution's output in oneDNN's blocked layout until
// something other than a convolution reads it (no reorder out of
// one convolution and into the next). White-box: the tests look at the
// storage (src/backends/host/cpu_tensor.hpp) to see the layout, and
// check values against the reference backend, which never blocks.
#include <burn_test.hpp>

#include <burn/activation.hpp>
#include <burn/detail/ops.hpp>
#include <burn/module/ops.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

#include "backends/flex/dnnl_engine.hpp"
#include "backends/flex/layout_elementwise.hpp"
#include "backends/flex/packed_weights.hpp"
#include "backends/host/allocator.hpp"
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

template <std::size_t D, class K>
const host::CpuTensor& storage(const Tensor<D, K>& t) {
  backend::PrimitivePtr p = t.ref()->primitive;
#if BURN_HAS_CPU
  if (const auto* lazy = dynamic_cast<const fusion::LazyTensor*>(p.get())) p = lazy->value;
#endif
  return host::as_cpu(p);
}

template <std::size_t D>
bool is_blocked(const Tensor<D>& t) {
  return storage(t).is_opaque();
}

template <std::size_t D, class K>
bool is_channels_last(const Tensor<D, K>& t) {
  return flex::dnn::activation_layout(storage(t)) == flex::dnn::ActivationLayout::ChannelsLast;
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

// The blocked pool walks a row of windows at a time, a vector of channels
// per load, and the channels past the last whole vector one by one: channel
// counts that leave such a tail in either layout oneDNN writes (24, 40),
// padding, strides and a dilation along the row. A max is exact, so the
// values equal the reference's.
TEST(FlexBlockedLayout, BlockedPoolWindowsEqualTheReference) {
  const Device flex = Device::flex(), ref = Device::ndarray();
  for (std::size_t channels : {24, 40}) {
    const TensorData x = wave({2, channels, 11, 13}, 1.0, 0.2);
    std::vector<float> eye(channels * channels, 0.0f);
    for (std::size_t c = 0; c < channels; ++c) eye[c * channels + c] = 1.0f;
    const TensorData w(eye, {channels, channels, 1, 1});
    auto run = [&](const Device& d) {
      auto h = module::conv2d(Tensor<4>::from_data(x, d), Tensor<4>::from_data(w, d), std::nullopt);
      auto a = module::max_pool2d(h, {3, 3}, {2, 2}, {1, 1}, {1, 2});
      auto b = module::max_pool2d(h, {2, 3}, {1, 2}, {1, 0});
      if (d == flex) {
        EXPECT_TRUE(is_blocked(a) && is_blocked(b)) << "pooled in the convolution's layout";
      }
      return std::tuple{a.to_data(), b.to_data()};
    };
    SCOPED_TRACE(channels);
    const auto [a1, b1] = run(flex);
    const auto [a2, b2] = run(ref);
    a1.assert_eq(a2);
    b1.assert_eq(b2);
  }
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

#if BURN_HAS_AUTODIFF
TEST(FlexBlockedLayout, ConvolutionBackwardReordersTheOutputGradientOnce) {
  // The input gradient (a transposed convolution) reorders the output
  // gradient into oneDNN's blocked layout and keeps that copy on it; the
  // weight gradient reads the copy and drops it. The input gradient stays
  // blocked.
  const Net net;
  const Device flex = Device::flex();
  auto dy = Tensor<4>::from_data(wave({2, 32, 12, 12}, 1.0, 0.7), flex);
  const auto w = Tensor<4>::from_data(net.w1, flex);
  auto dx = module::conv_transpose2d(dy, w, std::nullopt, {{1, 1}, {1, 1}, {0, 0}, {1, 1}, 1});
  EXPECT_FALSE(is_blocked(dy)) << "the gradient itself stays row-major for every other reader";
  EXPECT_TRUE(storage(dy).kept_copy().layout) << "its blocked copy is kept for the weight gradient";
  EXPECT_TRUE(is_blocked(dx));
  const auto ref = Device::ndarray();
  const auto want = module::conv_transpose2d(Tensor<4>::from_data(dy.to_data(), ref), Tensor<4>::from_data(net.w1, ref),
                                             std::nullopt, {{1, 1}, {1, 1}, {0, 0}, {1, 1}, 1});
  dx.to_data().assert_approx_eq(want.to_data(), kConvTol);
  // A second convolution-family kernel reading dy gets the kept copy's
  // values: as its input, and elementwise next to it.
  module::conv2d(dy, Tensor<4>::from_data(net.w2, flex), std::nullopt, net.pad1)
      .to_data()
      .assert_approx_eq(module::conv2d(Tensor<4>::from_data(dy.to_data(), ref), Tensor<4>::from_data(net.w2, ref),
                                       std::nullopt, net.pad1)
                            .to_data(),
                        kConvTol);
  (dy + 1.0).to_data().assert_approx_eq((Tensor<4>::from_data(dy.to_data(), ref) + 1.0).to_data(), kConvTol);
  // The weight gradient reads the copy last and drops it.
  const ir::Op weight_grad = ir::ConvWeightGrad{{3, 3}, {1, 1}, {1, 1}, {1, 1}, 1};
  auto dw_on = [&](const Tensor<4>& g) {
    const Device& d = g.device();
    return Tensor<4>(detail::execute1(weight_grad, {Tensor<4>::from_data(net.x, d).ref(), g.ref()})).to_data();
  };
  dw_on(dy).assert_approx_eq(dw_on(Tensor<4>::from_data(dy.to_data(), ref)), Tolerance::rel_abs(1e-3, 1e-3));
  EXPECT_FALSE(storage(dy).kept_copy().layout) << "the weight gradient is the copy's last reader";

  // Through autodiff, with every way the output gradient arrives: the
  // broadcast ones of a plain sum (a strided view), a dense product, and
  // the blocked input gradient of a second convolution.
  auto grads_on = [&](const Device& base, int loss) {
    const Device d = base.autodiff();
    auto x = Tensor<4>::from_data(net.x, d).require_grad();
    auto w1 = Tensor<4>::from_data(net.w1, d).require_grad();
    auto b1 = Tensor<1>::from_data(net.b1, d).require_grad();
    auto h = module::conv2d(x, w1, b1, net.pad1);
    auto y = loss == 2 ? net.conv2(h) : h;
    auto g = (loss == 0 ? y.sum() : (y * y).sum()).backward();
    return std::tuple{x.grad(g)->to_data(), w1.grad(g)->to_data(), b1.grad(g)->to_data()};
  };
  for (int loss = 0; loss < 3; ++loss) {
    SCOPED_TRACE(loss);
    const auto [gx, gw, gb] = grads_on(flex, loss);
    const auto [rx, rw, rb] = grads_on(ref, loss);
    gx.assert_approx_eq(rx, Tolerance::rel_abs(1e-3, 1e-3));
    gw.assert_approx_eq(rw, Tolerance::rel_abs(1e-3, 1e-3));
    gb.assert_approx_eq(rb, Tolerance::rel_abs(1e-3, 1e-3));
  }
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

// ---- activation layouts through elementwise ops ------------------------------------------
// oneDNN's fast convolutions write 64 channels channels-last (NHWC) or
// channel-blocked (nChw16c) on CPUs with AVX-512 and nChw8c with AVX2; the
// elementwise ops between two convolutions keep whichever of these layouts
// the convolution wrote. Where it writes none of them, only the values are
// checked (and the test says so).

/// The activation layout oneDNN writes this convolution in on this CPU.
template <class Conv>
std::optional<flex::dnn::ActivationLayout> conv_layout(const Conv& conv, const TensorData& x) {
  const auto layout = flex::dnn::activation_layout(storage(conv(Tensor<4>::from_data(x, Device::flex()))));
  if (!layout)
    std::cout << "[   NOTE   ] oneDNN writes this 64-channel convolution in none of the activation layouts on "
                 "this CPU: the layout checks do not apply, the values are still compared\n";
  return layout;
}

template <std::size_t D, class K>
bool has_layout(const Tensor<D, K>& t, flex::dnn::ActivationLayout layout) {
  return flex::dnn::activation_layout(storage(t)) == layout;
}

struct Block {
  TensorData x = wave({2, 64, 10, 10}, 1.0, 0.3);
  TensorData w = wave({64, 64, 3, 3}, 0.05, 0.9);
  TensorData b = wave({64}, 0.1, 1.7);
  TensorData scale = wave({1, 64, 1, 1}, 1.0, 0.2), shift = wave({1, 64, 1, 1}, 0.5, 2.2);
  module::ConvOptions<2> pad1{{1, 1}, {1, 1}, {1, 1}};

  Tensor<4> conv(const Tensor<4>& h) const {
    const Device& d = h.device();
    return module::conv2d(h, Tensor<4>::from_data(w, d), Tensor<1>::from_data(b, d), pad1);
  }
};

TEST(FlexActivationLayout, ElementwiseOpsKeepTheLayoutAndTheValues) {
  const Block blk;
  const Device flex = Device::flex(), ref = Device::ndarray();
  const auto layout = conv_layout([&](const Tensor<4>& x) { return blk.conv(x); }, blk.x);
  auto run = [&](const Device& d, bool check) {
    auto h = blk.conv(Tensor<4>::from_data(blk.x, d));
    check = check && layout;
    // A per-channel affine map (an unfolded batch norm), relu, a residual
    // add of two channels-last tensors, a comparison (bool result), a
    // select, a clamp, a unary op and a cast.
    auto affine = h * Tensor<4>::from_data(blk.scale, d) + Tensor<4>::from_data(blk.shift, d);
    auto r = activation::relu(affine);
    auto h2 = blk.conv(r);
    auto sum = h2 + h;
    auto positive = sum.greater_elem(0.25);
    auto picked = sum.mask_where(positive, h2);
    auto clamped = picked.clamp(-0.5, 0.5);
    auto e = clamped.exp();
    auto half = e.cast(DType::BF16);
    if (check) {
      for (const Tensor<4>* t : {&affine, &r, &h2, &sum, &picked, &clamped, &e})
        EXPECT_TRUE(has_layout(*t, *layout)) << "an elementwise result keeps the layout";
      EXPECT_TRUE(has_layout(positive, *layout)) << "a bool result keeps it too";
      EXPECT_TRUE(has_layout(half, *layout));
    }
    return std::tuple{affine.to_data(),
                      r.to_data(),
                      sum.to_data(),
                      positive.to_data(),
                      picked.to_data(),
                      e.to_data(),
                      half.to_data().convert(DType::F32)};
  };
  const auto got = run(flex, true);
  const auto want = run(ref, false);
  std::get<0>(got).assert_approx_eq(std::get<0>(want), kConvTol);
  std::get<1>(got).assert_approx_eq(std::get<1>(want), kConvTol);
  std::get<2>(got).assert_approx_eq(std::get<2>(want), kConvTol);
  // Values this close to the threshold could flip with rounding; none are.
  std::get<3>(got).assert_eq(std::get<3>(want));
  std::get<4>(got).assert_approx_eq(std::get<4>(want), kConvTol);
  std::get<5>(got).assert_approx_eq(std::get<5>(want), kConvTol);
  std::get<6>(got).assert_approx_eq(std::get<6>(want), Tolerance::rel_abs(1e-2, 1e-2));
}

TEST(FlexActivationLayout, OtherConsumersAndMismatchedOperandsSeeRowMajorData) {
  const Block blk;
  const Device flex = Device::flex(), ref = Device::ndarray();
  const auto layout = conv_layout([&](const Tensor<4>& x) { return blk.conv(x); }, blk.x);
  auto run = [&](const Device& d, bool check) {
    auto h = blk.conv(Tensor<4>::from_data(blk.x, d));
    check = check && layout;
    // A full-size plain operand, a broadcast over the batch, a permuted
    // view, a reduction, and a rank-changing reshape.
    auto plain = Tensor<4>::from_data(wave({2, 64, 10, 10}, 1.0, 0.8), d);
    auto with_plain = h * plain;
    auto batch_broadcast = h + Tensor<4>::from_data(wave({1, 64, 10, 10}, 1.0, 1.1), d);
    auto transposed = h.swap_dims(2, 3) * 2.0;
    auto pooled = h.mean_dim(3);
    auto flat = h.reshape<2>({2, 6400}) * 3.0;
    if (check) {
      EXPECT_TRUE(has_layout(with_plain, *layout)) << "a plain operand is read through a permuted view";
      EXPECT_FALSE(is_blocked(transposed)) << "a permuted input is not the convolution's layout";
    }
    return std::tuple{with_plain.to_data(), batch_broadcast.to_data(), transposed.to_data(), pooled.to_data(),
                      flat.to_data()};
  };
  const auto got = run(flex, true);
  const auto want = run(ref, false);
  std::get<0>(got).assert_approx_eq(std::get<0>(want), kConvTol);
  std::get<1>(got).assert_approx_eq(std::get<1>(want), kConvTol);
  std::get<2>(got).assert_approx_eq(std::get<2>(want), kConvTol);
  std::get<3>(got).assert_approx_eq(std::get<3>(want), kConvTol);
  std::get<4>(got).assert_approx_eq(std::get<4>(want), kConvTol);
}

#if BURN_HAS_AUTODIFF
TEST(FlexActivationLayout, GradientsThroughABlockInTheConvolutionsLayout) {
  const Block blk;
  auto grads_on = [&](const Device& base) {
    const Device d = base.autodiff();
    auto w = Tensor<4>::from_data(blk.w, d).require_grad();
    auto x = Tensor<4>::from_data(blk.x, d).require_grad();
    auto h = module::conv2d(x, w, std::nullopt, blk.pad1);
    auto y = activation::relu(h * Tensor<4>::from_data(blk.scale, d)) + h;
    auto g = (y * y).sum().backward();
    return std::pair{w.grad(g)->to_data(), x.grad(g)->to_data()};
  };
  const auto [gw, gx] = grads_on(Device::flex());
  const auto [rw, rx] = grads_on(Device::ndarray());
  gw.assert_approx_eq(rw, Tolerance::rel_abs(1e-3, 1e-3));
  gx.assert_approx_eq(rx, Tolerance::rel_abs(1e-3, 1e-3));
}
#endif

#if BURN_HAS_CPU
TEST(FlexActivationLayout, FusedConvAddReluOnCpuMatchesTheReference) {
  // The residual block of a ResNet on the fusing device: conv + relu fused,
  // conv + residual add + relu either fused or run one by one (a residual
  // operand oneDNN's fast kernel cannot read is not fused).
  const Block blk;
  const auto layout = conv_layout([&](const Tensor<4>& x) { return blk.conv(x); }, blk.x);
  auto run = [&](const Device& d) {
    auto x = Tensor<4>::from_data(blk.x, d);
    auto h = activation::relu(blk.conv(x));
    auto y = activation::relu(blk.conv(h) + h);
    // exp is no epilogue step: the convolution runs alone and the group
    // after it reads its channels-last output as is.
    auto c = blk.conv(y);
    auto z = c.exp() * 0.5 + c;
    if (d == Device::cpu() && layout) {
      d.sync();
      EXPECT_TRUE(has_layout(h, *layout)) << "the fused conv + relu wrote the convolution's layout";
      EXPECT_TRUE(has_layout(y, *layout)) << "the residual add and relu kept it";
      EXPECT_TRUE(has_layout(z, *layout)) << "the fused elementwise group kept it";
    }
    return std::pair{y.to_data(), z.to_data()};
  };
  const auto [y, z] = run(Device::cpu());
  const auto [y_ref, z_ref] = run(Device::ndarray());
  y.assert_approx_eq(y_ref, kConvTol);
  z.assert_approx_eq(z_ref, Tolerance::rel_abs(1e-4, 1e-3));
}
#endif

// ---- Float32Precision::High: Winograd convolutions ----------------------------------------

/// Sets a device's float32 precision for one scope (devices are process-wide).
class PrecisionScope {
 public:
  PrecisionScope(Device d, Float32Precision p) : d_(std::move(d)), old_(d_.float32_precision()) {
    d_.set_float32_precision(p);
  }
  ~PrecisionScope() { d_.set_float32_precision(old_); }
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  Device d_;
  Float32Precision old_;
};

TEST(FlexFloat32Precision, TheSettingIsPerDeviceAndAPermission) {
  for (const Device& d : {Device::flex(), Device::ndarray()})
    EXPECT_EQ(d.float32_precision(), Float32Precision::Highest);
  {
    const PrecisionScope high(Device::flex(), Float32Precision::High);
    EXPECT_EQ(Device::flex().float32_precision(), Float32Precision::High);
    EXPECT_EQ(Device::flex().autodiff().float32_precision(), Float32Precision::High)
        << "one device, with or without autodiff";
#if BURN_HAS_CPU
    EXPECT_EQ(Device::cpu().float32_precision(), Float32Precision::Highest) << "cpu has its own setting";
#endif
    // A device without faster algorithms keeps computing, and saying, Highest.
    Device::ndarray().set_float32_precision(Float32Precision::High);
    EXPECT_EQ(Device::ndarray().float32_precision(), Float32Precision::Highest);
  }
  EXPECT_EQ(Device::flex().float32_precision(), Float32Precision::Highest);
}

TEST(FlexFloat32Precision, HighRunsWinogradConvolutionsInTheBlockedLayout) {
  const Block blk;
  const Device ref = Device::ndarray();
  // oneDNN has Winograd kernels for AVX-512 only (where it writes this
  // convolution NHWC); elsewhere High computes as Highest, and only the
  // values are checked.
  const bool avx512 =
      conv_layout([&](const Tensor<4>& x) { return blk.conv(x); }, blk.x) == flex::dnn::ActivationLayout::ChannelsLast;
  std::vector<Device> devices{Device::flex()};
#if BURN_HAS_CPU
  devices.push_back(Device::cpu());
#endif
  auto run = [&](const Device& d) {
    auto x = Tensor<4>::from_data(blk.x, d);
    auto h = activation::relu(blk.conv(x) * Tensor<4>::from_data(blk.scale, d) + Tensor<4>::from_data(blk.shift, d));
    auto y = activation::relu(blk.conv(h) + h);
    auto z = module::max_pool2d(y, {2, 2}, {2, 2});
    d.sync();
    return std::tuple{h, y, z};
  };
  const auto [h_ref, y_ref, z_ref] = run(ref);
  for (const Device& d : devices) {
    SCOPED_TRACE(d.to_string());
    if (avx512) {
      const auto [h, y, z] = run(d);
      EXPECT_TRUE(is_channels_last(h)) << "Highest: the direct kernel's NHWC";
    }
    const PrecisionScope high(d, Float32Precision::High);
    const auto [h, y, z] = run(d);
    // oneDNN's Winograd kernel writes nChw16c, and the affine map, relu,
    // residual add and pool ran in the layouts the convolutions left. On cpu
    // the first convolution carries the affine map and relu as post-ops,
    // which the Winograd kernel does not take: it stays direct (NHWC), and
    // the residual add converts one operand to the other's layout.
    if (!avx512) {
      // Values only (below).
    } else if (d == Device::flex()) {
      for (const auto* t : {&h, &y, &z})
        EXPECT_EQ(flex::dnn::activation_layout(storage(*t)), flex::dnn::ActivationLayout::Blocked16);
    } else {
      EXPECT_TRUE(is_channels_last(h));
      for (const auto* t : {&y, &z}) EXPECT_TRUE(flex::dnn::activation_layout(storage(*t)).has_value());
    }
    // Values within Winograd's rounding (against a double reference,
    // 0.3-1.6e-6 of the largest output; the direct kernel's 0.8-2.1e-6).
    const Tolerance winograd = Tolerance::rel_abs(1e-4, 1e-4);
    h.to_data().assert_approx_eq(h_ref.to_data(), winograd);
    y.to_data().assert_approx_eq(y_ref.to_data(), winograd);
    z.to_data().assert_approx_eq(z_ref.to_data(), winograd);
  }
}

// ---- packed weights -----------------------------------------------------------------------
// A convolution's weights reordered for oneDNN are kept while the weights
// live (src/backends/flex/packed_weights.hpp).

TEST(FlexPackedWeights, ReusedWeightsAreCachedAndNeverStale) {
  const Block blk;
  const Device flex = Device::flex(), ref = Device::ndarray();
  const auto x_ref = Tensor<4>::from_data(blk.x, ref);
  const auto w_ref = Tensor<4>::from_data(blk.w, ref);
  auto conv_ref = [&](double factor) {
    return module::conv2d(x_ref, w_ref * factor, std::nullopt, blk.pad1).to_data();
  };
  const auto x = Tensor<4>::from_data(blk.x, flex);
  flex::dnn::clear_packed_weights();
  {
    auto w = Tensor<4>::from_data(blk.w, flex);
    auto conv = [&] { return module::conv2d(x, w, std::nullopt, blk.pad1).to_data(); };
    conv().assert_approx_eq(conv_ref(1.0), kConvTol);  // first use: reordered, not kept
    EXPECT_EQ(flex::dnn::packed_weights_bytes(), 0u);
    // Scaling the sole handle may reuse its storage: the same buffer now
    // holds other values, and the next use must see them.
    w = std::move(w) * 2.0;
    conv().assert_approx_eq(conv_ref(2.0), kConvTol);
    const std::size_t kept = flex::dnn::packed_weights_bytes();
    EXPECT_GE(kept, 64u * 64 * 9 * sizeof(float)) << "the second use keeps a packed copy";
    conv().assert_approx_eq(conv_ref(2.0), kConvTol);  // from the cache
    // A kept copy pins its source: scaling now writes a new buffer.
    w = std::move(w) * 0.5;
    conv().assert_approx_eq(conv_ref(1.0), kConvTol);
    conv().assert_approx_eq(conv_ref(1.0), kConvTol);
  }
  // Once the weights are gone, the next convolution drops their copies.
  const auto other = Tensor<4>::from_data(wave({64, 64, 3, 3}, 0.05, 0.1), flex);
  (void)module::conv2d(x, other, std::nullopt, blk.pad1).to_data();
  EXPECT_EQ(flex::dnn::packed_weights_bytes(), 0u);
}

// One buffer packed into two layouts (a matrix read as itself and as its
// transpose; a layer's weights for the forward and for the backward
// convolution) has two entries, each holding it: once the weights are gone,
// both go, rather than pinning each other until the cache is full.
TEST(FlexPackedWeights, ABufferPackedInTwoLayoutsLeavesWithItsWeights) {
  using dnnl::memory;
  flex::dnn::clear_packed_weights();
  const flex::Context ctx{std::make_shared<host::Allocator>(/*caching=*/false)};
  constexpr std::size_t kN = 32;
  const memory::dims dims{kN, kN};
  const memory::desc plain(dims, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc transposed(dims, memory::data_type::f32, memory::format_tag::ba);
  const memory::desc blocked(dims, memory::data_type::f32, memory::format_tag::AB16b16a);
  constexpr std::size_t kBytes = kN * kN * sizeof(float);
  auto pack = [&](const host::CpuTensor& t, const memory::desc& layout) {
    EXPECT_EQ(flex::dnn::packed_weights(ctx, t, plain, layout), nullptr) << "a first sighting is not kept";
    auto packed = flex::dnn::packed_weights(ctx, t, plain, layout);
    EXPECT_NE(packed, nullptr) << "a second sighting is packed and kept";
    EXPECT_EQ(flex::dnn::packed_weights(ctx, t, plain, layout), packed) << "and found again";
    return packed;
  };
  // Another buffer's entry between the two, so that erasing entries in
  // order could not decide the second one by a count the first changed.
  const auto other = ctx.output({Shape{kN, kN}, DType::F32});
  {
    const auto t = ctx.output({Shape{kN, kN}, DType::F32});
    for (std::size_t i = 0; i < kN * kN; ++i) t->data<float>()[i] = static_cast<float>(i);
    const auto kept_transposed = pack(*t, transposed);
    ASSERT_NE(kept_transposed, nullptr);
    (void)pack(*other, transposed);
    (void)pack(*t, blocked);
    const auto* values = reinterpret_cast<const float*>(kept_transposed->base());
    for (std::size_t r = 0; r < kN; ++r)
      for (std::size_t c = 0; c < kN; ++c) ASSERT_EQ(values[c * kN + r], static_cast<float>(r * kN + c));
    EXPECT_EQ(flex::dnn::packed_weights_bytes(), 3 * kBytes);
  }
  EXPECT_EQ(flex::dnn::packed_weights_bytes(), kBytes) << "only the live buffer's copy stays";
}

// Without AVX-512, oneDNN's gemm reads the right operand of a product with
// few rows or columns in place, at half speed when its rows lie a multiple
// of 2 KiB apart; flex hands it a copy with longer rows (matmul.cpp,
// pads_right_rows), kept like packed weights when the operand comes again.
// The ctest entry burn_device_tests_avx2_gemm runs this with
// ONEDNN_MAX_CPU_ISA=AVX2, so that path runs on every x86-64 CPU.
TEST(FlexPaddedRightOperand, ProductsMatchTheReferenceAndThePaddedCopyIsKept) {
  const Device flex = Device::flex(), ref = Device::ndarray();
  const bool pads = flex::dnn::isa_below_avx512();
  constexpr std::size_t kRowPad = 16, kFloat = sizeof(float);
  struct Case {
    const char* what;
    Shape a, b;                    // [batch, rows, columns]; a batch of one is a plain matrix
    bool transpose_b = false;      // b is stored [batch, n, k] and read transposed
    std::size_t padded_bytes = 0;  // the copy flex keeps when it pads
  };
  const std::vector<Case> cases{
      {"rows 1024 floats apart", {1, 64, 256}, {1, 256, 1024}, false, 256 * (1024 + kRowPad) * kFloat},
      {"rows 512 floats apart, 300 rows", {1, 300, 96}, {1, 96, 512}, false, 96 * (512 + kRowPad) * kFloat},
      {"batched", {3, 64, 32}, {3, 32, 512}, false, 3 * 32 * (512 + kRowPad) * kFloat},
      {"broadcast batch", {2, 64, 32}, {1, 32, 1024}, false, 32 * (1024 + kRowPad) * kFloat},
      {"transposed right operand: read as it is", {1, 64, 1024}, {1, 512, 1024}, true, 0},
      {"rows 1000 apart: read as it is", {1, 64, 64}, {1, 64, 1000}, false, 0},
      {"fewer than 64 rows: read as it is", {1, 32, 64}, {1, 64, 1024}, false, 0},
      {"many rows and columns: oneDNN copies by itself", {1, 512, 64}, {1, 64, 1024}, false, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const TensorData a_data = wave(c.a, 0.5, 0.1), b_data = wave(c.b, 0.25, 0.7);
    auto right = [&](const Device& d) {
      auto b = Tensor<3>::from_data(b_data, d);
      if (c.transpose_b) b = b.transpose();
      return b;
    };
    const TensorData expected = Tensor<3>::from_data(a_data, ref).matmul(right(ref)).to_data();
    flex::dnn::clear_packed_weights();
    const auto a = Tensor<3>::from_data(a_data, flex);
    const auto b = right(flex);
    const TensorData first = a.matmul(b).to_data();
    first.assert_approx_eq(expected, Tolerance::rel_abs(1e-5, 1e-5));
    EXPECT_EQ(flex::dnn::packed_weights_bytes(), 0u) << "a first use copies into scratch";
    const TensorData second = a.matmul(b).to_data();
    EXPECT_EQ(flex::dnn::packed_weights_bytes(), pads ? c.padded_bytes : 0u);
    const TensorData third = a.matmul(b).to_data();
    // One kernel either way: scratch and kept copies give the same bits.
    EXPECT_TRUE(std::ranges::equal(second.bytes(), first.bytes()));
    EXPECT_TRUE(std::ranges::equal(third.bytes(), first.bytes()));
  }
}

// A network's first convolution (3 input channels) writes channel blocks;
// the pool after it writes channels-last where the next convolutions read
// that (oneDNN's brgconv, AVX-512), so neither the next layer's input nor
// its residual needs a reorder. Values as the reference's either way.
TEST(FlexBlockedLayout, PoolAfterAFirstLayerWritesWhatTheNextConvolutionReads) {
  const TensorData x = wave({2, 3, 20, 18}, 1.0, 0.3);
  const TensorData w1 = wave({32, 3, 3, 3}, 0.3, 0.7), w2 = wave({32, 32, 3, 3}, 0.1, 1.1);
  const module::ConvOptions<2> pad1{{1, 1}, {1, 1}, {1, 1}};
  auto run = [&](const Device& d) {
    auto h =
        activation::relu(module::conv2d(Tensor<4>::from_data(x, d), Tensor<4>::from_data(w1, d), std::nullopt, pad1));
    auto p = module::max_pool2d(h, {3, 3}, {2, 2}, {1, 1});
    auto y = activation::relu(module::conv2d(p, Tensor<4>::from_data(w2, d), std::nullopt, pad1) + p);
    d.sync();
    return std::tuple{h, p, y};
  };
  const auto [h_ref, p_ref, y_ref] = run(Device::ndarray());
  const auto [h, p, y] = run(Device::flex());
  const auto first = flex::dnn::activation_layout(storage(h));
  const auto next = conv_layout(
      [&](const Tensor<4>& t) { return module::conv2d(t, Tensor<4>::from_data(w2, t.device()), std::nullopt, pad1); },
      p_ref.to_data());
  if (first == flex::dnn::ActivationLayout::Blocked16 && next == flex::dnn::ActivationLayout::ChannelsLast) {
    EXPECT_TRUE(is_channels_last(p)) << "the pool converted the first layer's blocks";
  } else if (first) {
    EXPECT_EQ(flex::dnn::activation_layout(storage(p)), first) << "the pool kept the layout it read";
  }
  p.to_data().assert_approx_eq(p_ref.to_data(), kConvTol);
  y.to_data().assert_approx_eq(y_ref.to_data(), kConvTol);
}

// flex's reorder from channels-last to plain f32 activations: burn's own
// transpose where it is faster than oneDNN's (large, at most 64 channels),
// oneDNN's elsewhere. Both must give oneDNN's bytes.
TEST(FlexReorder, ChannelsLastToPlainMatchesOneDnnOnEveryPath) {
  using tag = dnnl::memory::format_tag;
  const dnnl::engine& engine = flex::dnn::engine();
  // Above the transpose's million values with 48, 64 and 1 channels (odd
  // strips, one channel), and below it or with more channels (oneDNN).
  for (const auto& dims : std::vector<dnnl::memory::dims>{{2, 48, 110, 100},
                                                          {1, 64, 128, 130},
                                                          {3, 1, 600, 600},
                                                          {2, 24, 9, 11},
                                                          {1, 128, 90, 100}}) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    const dnnl::memory::desc nhwc(dims, dnnl::memory::data_type::f32, tag::nhwc);
    const dnnl::memory::desc nchw(dims, dnnl::memory::data_type::f32, tag::nchw);
    const std::size_t n = nhwc.get_size() / sizeof(float);
    std::vector<float> src(n), ours(n, -1.0f), theirs(n, -2.0f);
    for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<float>(i % 10007) * 0.5f - 7.0f;
    dnnl::memory from(nhwc, engine, src.data()), to(nchw, engine, ours.data()), reference(nchw, engine, theirs.data());
    flex::dnn::reorder(from, to);
    flex::dnn::execute(dnnl::reorder(from, reference), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, reference}});
    EXPECT_EQ(ours, theirs);
  }
}

}  // namespace

#endif
