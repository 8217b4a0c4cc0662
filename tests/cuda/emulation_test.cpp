// The CUDA backend's kernels run on the CPU, against flex.
//
// No GPU is needed to check what the generated kernels compute: this test
// plans each op exactly as the backend does (plan(), launch.hpp: sources and
// parameter blocks, with host addresses in place of device ones), compiles
// every distinct source for the CPU (host_kernels.hpp), runs the launches in
// order and compares every element with flex running the same op. Covered:
// each elementwise op on each dtype with broadcast operands and scalars, on
// "wild" inputs (zeros, extremes, NaN, infinities: error bits and wrapping)
// and "tame" ones (small positive divisors and shift counts); the layout ops;
// full and arange; every reduction, scan and sort along each dim; matmul,
// pooling, convolutions and the conv weight gradient, indexing, resizing
// (planned_cases.hpp). Results flex computes with its own vectorised math
// (exp, erf, ...) or in another order (float sums) are compared within a
// tolerance; the rest must be equal. Fused chains: fusion_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>

#include <fmt/format.h>

#include <burn/burn.hpp>
#include <burn/ir/op.hpp>

#include "backends/cuda/launch.hpp"
#include "backends/cuda/philox.hpp"
#include "burn_test.hpp"
#include "device/runtime.hpp"
#include "emulated_device.hpp"
#include "host_kernels.hpp"
#include "planned_cases.hpp"

namespace burn::cuda {
namespace {

using testing::Case;
using testing::HostKernels;

// ---- running --------------------------------------------------------------------

/// flex's results, or nullopt when flex refuses the inputs (division by zero...).
std::optional<std::vector<TensorData>> run_on_flex(const Case& c) {
  backend::Backend& flex = Device::flex().runtime().backend();
  std::vector<backend::Input> inputs;
  for (const auto& d : c.inputs) inputs.push_back({flex.from_data(d), {d.shape(), d.dtype()}, false});
  try {
    const auto outputs = flex.execute(c.op, inputs, c.outputs);
    std::vector<TensorData> out;
    for (std::size_t k = 0; k < outputs.size(); ++k) out.push_back(flex.to_data(outputs[k], c.outputs[k]));
    return out;
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool close(double want, double got, DType dtype, bool approximate) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (want == got) return true;
  if (!approximate || std::isinf(want) || std::isinf(got)) return false;
  const double rel = dtype == DType::F64 ? 1e-13 : dtype == DType::F32 ? 1e-5 : dtype == DType::F16 ? 2e-3 : 1e-2;
  return std::abs(want - got) <= rel * std::max(1.0, std::abs(want));
}

/// One case planned with host memory: output buffers and the launches.
struct Planned {
  std::vector<std::vector<std::byte>> outputs;
  std::vector<Launch> launches;
  std::unique_ptr<std::uint32_t> error_bits = std::make_unique<std::uint32_t>(0);
};

Planned plan_on_host(const Case& c) {
  Planned p;
  std::vector<Operand> in, out;
  for (const auto& d : c.inputs)
    in.push_back({{d.shape(), d.dtype()}, reinterpret_cast<std::uint64_t>(d.bytes().data())});
  // One spare byte each, so an empty output still has an address.
  for (const auto& spec : c.outputs) p.outputs.emplace_back(spec.shape.num_elements() * dtype_size(spec.dtype) + 1);
  for (std::size_t k = 0; k < c.outputs.size(); ++k)
    out.push_back({c.outputs[k], reinterpret_cast<std::uint64_t>(p.outputs[k].data())});
  p.launches = plan(c.op, in, out, reinterpret_cast<std::uint64_t>(p.error_bits.get()));
  return p;
}

TEST(CudaKernelsOnTheCpu, EveryPlannedOpMatchesFlex) {
  const std::vector<Case> cases = testing::all_cases();
  ASSERT_GT(cases.size(), 2500u);
  // Every family is there (the IR refuses no whole family by mistake).
  for (std::string_view family : {"gather_",
                                  "select_",
                                  "scatter_",
                                  "select_assign_",
                                  "cat_",
                                  "slice_assign_",
                                  "arange_",
                                  "full_",
                                  "sum_dim",
                                  "argmax_dim",
                                  "cumulative",
                                  "mask_where_",
                                  "matmul_",
                                  "max_pool",
                                  "avg_pool",
                                  "adaptive_avg_pool",
                                  "conv1d_",
                                  "conv2d_",
                                  "conv3d_",
                                  "conv_transpose1d_",
                                  "conv_transpose2d_",
                                  "conv_weight_grad1d_",
                                  "conv_weight_grad2d_",
                                  "conv_weight_grad3d_",
                                  "sort_dim",
                                  "sort_descending_dim",
                                  "sort_single_",
                                  "interpolate0",
                                  "interpolate1",
                                  "interpolate2"}) {
    const auto n =
        std::count_if(cases.begin(), cases.end(), [&](const Case& c) { return c.label.starts_with(family); });
    EXPECT_GE(n, 4) << family;  // convolutions, resizing and adaptive pooling take the 4 float dtypes only
  }
  std::vector<Planned> planned;
  std::vector<std::string> sources;
  for (const Case& c : cases) {
    planned.push_back(plan_on_host(c));
    for (const Launch& l : planned.back().launches) sources.push_back(l.source);
  }
  const HostKernels kernels(sources);

  std::size_t compared = 0, errors_matched = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    Planned& p = planned[k];
    for (const Launch& l : p.launches) kernels.run(l);
    const auto want = run_on_flex(c);
    if (!want) {
      EXPECT_NE(*p.error_bits, 0u) << c.label << ": flex refused the inputs, the kernel reported nothing";
      ++errors_matched;
      continue;
    }
    EXPECT_EQ(*p.error_bits, 0u) << c.label << ": the kernel reported an error flex did not";
    for (std::size_t o = 0; o < c.outputs.size(); ++o) {
      const ir::TensorSpec& spec = c.outputs[o];
      std::vector<std::byte> bytes(p.outputs[o].begin(), p.outputs[o].end() - 1);
      const TensorData got(std::move(bytes), spec.shape, spec.dtype);
      if (is_float(spec.dtype)) {
        const auto w = (*want)[o].convert(DType::F64).to_vec<double>();
        const auto g = got.convert(DType::F64).to_vec<double>();
        std::size_t bad = 0;
        for (std::size_t i = 0; i < w.size() && bad < 3; ++i)
          if (!close(w[i], g[i], spec.dtype, c.approximate)) {
            ++bad;
            ADD_FAILURE() << c.label << " element " << i << ": flex " << w[i] << ", kernel " << g[i];
          }
      } else {
        const auto w = (*want)[o].bytes();
        const auto g = got.bytes();
        EXPECT_TRUE(std::equal(w.begin(), w.end(), g.begin(), g.end())) << c.label << ": results differ";
      }
    }
    ++compared;
  }
  std::printf("%zu cases, %zu distinct kernels: %zu compared with flex, %zu refused by both\n", cases.size(),
              kernels.size(), compared, errors_matched);
  EXPECT_GT(compared, 2000u);
  EXPECT_GT(errors_matched, 10u);  // the wild inputs reach the error paths
}

/// What element i of a random op is: Philox for (i, draw) under `seed`,
/// shaped as the CPU backends shape their numbers (random_fill.cpp).
double expected_random(const ir::Random& r, std::uint64_t seed, std::uint64_t draw, std::uint64_t i) {
  const auto c = philox4x32_10(philox_counter(i, draw),
                               {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
  const double u = philox_unit(c[0], c[1]);
  switch (r.dist) {
    case ir::DistributionKind::Default: return u;
    case ir::DistributionKind::Uniform: return r.a + (r.b - r.a) * u;
    case ir::DistributionKind::Bernoulli: return u < r.a ? 1.0 : 0.0;
    case ir::DistributionKind::Normal:
      return r.a + r.b * std::sqrt(-2.0 * std::log(1.0 - u)) * std::cos(6.283185307179586 * philox_unit(c[2], c[3]));
  }
  return 0;
}

// A kernel finds bad input on the device, so its error surfaces at the next
// sync: named after the op that failed, as the CPU backends name it when the
// op runs, whatever other work the sync finished.
TEST(CudaKernelsOnTheCpu, DeviceErrorsAreNamedAfterTheirOp) {
  const Device d = testing::emulated_cuda_device(false);
  const auto a = Tensor<1, Int>::from_ints({1, 2, 3}, d);
  const auto zero = Tensor<1, Int>::from_ints({1, 0, 1}, d);
  const auto t = Tensor<2>::from_floats({{1.0, 2.0}, {3.0, 4.0}}, d);
  burn::testing::expect_op_error([&] { (void)(a / zero).to_data(); }, "div", "integer division by zero");
  burn::testing::expect_op_error([&] { (void)(a % zero).to_data(); }, "remainder");
  burn::testing::expect_op_error(
      [&] {
        (void)t.gather(1, Tensor<2, Int>::from_ints({{0, 2}, {1, 0}}, d)).to_data();
      },
      "gather", "found on the emulated CUDA device");
  burn::testing::expect_op_error([&] { (void)t.select(0, Tensor<1, Int>::from_ints({-1}, d)).to_data(); }, "select");
  burn::testing::expect_op_error(
      [&] {
        (void)t.scatter(0, Tensor<2, Int>::from_ints({{0, 5}, {1, 0}}, d), t).to_data();
      },
      "scatter");
  burn::testing::expect_op_error(
      [&] { (void)t.select_assign(1, Tensor<1, Int>::from_ints({2}, d), t.narrow(1, 0, 1)).to_data(); },
      "select_assign");
  // The device is usable again after the error was raised.
  (a + a).to_data().assert_eq(TensorData(std::vector<std::int64_t>{2, 4, 6}, {3}));
}

TEST(CudaKernelsOnTheCpu, RandomDrawsArePhiloxOfSeedDrawAndIndex) {
  using ir::DistributionKind;
  const Shape shape{2000};
  const std::uint64_t seed = 0x123456789abcdefull;
  struct Draw {
    ir::Random op;
    std::uint64_t draw;
  };
  std::vector<Draw> draws;
  for (DType d : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I32, DType::Bool})
    for (const auto& [dist, a, b] :
         {std::tuple{DistributionKind::Default, 0.0, 0.0}, std::tuple{DistributionKind::Uniform, -2.0, 3.0},
          std::tuple{DistributionKind::Normal, 1.0, 2.0}, std::tuple{DistributionKind::Bernoulli, 0.3, 0.0}})
      draws.push_back({ir::Random{shape, dist, a, b, d}, draws.size()});

  std::vector<std::vector<std::byte>> outputs;
  std::vector<Launch> launches;
  std::vector<std::string> sources;
  for (const Draw& draw : draws) {
    outputs.emplace_back(shape.num_elements() * dtype_size(draw.op.dtype));
    const Operand out{{shape, draw.op.dtype}, reinterpret_cast<std::uint64_t>(outputs.back().data())};
    auto planned = plan(draw.op, {}, std::span(&out, 1), 0, RandomStream{seed, draw.draw});
    ASSERT_EQ(planned.size(), 1u);
    sources.push_back(planned[0].source);
    launches.push_back(std::move(planned[0]));
  }
  const HostKernels kernels(sources);
  for (std::size_t k = 0; k < draws.size(); ++k) {
    kernels.run(launches[k]);
    const ir::Random& r = draws[k].op;
    const std::string label = fmt::format("{} dist {}", dtype_name(r.dtype), static_cast<int>(r.dist));
    // The same conversion as the kernel: through f32 for the float types
    // below f64, floored for ints.
    std::vector<double> want(shape.num_elements());
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double v = expected_random(r, seed, draws[k].draw, i);
      want[i] = r.dtype == DType::F64    ? v
                : is_float(r.dtype)      ? static_cast<double>(static_cast<float>(v))
                : r.dtype == DType::Bool ? (v != 0.0 ? 1.0 : 0.0)
                                         : std::floor(v);
    }
    const TensorData expected = r.dtype == DType::F64
                                    ? TensorData(want, shape)
                                    : TensorData(std::vector<float>(want.begin(), want.end()), shape).convert(r.dtype);
    const TensorData got(std::vector<std::byte>(outputs[k]), shape, r.dtype);
    const auto w = expected.convert(DType::F64).to_vec<double>();
    const auto g = got.convert(DType::F64).to_vec<double>();
    std::size_t bad = 0;
    for (std::size_t i = 0; i < w.size() && bad < 3; ++i)
      if (w[i] != g[i]) {
        ++bad;
        ADD_FAILURE() << label << " element " << i << ": expected " << w[i] << ", kernel " << g[i];
      }
    if (r.dtype == DType::F64) {
      // The numbers themselves look like their distribution.
      double mean = 0, square = 0;
      for (double v : g) mean += v / static_cast<double>(g.size());
      for (double v : g) square += (v - mean) * (v - mean) / static_cast<double>(g.size());
      switch (r.dist) {
        case DistributionKind::Default: EXPECT_NEAR(mean, 0.5, 0.03) << label; break;
        case DistributionKind::Uniform: EXPECT_NEAR(mean, 0.5, 0.15) << label; break;
        case DistributionKind::Normal:
          EXPECT_NEAR(mean, 1.0, 0.15) << label;
          EXPECT_NEAR(std::sqrt(square), 2.0, 0.15) << label;
          break;
        case DistributionKind::Bernoulli: EXPECT_NEAR(mean, 0.3, 0.04) << label; break;
      }
    }
  }
  // Another draw of the same op gives other numbers.
  EXPECT_NE(outputs[0], outputs[4]);
}

// Known-answer vectors of Philox4x32-10 from the Random123 distribution
// (kat_vectors): the counter, the key, the result.
TEST(CudaPhilox, MatchesTheKnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (std::array<std::uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (std::array<std::uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (std::array<std::uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

}  // namespace
}  // namespace burn::cuda
