// Full, Arange and Cast on vulkan:0 against the reference device.
#include "vk_test.hpp"

#include <cmath>
#include <limits>

namespace {

using burn::DType;
using burn::Shape;
using burn::TensorData;
using namespace burn::vktest;
namespace ir = burn::ir;
namespace detail = burn::detail;

const std::vector<DType> kAll = {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I16,
                                 DType::I8,  DType::U64, DType::U32, DType::U16,  DType::U8,  DType::Bool};

TEST(VulkanCreation, FullEveryDtype) {
  for (DType t : kAll) {
    for (burn::Scalar s :
         {burn::Scalar(1.5), burn::Scalar(-3), burn::Scalar(0), burn::Scalar(true), burn::Scalar(300)}) {
      SCOPED_TRACE(name_of(t) + " " + s.to_string());
      // Odd sizes: the fill shader writes whole 32-bit words.
      const auto want = burn::detail::create(ir::Full{Shape{3, 7}, s, t}, ref());
      const auto got = burn::detail::create(ir::Full{Shape{3, 7}, s, t}, vk());
      expect_same(burn::detail::to_data(got), burn::detail::to_data(want));
    }
  }
}

TEST(VulkanCreation, Arange) {
  for (DType t : kAll) {
    if (t == DType::Bool) continue;
    SCOPED_TRACE(name_of(t));
    for (auto [start, end, step] : {std::tuple{0, 10, 1}, std::tuple{-5, 300, 7}, std::tuple{20, -20, -3}}) {
      const ir::Arange op{start, end, step, t};
      expect_same(burn::detail::to_data(burn::detail::create(op, vk())),
                  burn::detail::to_data(burn::detail::create(op, ref())));
    }
  }
  // Values past 32 bits are computed exactly.
  const ir::Arange big{std::int64_t(1) << 40, (std::int64_t(1) << 40) + 1000, 3, DType::I64};
  expect_same(burn::detail::to_data(burn::detail::create(big, vk())),
              burn::detail::to_data(burn::detail::create(big, ref())));
}

TEST(VulkanCast, EveryPair) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // Rounding, truncation toward zero, saturation, NaN and wrap-around cases.
  const std::vector<double> specials = {0.0, -0.5, 2.7,  -3.9,  127.6, 128.0, -128.5, 255.9, 300.0, -300.0,
                                        7e4, -7e4, 1e10, -1e10, 3e19,  -3e19, nan,    inf,   -inf,  65504.0};
  for (DType from : kAll) {
    const auto src = burn::detail::cast(values(specials, Shape{4, 5}, DType::F64, ref()), from);
    for (DType to : kAll) {
      agree(name_of(from) + " -> " + name_of(to), [&](const auto& in) { return burn::detail::cast(in[0], to); }, {src});
    }
  }
}

TEST(VulkanCast, RandomAndStrided) {
  for (DType from : {DType::F32, DType::I64, DType::F16, DType::U8}) {
    const auto src = rand(Shape{6, 9}, from, -200, 200);
    for (DType to : {DType::F32, DType::BF16, DType::I32, DType::I8, DType::Bool}) {
      agree(name_of(from) + " -> " + name_of(to) + " (transposed)",
            [&](const auto& in) { return burn::detail::cast(burn::detail::swap_dims(in[0], 0, 1), to); }, {src});
    }
  }
}

}  // namespace

namespace {

TEST(VulkanCreation, RandomMatchesTheCpuBackendsForOneSeed) {
  using burn::Distribution;
  for (const Distribution& dist : {Distribution::uniform(-3, 5), Distribution::normal(1, 2),
                                   Distribution::bernoulli(0.3), Distribution::Default}) {
    for (DType t : {DType::F32, DType::F16, DType::I32, DType::Bool}) {
      ref().seed(99);
      vk().seed(99);
      const auto want = burn::detail::random(Shape{9, 13}, dist, {ref(), t},
                                             burn::is_float(t)  ? burn::TensorKind::Float
                                             : burn::is_bool(t) ? burn::TensorKind::Bool
                                                                : burn::TensorKind::Int);
      const auto got = burn::detail::random(Shape{9, 13}, dist, {vk(), t},
                                            burn::is_float(t)  ? burn::TensorKind::Float
                                            : burn::is_bool(t) ? burn::TensorKind::Bool
                                                               : burn::TensorKind::Int);
      SCOPED_TRACE(name_of(t));
      expect_same(burn::detail::to_data(got), burn::detail::to_data(want));
    }
  }
}

}  // namespace
