// Pools, interpolation, linear, embedding and activations on each
// non-reference backend agree with the reference (ndarray) on seeded random
// data over many configurations and memory layouts.
#include <sstream>

#include "agreement_util.hpp"

namespace burn::testing::modules {
namespace {

struct PoolCase {
  std::size_t n, c;
  std::array<std::size_t, 2> size, kernel, stride, padding, dilation;
  bool ceil_mode, count_include_pad;
};

std::string describe(const PoolCase& p, std::size_t dims, Layout layout) {
  std::ostringstream os;
  auto list = [&](const char* name, const std::array<std::size_t, 2>& a) {
    os << ' ' << name << '=' << a[0];
    if (dims == 2) os << 'x' << a[1];
  };
  os << "n=" << p.n << " c=" << p.c;
  list("size", p.size);
  list("kernel", p.kernel);
  list("stride", p.stride);
  list("padding", p.padding);
  list("dilation", p.dilation);
  os << " ceil=" << p.ceil_mode << " count_include_pad=" << p.count_include_pad << " layout=" << layout_name(layout);
  return os.str();
}

/// Valid pool cases (padding at most half the kernel, as PyTorch requires).
std::vector<PoolCase> pool_cases(std::size_t count, std::uint64_t seed, bool dilated) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t lo, std::size_t hi) { return lo + rng() % (hi - lo + 1); };
  std::vector<PoolCase> out;
  while (out.size() < count) {
    PoolCase p{};
    p.n = pick(1, 2);
    p.c = pick(1, 4);
    p.ceil_mode = pick(0, 1) == 1;
    p.count_include_pad = pick(0, 1) == 1;
    bool ok = true;
    for (std::size_t i = 0; i < 2; ++i) {
      p.kernel[i] = pick(1, 4);
      p.stride[i] = pick(1, 3);
      p.padding[i] = pick(0, p.kernel[i] / 2);
      p.dilation[i] = dilated ? pick(1, 3) : 1;
      p.size[i] = pick(1, 12);
      ok = ok && p.size[i] + 2 * p.padding[i] >= p.dilation[i] * (p.kernel[i] - 1) + 1;
    }
    if (ok) out.push_back(p);
  }
  return out;
}

class PoolAgreementTest : public AgreementTest {
 protected:
  /// Runs `op` on the tested device (in `layout`) and on the reference.
  template <std::size_t D, class Op>
  void compare(const std::vector<double>& values, const Shape& shape, Layout layout, const std::string& what, Op op) {
    try {
      expect_agree(op(make_tensor<D>(values, shape, layout, device(), dtype())),
                   op(make_tensor<D>(values, shape, Layout::Contiguous, reference(), dtype())), what);
    } catch (const Error& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  }

  /// Every returned index must point at an input element equal to the output
  /// (ties may break differently only where values repeat, i.e. in f16/bf16),
  /// and for f32/f64 the indices must match the reference exactly.
  template <std::size_t D>
  void check_indices(const Tensor<D>& x, const Tensor<D>& out, const Tensor<D, Int>& idx, const Tensor<D, Int>& ref_idx,
                     const std::string& what) {
    SCOPED_TRACE(what);
    const auto xv = values_of(x), ov = values_of(out), iv = values_of(idx);
    const std::size_t plane_in = x.shape()[D - 1] * (D == 4 ? x.shape()[2] : 1);
    const std::size_t plane_out = out.shape()[D - 1] * (D == 4 ? out.shape()[2] : 1);
    for (std::size_t i = 0; i < ov.size(); ++i) {
      const auto k = static_cast<std::size_t>(iv[i]);
      ASSERT_LT(k, plane_in) << "index out of range at output " << i;
      EXPECT_EQ(xv[(i / plane_out) * plane_in + k], ov[i]) << "index does not point at the maximum, output " << i;
    }
    if (dtype() == DType::F32 || dtype() == DType::F64) expect_data(idx.to_data(), values_of(ref_idx), ref_idx.shape());
  }
};

TEST_P(PoolAgreementTest, MaxPool2dGenerated) {
  std::size_t i = 0;
  for (const auto& p : pool_cases(40, 11, true)) {
    const Layout layout = static_cast<Layout>(i++ % 3);
    const Shape shape{p.n, p.c, p.size[0], p.size[1]};
    const auto values = random(shape.num_elements());
    const std::string what = describe(p, 2, layout);
    compare<4>(values, shape, layout, what, [&](const Tensor<4>& x) {
      return module::max_pool2d(x, p.kernel, p.stride, p.padding, p.dilation, p.ceil_mode);
    });
    try {
      auto x = make_tensor<4>(values, shape, layout, device(), dtype());
      auto [out, idx] = module::max_pool2d_with_indices(x, p.kernel, p.stride, p.padding, p.dilation, p.ceil_mode);
      auto ref_x = make_tensor<4>(values, shape, Layout::Contiguous, reference(), dtype());
      auto [ref_out, ref_idx] =
          module::max_pool2d_with_indices(ref_x, p.kernel, p.stride, p.padding, p.dilation, p.ceil_mode);
      expect_agree(out, ref_out, what);
      check_indices<4>(ref_x, out, idx, ref_idx, what);
    } catch (const Error& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  }
}

TEST_P(PoolAgreementTest, MaxPool1dGenerated) {
  std::size_t i = 0;
  for (const auto& p : pool_cases(20, 12, true)) {
    const Layout layout = static_cast<Layout>(i++ % 3);
    const Shape shape{p.n, p.c, p.size[0]};
    const auto values = random(shape.num_elements());
    const std::string what = describe(p, 1, layout);
    try {
      auto x = make_tensor<3>(values, shape, layout, device(), dtype());
      auto [out, idx] =
          module::max_pool1d_with_indices(x, p.kernel[0], p.stride[0], p.padding[0], p.dilation[0], p.ceil_mode);
      auto ref_x = make_tensor<3>(values, shape, Layout::Contiguous, reference(), dtype());
      auto [ref_out, ref_idx] =
          module::max_pool1d_with_indices(ref_x, p.kernel[0], p.stride[0], p.padding[0], p.dilation[0], p.ceil_mode);
      expect_agree(out, ref_out, what);
      check_indices<3>(ref_x, out, idx, ref_idx, what);
    } catch (const Error& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  }
}

TEST_P(PoolAgreementTest, AvgPool2dGenerated) {
  std::size_t i = 0;
  for (const auto& p : pool_cases(40, 13, false)) {
    const Layout layout = static_cast<Layout>(i++ % 3);
    const Shape shape{p.n, p.c, p.size[0], p.size[1]};
    compare<4>(random(shape.num_elements()), shape, layout, describe(p, 2, layout), [&](const Tensor<4>& x) {
      return module::avg_pool2d(x, p.kernel, p.stride, p.padding, p.count_include_pad, p.ceil_mode);
    });
  }
}

TEST_P(PoolAgreementTest, AvgPool1dGenerated) {
  std::size_t i = 0;
  for (const auto& p : pool_cases(20, 14, false)) {
    const Layout layout = static_cast<Layout>(i++ % 3);
    const Shape shape{p.n, p.c, p.size[0]};
    compare<3>(random(shape.num_elements()), shape, layout, describe(p, 1, layout), [&](const Tensor<3>& x) {
      return module::avg_pool1d(x, p.kernel[0], p.stride[0], p.padding[0], p.count_include_pad, p.ceil_mode);
    });
  }
}

TEST_P(PoolAgreementTest, AdaptiveAvgPool) {
  const std::vector<std::array<std::size_t, 4>> sizes{{8, 8, 4, 4}, {7, 5, 3, 2},   {5, 7, 3, 4}, {4, 3, 5, 4},
                                                      {1, 9, 1, 3}, {13, 11, 5, 7}, {6, 6, 1, 1}, {3, 3, 3, 3}};
  std::size_t i = 0;
  for (const auto& s : sizes) {
    const Layout layout = static_cast<Layout>(i++ % 3);
    const Shape shape{2, 3, s[0], s[1]};
    const auto values = random(shape.num_elements());
    std::ostringstream what;
    what << s[0] << 'x' << s[1] << " -> " << s[2] << 'x' << s[3] << ' ' << layout_name(layout);
    compare<4>(values, shape, layout, what.str(), [&](const Tensor<4>& x) {
      return module::adaptive_avg_pool2d(x, {s[2], s[3]});
    });
    const Shape shape1{2, 3, s[0] * s[1]};
    compare<3>(values, shape1, layout, what.str() + " (1d)",
               [&](const Tensor<3>& x) { return module::adaptive_avg_pool1d(x, s[2] * s[3]); });
  }
}

TEST_P(PoolAgreementTest, Interpolate) {
  const std::vector<std::array<std::size_t, 4>> sizes{{4, 4, 8, 8}, {7, 5, 8, 7}, {45, 14, 4, 6},
                                                      {3, 8, 5, 3}, {1, 6, 1, 9}, {6, 1, 9, 1},
                                                      {5, 5, 5, 5}, {2, 3, 1, 1}, {9, 10, 13, 3}};
  std::size_t i = 0;
  for (const auto& s : sizes) {
    const Shape shape{2, 2, s[0], s[1]};
    const auto values = random(shape.num_elements());
    for (auto mode :
         {module::InterpolateMode::Nearest, module::InterpolateMode::Bilinear, module::InterpolateMode::Bicubic})
      for (bool align : {false, true}) {
        const Layout layout = static_cast<Layout>(i++ % 3);
        std::ostringstream what;
        what << s[0] << 'x' << s[1] << " -> " << s[2] << 'x' << s[3] << " mode=" << static_cast<int>(mode)
             << " align_corners=" << align << ' ' << layout_name(layout);
        compare<4>(values, shape, layout, what.str(), [&](const Tensor<4>& x) {
          return module::interpolate(x, {s[2], s[3]}, {mode, align});
        });
      }
  }
}

TEST_P(PoolAgreementTest, Linear) {
  for (auto [rows, d_in, d_out] : {std::array<std::size_t, 3>{3, 5, 4}, {1, 1, 7}, {17, 33, 9}, {6, 64, 48}}) {
    const Shape xs{2, rows, d_in}, ws{d_in, d_out};
    const auto xv = random(xs.num_elements()), wv = random(ws.num_elements()), bv = random(d_out);
    for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast, Layout::Sliced})
      for (bool bias : {false, true}) {
        auto run = [&](const Device& d, Layout l) {
          std::optional<Tensor<1>> b;
          if (bias) b = float_tensor<1>(bv, Shape{d_out}, d, dtype());
          return module::linear(make_tensor<3>(xv, xs, l, d, dtype()), make_tensor<2>(wv, ws, l, d, dtype()), b);
        };
        std::ostringstream what;
        what << rows << 'x' << d_in << " -> " << d_out << " bias=" << bias << ' ' << layout_name(layout);
        try {
          expect_agree(run(device(), layout), run(reference(), Layout::Contiguous), what.str());
        } catch (const Error& e) {
          ADD_FAILURE() << what.str() << ": " << e.what();
        }
      }
  }
}

TEST_P(PoolAgreementTest, Embedding) {
  const Shape ws{11, 6};
  const auto wv = random(ws.num_elements());
  const std::vector<std::int64_t> idx{3, 0, 10, 10, 7, 1, 2, 9, 5, 4, 6, 8};
  for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast, Layout::Sliced}) {
    auto run = [&](const Device& d, Layout l) {
      return module::embedding(make_tensor<2>(wv, ws, l, d, dtype()), int_tensor<2>(idx, {3, 4}, d));
    };
    try {
      expect_agree(run(device(), layout), run(reference(), Layout::Contiguous), layout_name(layout));
    } catch (const Error& e) {
      ADD_FAILURE() << layout_name(layout) << ": " << e.what();
    }
  }
}

TEST_P(PoolAgreementTest, Activations) {
  const Shape shape{2, 3, 5, 4};
  auto values = scaled(random(shape.num_elements()), 8.0);  // spans the interesting range of every activation
  namespace act = burn::activation;
  const std::vector<std::pair<const char*, Tensor<4> (*)(const Tensor<4>&)>> ops{
      {"relu", [](const Tensor<4>& t) { return act::relu(t); }},
      {"leaky_relu", [](const Tensor<4>& t) { return act::leaky_relu(t, 0.1); }},
      {"gelu", [](const Tensor<4>& t) { return act::gelu(t); }},
      {"gelu_tanh", [](const Tensor<4>& t) { return act::gelu_tanh(t); }},
      {"silu", [](const Tensor<4>& t) { return act::silu(t); }},
      {"sigmoid", [](const Tensor<4>& t) { return act::sigmoid(t); }},
      {"log_sigmoid", [](const Tensor<4>& t) { return act::log_sigmoid(t); }},
      {"softplus", [](const Tensor<4>& t) { return act::softplus(t, 1.5); }},
      {"softmax", [](const Tensor<4>& t) { return act::softmax(t, 1); }},
      {"log_softmax", [](const Tensor<4>& t) { return act::log_softmax(t, -1); }},
      {"hard_sigmoid", [](const Tensor<4>& t) { return act::hard_sigmoid(t); }},
      {"mish", [](const Tensor<4>& t) { return act::mish(t); }},
  };
  for (const auto& [name, op] : ops)
    for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast, Layout::Sliced})
      compare<4>(values, shape, layout, std::string(name) + " " + layout_name(layout), op);
}

TEST_P(PoolAgreementTest, LargeShapesTakeParallelPaths) {
  // Above flex's parallel grain size (2^15 elements), split across threads.
  const Shape shape{2, 8, 64, 64};
  const auto values = random(shape.num_elements());
  for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast}) {
    const std::string where = layout_name(layout);
    compare<4>(values, shape, layout, "max_pool2d " + where, [](const Tensor<4>& x) {
      return module::max_pool2d(x, {3, 3}, {1, 1}, {1, 1});
    });
    compare<4>(values, shape, layout, "max_pool2d indices " + where, [](const Tensor<4>& x) {
      return module::max_pool2d_with_indices(x, {2, 3}, {1, 2}, {1, 1}, {2, 1}, true).second;
    });
    compare<4>(values, shape, layout, "avg_pool2d " + where, [](const Tensor<4>& x) {
      return module::avg_pool2d(x, {3, 2}, {1, 1}, {1, 1}, false, true);
    });
    compare<4>(values, shape, layout, "adaptive_avg_pool2d " + where, [](const Tensor<4>& x) {
      return module::adaptive_avg_pool2d(x, {7, 5});
    });
    for (auto mode :
         {module::InterpolateMode::Nearest, module::InterpolateMode::Bilinear, module::InterpolateMode::Bicubic})
      compare<4>(values, shape, layout, "interpolate " + where, [&](const Tensor<4>& x) {
        return module::interpolate(x, {70, 90}, {mode, false});
      });
    compare<4>(values, shape, layout, "softmax " + where, [](const Tensor<4>& x) { return activation::softmax(x, 3); });
  }
}

BURN_AGREEMENT_SUITE(PoolAgreementTest);

}  // namespace
}  // namespace burn::testing::modules
