// Autocast: which operations run in which dtype, on every device that has
// the 16-bit types; gradients reach f32 parameters; scopes nest, name one
// device and end with their guard.
#include <burn/amp.hpp>

#include <functional>
#include <map>
#include <string>
#include <thread>

#include "burn_test.hpp"

namespace {

using namespace burn;
using burn::testing::all_devices;

/// Devices with both 16-bit float types, each with the dtype under test.
std::vector<std::pair<Device, DType>> half_devices() {
  std::vector<std::pair<Device, DType>> out;
  for (const auto& d : all_devices())
    for (DType t : {DType::BF16, DType::F16})
      if (d.supports_dtype(t)) out.emplace_back(d, t);
  return out;
}

template <std::size_t D>
Tensor<D> values(const Device& device, DType dtype, const Shape& shape, double low = 0.1, double high = 0.9) {
  return Tensor<D>::random(shape, Distribution::uniform(low, high), TensorCreationOptions(device, dtype));
}

/// One runnable case per operation autocast_policy() lists: it runs the
/// operation under the scope on inputs the policy changes (f32 for
/// LowerPrecision, 16-bit for Float32, both for Promote) and returns the
/// dtype the operation computed in.
using Case = std::function<DType(const Device&, DType half)>;

std::map<std::string, Case> cases() {
  std::map<std::string, Case> c;
  const auto f32 = DType::F32;
  // Lower precision: f32 in, the autocast dtype out.
  c["matmul"] = [=](const Device& d, DType) {
    return values<2>(d, f32, Shape{4, 5}).matmul(values<2>(d, f32, Shape{5, 3})).dtype();
  };
  c["linear"] = [=](const Device& d, DType) {
    return nn::LinearConfig{5, 3}.init(d).forward(values<2>(d, f32, Shape{4, 5})).dtype();
  };
  c["conv1d"] = [=](const Device& d, DType) {
    return module::conv1d(values<3>(d, f32, Shape{1, 2, 6}), values<3>(d, f32, Shape{3, 2, 3}),
                          values<1>(d, f32, Shape{3}))
        .dtype();
  };
  c["conv2d"] = [=](const Device& d, DType) {
    return module::conv2d(values<4>(d, f32, Shape{1, 2, 5, 5}), values<4>(d, f32, Shape{3, 2, 3, 3}),
                          values<1>(d, f32, Shape{3}))
        .dtype();
  };
  c["conv3d"] = [=](const Device& d, DType) {
    return module::conv3d(values<5>(d, f32, Shape{1, 2, 4, 4, 4}), values<5>(d, f32, Shape{3, 2, 2, 2, 2}),
                          values<1>(d, f32, Shape{3}))
        .dtype();
  };
  c["conv_transpose1d"] = [=](const Device& d, DType) {
    return module::conv_transpose1d(values<3>(d, f32, Shape{1, 2, 5}), values<3>(d, f32, Shape{2, 3, 3}),
                                    values<1>(d, f32, Shape{3}))
        .dtype();
  };
  c["conv_transpose2d"] = [=](const Device& d, DType) {
    return module::conv_transpose2d(values<4>(d, f32, Shape{1, 2, 4, 4}), values<4>(d, f32, Shape{2, 3, 3, 3}),
                                    values<1>(d, f32, Shape{3}))
        .dtype();
  };
  c["conv_transpose3d"] = [=](const Device& d, DType) {
    return module::conv_transpose3d(values<5>(d, f32, Shape{1, 2, 3, 3, 3}), values<5>(d, f32, Shape{2, 3, 2, 2, 2}),
                                    values<1>(d, f32, Shape{3}))
        .dtype();
  };
  // Float32: 16-bit in, f32 out.
  const auto unary = [](auto fn) {
    return [fn](const Device& d, DType half) { return fn(values<2>(d, half, Shape{3, 4})).dtype(); };
  };
  c["exp"] = unary([](const Tensor<2>& t) { return t.exp(); });
  c["expm1"] = unary([](const Tensor<2>& t) { return t.expm1(); });
  c["log"] = unary([](const Tensor<2>& t) { return t.log(); });
  c["log1p"] = unary([](const Tensor<2>& t) { return t.log1p(); });
  c["recip"] = unary([](const Tensor<2>& t) { return t.recip(); });
  c["rsqrt"] = unary([](const Tensor<2>& t) { return t.rsqrt(); });
  c["tan"] = unary([](const Tensor<2>& t) { return t.tan(); });
  c["asin"] = unary([](const Tensor<2>& t) { return t.asin(); });
  c["acos"] = unary([](const Tensor<2>& t) { return t.acos(); });
  c["sinh"] = unary([](const Tensor<2>& t) { return t.sinh(); });
  c["cosh"] = unary([](const Tensor<2>& t) { return t.cosh(); });
  c["pow"] = [](const Device& d, DType half) {
    return values<2>(d, half, Shape{3, 4}).powf(values<2>(d, half, Shape{3, 4})).dtype();
  };
  c["sum"] = [](const Device& d, DType half) { return values<2>(d, half, Shape{3, 4}).sum_dim(1).dtype(); };
  c["prod"] = [](const Device& d, DType half) { return values<2>(d, half, Shape{3, 4}).prod().dtype(); };
  c["mean"] = [](const Device& d, DType half) { return values<2>(d, half, Shape{3, 4}).mean().dtype(); };
  c["cumsum"] = [](const Device& d, DType half) { return values<2>(d, half, Shape{3, 4}).cumsum(1).dtype(); };
  c["cumprod"] = [](const Device& d, DType half) { return values<2>(d, half, Shape{3, 4}).cumprod(1).dtype(); };
  c["softmax"] = [](const Device& d, DType half) {
    return activation::softmax(values<2>(d, half, Shape{3, 4}), 1).dtype();
  };
  c["log_softmax"] = [](const Device& d, DType half) {
    return activation::log_softmax(values<2>(d, half, Shape{3, 4}), 1).dtype();
  };
  c["layer_norm"] = [](const Device& d, DType half) {
    return nn::LayerNormConfig{4}.init(d).forward(values<2>(d, half, Shape{3, 4})).dtype();
  };
  c["group_norm"] = [](const Device& d, DType half) {
    return nn::GroupNormConfig{2, 4}.init(d).forward(values<3>(d, half, Shape{2, 4, 3})).dtype();
  };
  c["rms_norm"] = [](const Device& d, DType half) {
    return nn::RmsNormConfig{4}.init(d).forward(values<2>(d, half, Shape{3, 4})).dtype();
  };
  c["batch_norm"] = [](const Device& d, DType half) {
    return nn::BatchNormConfig{4}.init(d).forward(values<3>(d, half, Shape{2, 4, 3})).dtype();
  };
  c["cross_entropy"] = [](const Device& d, DType half) {
    const auto targets = Tensor<1, Int>::from_ints({0, 2, 1}, d);
    return nn::loss::CrossEntropyLossConfig{}.init(d).forward(values<2>(d, half, Shape{3, 4}), targets).dtype();
  };
  c["binary_cross_entropy"] = [](const Device& d, DType half) {
    const auto targets = Tensor<1, Int>::from_ints({0, 1, 1}, d);
    return nn::loss::BinaryCrossEntropyLossConfig{}.init(d).forward(values<1>(d, half, Shape{3}), targets).dtype();
  };
  c["mse_loss"] = [](const Device& d, DType half) {
    return nn::loss::MseLoss{}.forward(values<2>(d, half, Shape{3, 4}), values<2>(d, half, Shape{3, 4})).dtype();
  };
  c["huber_loss"] = [](const Device& d, DType half) {
    return nn::loss::HuberLossConfig{}
        .init()
        .forward(values<2>(d, half, Shape{3, 4}), values<2>(d, half, Shape{3, 4}))
        .dtype();
  };
  // Promote: a 16-bit and an f32 operand meet in f32.
  const auto binary = [](auto fn) {
    return [fn](const Device& d, DType half) {
      return fn(values<2>(d, half, Shape{3, 4}), values<2>(d, DType::F32, Shape{3, 4})).dtype();
    };
  };
  c["add"] = [](const Device& d, DType half) {
    return (values<2>(d, half, Shape{3, 4}) + values<2>(d, DType::F32, Shape{3, 4})).dtype();
  };
  c["sub"] = [](const Device& d, DType half) {
    return (values<2>(d, half, Shape{3, 4}) - values<2>(d, DType::F32, Shape{3, 4})).dtype();
  };
  c["mul"] = [](const Device& d, DType half) {
    return (values<2>(d, half, Shape{3, 4}) * values<2>(d, DType::F32, Shape{3, 4})).dtype();
  };
  c["div"] = [](const Device& d, DType half) {
    return (values<2>(d, half, Shape{3, 4}) / values<2>(d, DType::F32, Shape{3, 4})).dtype();
  };
  c["remainder"] = binary([](const Tensor<2>& a, const Tensor<2>& b) { return a.remainder(b); });
  c["max_pair"] = binary([](const Tensor<2>& a, const Tensor<2>& b) { return a.max_pair(b); });
  c["min_pair"] = binary([](const Tensor<2>& a, const Tensor<2>& b) { return a.min_pair(b); });
  c["atan2"] = binary([](const Tensor<2>& a, const Tensor<2>& b) { return a.atan2(b); });
  // Comparisons give Bool: they compare the values widened to f32, checked
  // against the same comparison written with explicit casts.
  const auto compare = [](auto fn) {
    return [fn](const Device& d, DType half) {
      const auto a = values<2>(d, half, Shape{3, 4});
      const auto b = values<2>(d, DType::F32, Shape{3, 4});
      fn(a, b).to_data().assert_eq(fn(a.cast(DType::F32), b).to_data());
      return DType::F32;
    };
  };
  c["equal"] = compare([](const Tensor<2>& a, const Tensor<2>& b) { return a.equal(b); });
  c["not_equal"] = compare([](const Tensor<2>& a, const Tensor<2>& b) { return a.not_equal(b); });
  c["greater"] = compare([](const Tensor<2>& a, const Tensor<2>& b) { return a.greater(b); });
  c["greater_equal"] = compare([](const Tensor<2>& a, const Tensor<2>& b) { return a.greater_equal(b); });
  c["lower"] = compare([](const Tensor<2>& a, const Tensor<2>& b) { return a.lower(b); });
  c["lower_equal"] = compare([](const Tensor<2>& a, const Tensor<2>& b) { return a.lower_equal(b); });
  c["mask_where"] = [](const Device& d, DType half) {
    const auto a = values<2>(d, half, Shape{3, 4});
    return a.mask_where(a.greater_elem(0.5), values<2>(d, DType::F32, Shape{3, 4})).dtype();
  };
  c["cat"] = [](const Device& d, DType half) {
    return Tensor<2>::cat({values<2>(d, half, Shape{3, 4}), values<2>(d, DType::F32, Shape{2, 4})}, 0).dtype();
  };
  return c;
}

TEST(Autocast, EveryListedOperationRunsInItsPolicysDtype) {
  const auto table = cases();
  for (const auto& entry : amp::autocast_policy())
    ASSERT_TRUE(table.count(std::string(entry.op))) << "no test case for the listed operation " << entry.op;
  ASSERT_EQ(table.size(), amp::autocast_policy().size()) << "a test case for an operation the policy does not list";
  for (const auto& [device, half] : half_devices()) {
    amp::Autocast autocast(device, half);
    for (const auto& entry : amp::autocast_policy()) {
      const DType expected = entry.policy == amp::CastPolicy::LowerPrecision ? half : DType::F32;
      EXPECT_EQ(table.at(std::string(entry.op))(device, half), expected)
          << entry.op << " on " << device << " under " << half;
    }
  }
}

TEST(Autocast, UnlistedOperationsKeepTheirInputsDtypeAndF64StaysF64) {
  for (const auto& [device, half] : half_devices()) {
    amp::Autocast autocast(device, half);
    const auto x = values<2>(device, half, Shape{3, 4});
    EXPECT_EQ(activation::relu(x).dtype(), half) << device;
    EXPECT_EQ(x.tanh().dtype(), half) << device;
    EXPECT_EQ((x * 2.0).dtype(), half) << device;
    EXPECT_EQ(x.max_dim(1).dtype(), half) << device;
    if (device.supports_dtype(DType::F64)) {
      const auto w = values<2>(device, DType::F64, Shape{4, 2});
      EXPECT_EQ(w.transpose().matmul(w).dtype(), DType::F64) << device;
    }
  }
}

TEST(Autocast, LowPrecisionResultsMatchF32WithinTheDtypesTolerance) {
  for (const auto& [device, half] : half_devices()) {
    device.seed(5);
    const auto a = values<2>(device, DType::F32, Shape{16, 32}, -1.0, 1.0);
    const auto b = values<2>(device, DType::F32, Shape{32, 8}, -1.0, 1.0);
    const auto x = values<4>(device, DType::F32, Shape{2, 3, 6, 6}, -1.0, 1.0);
    const auto w = values<4>(device, DType::F32, Shape{4, 3, 3, 3}, -1.0, 1.0);
    const TensorData mm = a.matmul(b).to_data();
    const TensorData conv = module::conv2d(x, w, std::nullopt).to_data();
    amp::Autocast autocast(device, half);
    // Inputs rounded to 16 bits, products accumulated in f32: the error of
    // 32 (matmul) or 27 (conv) rounded terms of size up to 1.
    const auto tol = Tolerance::rel_abs(0.03, half == DType::F16 ? 0.03 : 0.12);
    a.matmul(b).to_data().convert(DType::F32).assert_approx_eq(mm, tol);
    module::conv2d(x, w, std::nullopt).to_data().convert(DType::F32).assert_approx_eq(conv, tol);
  }
}

TEST(Autocast, OnlyTheNamedDeviceAndOnlyInsideTheScope) {
  const auto devices = half_devices();
  if (devices.empty()) GTEST_SKIP() << "no device in this build supports a 16-bit float dtype";
  const auto& [device, half] = devices.front();
  const auto a = values<2>(device, DType::F32, Shape{2, 2});
  {
    amp::Autocast autocast(device, half);
    EXPECT_EQ(amp::autocast_dtype(device), half);
    EXPECT_EQ(amp::autocast_dtype(device.autodiff()), half) << "autodiff is the same device";
    EXPECT_EQ(a.matmul(a).dtype(), half);
    {
      amp::Autocast off(device, half, false);
      EXPECT_EQ(amp::autocast_dtype(device), std::nullopt);
      EXPECT_EQ(a.matmul(a).dtype(), DType::F32);
    }
    EXPECT_EQ(a.matmul(a).dtype(), half);
    for (const auto& other : all_devices()) {
      if (other == device) continue;
      EXPECT_EQ(amp::autocast_dtype(other), std::nullopt) << other;
      const auto o = values<2>(other, DType::F32, Shape{2, 2});
      EXPECT_EQ(o.matmul(o).dtype(), DType::F32) << other;
    }
  }
  EXPECT_EQ(amp::autocast_dtype(device), std::nullopt);
  EXPECT_EQ(a.matmul(a).dtype(), DType::F32);
  // Outside autocast, mixed dtypes are still an error, as in Burn.
  EXPECT_THROW((void)(a + a.cast(half)), Error);
}

TEST(Autocast, TheScopeBelongsToItsThread) {
  const auto devices = half_devices();
  if (devices.empty()) GTEST_SKIP() << "no device in this build supports a 16-bit float dtype";
  const auto& [device, half] = devices.front();
  amp::Autocast autocast(device, half);
  std::optional<DType> seen = half;
  std::thread([&] { seen = amp::autocast_dtype(device); }).join();
  EXPECT_EQ(seen, std::nullopt);
}

TEST(Autocast, RejectsAFullPrecisionDtypeAndAnUnsupportedOne) {
  const Device device = all_devices().front();
  try {
    amp::Autocast autocast(device, DType::F32);
    FAIL() << "f32 accepted as an autocast dtype";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[Autocast]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f16 or bf16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(amp::Autocast(device, DType::I8), Error);
  for (const auto& d : all_devices())
    for (DType t : {DType::BF16, DType::F16})
      if (!d.supports_dtype(t)) {
        try {
          amp::Autocast autocast(d, t);
          ADD_FAILURE() << d << " accepted " << t;
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("does not support"), std::string::npos) << e.what();
        }
      }
}

#if BURN_HAS_AUTODIFF
/// A two-layer network trained under autocast: the gradients of its f32
/// weights are f32 and close to those computed without autocast, and
/// backward runs each rule in its forward value's dtype.
TEST(Autocast, GradientsReachTheF32WeightsAsF32) {
  for (const auto& [base, half] : half_devices()) {
    const Device device = base.autodiff();
    device.seed(11);
    const auto fc1 = nn::LinearConfig{6, 8}.init(device);
    const auto fc2 = nn::LinearConfig{8, 3}.init(device);
    const auto x = values<2>(device, DType::F32, Shape{5, 6}, -1.0, 1.0);
    const auto y = Tensor<1, Int>::from_ints({0, 1, 2, 1, 0}, device);
    const auto ce = nn::loss::CrossEntropyLossConfig{}.init(device);
    auto run = [&](bool autocast_on) {
      std::optional<amp::Autocast> autocast;
      if (autocast_on) autocast.emplace(device, half);
      const auto hidden = activation::relu(fc1.forward(x));
      if (autocast_on) {
        EXPECT_EQ(hidden.dtype(), half) << base;
      }
      const auto loss = ce.forward(fc2.forward(hidden), y);
      EXPECT_EQ(loss.dtype(), DType::F32) << base;
      Gradients grads = loss.backward();
      return std::pair{fc1.weight->grad(grads).value(), fc2.weight->grad(grads).value()};
    };
    const auto [g1_ref, g2_ref] = run(false);
    const auto [g1, g2] = run(true);
    EXPECT_EQ(g1.dtype(), DType::F32) << base;
    EXPECT_EQ(g2.dtype(), DType::F32) << base;
    const auto tol = Tolerance::rel_abs(0.05, half == DType::F16 ? 5e-3 : 2e-2);
    g1.to_data().assert_approx_eq(g1_ref.to_data(), tol);
    g2.to_data().assert_approx_eq(g2_ref.to_data(), tol);
  }
}
#endif

}  // namespace
