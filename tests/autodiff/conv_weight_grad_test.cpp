// The dedicated weight-gradient kernel (ir::ConvWeightGrad): flex runs it on
// oneDNN for f32 / bf16 / f16, which the f64 finite-difference tests never
// reach, so here every backend's result is compared with the reference
// (ndarray, exact loops in double) over generated geometries, and the op's
// shape checks are exercised directly.
#include "ad_support.hpp"

#include <burn/module/ops.hpp>

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;

struct Geometry {
  std::size_t batch, c_in, c_out, groups;
  std::vector<std::size_t> size, kernel, stride, padding, dilation;
};

// Valid random geometries for 1 to 3 spatial dims (seeded, reproducible).
std::vector<Geometry> geometries() {
  std::mt19937_64 rng(7);
  auto pick = [&](std::size_t lo, std::size_t hi) { return lo + rng() % (hi - lo + 1); };
  std::vector<Geometry> out;
  while (out.size() < 24) {
    const std::size_t n = 1 + out.size() % 3;
    Geometry g{pick(1, 3), 0, 0, pick(1, 2), {}, {}, {}, {}, {}};
    g.c_in = g.groups * pick(1, 4);
    g.c_out = g.groups * pick(1, 4);
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
      g.kernel.push_back(pick(1, 3));
      g.stride.push_back(pick(1, 2));
      g.dilation.push_back(pick(1, 2));
      g.padding.push_back(pick(0, 2));
      g.size.push_back(pick(2, n == 3 ? 5 : 9));
      ok = ok && g.size[i] + 2 * g.padding[i] >= g.dilation[i] * (g.kernel[i] - 1) + 1;
    }
    if (ok) out.push_back(g);
  }
  return out;
}

// d(sum(conv(x, w) * r))/dw on `device` (with autodiff), as f64 host values.
std::vector<double> weight_grad(const Geometry& g, const Device& device, DType dtype) {
  std::vector<std::size_t> xs{g.batch, g.c_in}, ws{g.c_out, g.c_in / g.groups};
  xs.insert(xs.end(), g.size.begin(), g.size.end());
  ws.insert(ws.end(), g.kernel.begin(), g.kernel.end());
  auto values = [](std::size_t count, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<double> v(count);
    for (auto& e : v) e = static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0;
    return v;
  };
  auto make = [&](const std::vector<std::size_t>& shape, std::uint64_t seed) {
    std::size_t count = 1;
    for (auto s : shape) count *= s;
    return burn::detail::from_data(TensorData(values(count, seed), Shape(shape)), {device, dtype}, TensorKind::Float);
  };
  const burn::detail::TensorRef x = make(xs, 1);
  const burn::detail::TensorRef w = detail::require_grad(make(ws, 2), true);
  const burn::detail::TensorRef y = burn::detail::conv(x, w, std::nullopt, g.stride, g.padding, g.dilation, g.groups);
  const burn::detail::TensorRef r = make(y->spec.shape.dims(), 3);
  const burn::detail::TensorRef loss =
      burn::detail::reduce_all(ir::ReduceOp::Sum, burn::detail::binary(ir::BinaryOp::Mul, y, r));
  Gradients grads = detail::backward(loss);
  return burn::detail::to_data(*detail::grad(w, grads)).convert<double>().to_vec<double>();
}

TEST(ConvWeightGrad, EveryBackendAgreesWithTheReferenceInEveryFloatDtype) {
  const Device reference = burn::testing::reference_device().autodiff();
  for (const Device& plain : burn::testing::all_devices()) {
    const Device device = plain.autodiff();
    for (DType dtype : {DType::F32, DType::BF16, DType::F16}) {
      if (!device.supports_dtype(dtype)) continue;
      const double tol = dtype == DType::F32 ? 1e-4 : 0.08;
      for (const Geometry& g : geometries()) {
        const auto want = weight_grad(g, reference, DType::F64);
        const auto got = weight_grad(g, device, dtype);
        ASSERT_EQ(got.size(), want.size());
        double scale = 1.0;
        for (double v : want) scale = std::max(scale, std::abs(v));
        for (std::size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], want[i], tol * scale)
              << device << " " << dtype_name(dtype) << " element " << i << " of a " << g.size.size()
              << "-d geometry with groups " << g.groups;
      }
    }
  }
}

TEST(ConvWeightGrad, RejectsAGradientThatIsNotTheConvolutionsOutput) {
  for (const Device& device : burn::testing::all_devices()) {
    auto x = burn::detail::full(Shape{1, 2, 5, 5}, 1.0, {device, DType::F32}, TensorKind::Float);
    auto g = burn::detail::full(Shape{1, 3, 4, 4}, 1.0, {device, DType::F32}, TensorKind::Float);
    const ir::ConvWeightGrad op{{3, 3}, {1, 1}, {0, 0}, {1, 1}, 1};  // the conv output would be 3x3
    burn::testing::expect_op_error(
        [&] {
          burn::detail::execute1(op, {x, g});
        },
        "conv_weight_grad", "does not match the convolution's output size 3");
    const ir::ConvWeightGrad grouped{{2, 2}, {1, 1}, {0, 0}, {1, 1}, 2};  // 3 gradient channels, 2 groups
    burn::testing::expect_op_error(
        [&] {
          burn::detail::execute1(grouped, {x, g});
        },
        "conv_weight_grad", "not divisible by groups 2");
  }
}

}  // namespace

#endif
