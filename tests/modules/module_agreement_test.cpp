// Convolutions on each non-reference backend agree with the reference
// (ndarray) on seeded random data, over many generated configurations
// (strides, paddings, dilations, groups, odd sizes, with and without bias)
// and over contiguous, channels-last and sliced inputs.
#include <sstream>

#include "agreement_util.hpp"
#include "conv_cases.hpp"

namespace burn::testing::modules {
namespace {

template <std::size_t N>
std::string describe(const ConvCase<N>& c, Layout layout) {
  std::ostringstream os;
  auto list = [&](const char* name, const std::array<std::size_t, N>& a) {
    os << ' ' << name << '=';
    for (std::size_t i = 0; i < N; ++i) os << (i ? "x" : "") << a[i];
  };
  os << "n=" << c.batch << " c_in=" << c.c_in << " c_out=" << c.c_out << " groups=" << c.groups;
  list("size", c.size);
  list("kernel", c.kernel);
  list("stride", c.stride);
  list("padding", c.padding);
  list("dilation", c.dilation);
  list("padding_out", c.padding_out);
  os << " bias=" << c.bias << " layout=" << layout_name(layout);
  return os.str();
}

/// Deterministic configuration generator: valid cases only.
class CaseGenerator {
 public:
  explicit CaseGenerator(std::uint64_t seed) : rng_(seed) {}
  std::size_t pick(std::size_t lo, std::size_t hi) { return lo + rng_() % (hi - lo + 1); }

  template <std::size_t N>
  ConvCase<N> conv(bool transposed) {
    for (;;) {
      ConvCase<N> c{};
      c.groups = pick(1, 3);
      c.c_in = c.groups * pick(1, 3);
      c.c_out = c.groups * pick(1, 3);
      c.batch = pick(1, 2);
      c.bias = pick(0, 1) == 1;
      bool ok = true;
      for (std::size_t i = 0; i < N; ++i) {
        c.kernel[i] = pick(1, N == 3 ? 3 : 4);
        c.stride[i] = pick(1, 3);
        c.dilation[i] = pick(1, 3);
        c.padding[i] = pick(0, 3);
        c.size[i] = pick(1, N == 3 ? 6 : 11);
        const std::size_t span = c.dilation[i] * (c.kernel[i] - 1) + 1;
        if (transposed) {
          c.padding_out[i] = pick(0, std::max(c.stride[i], c.dilation[i]) - 1);
          const std::size_t full = (c.size[i] - 1) * c.stride[i] + span + c.padding_out[i];
          ok = ok && full > 2 * c.padding[i];
        } else {
          ok = ok && c.size[i] + 2 * c.padding[i] >= span;
        }
      }
      if (ok) return c;
    }
  }

 private:
  std::mt19937_64 rng_;
};

class ConvAgreementTest : public AgreementTest {
 protected:
  template <std::size_t N>
  void check(const ConvCase<N>& c, Layout layout, bool transposed) {
    const Shape xs = channels_first<N>(c.batch, c.c_in, c.size);
    const Shape ws = transposed ? channels_first<N>(c.c_in, c.c_out / c.groups, c.kernel)
                                : channels_first<N>(c.c_out, c.c_in / c.groups, c.kernel);
    const auto xv = random(xs.num_elements()), wv = random(ws.num_elements()), bv = random(c.c_out);
    auto run = [&](const Device& d, Layout l) {
      auto x = make_tensor<N + 2>(xv, xs, l, d, dtype());
      auto w = make_tensor<N + 2>(wv, ws, l, d, dtype());
      std::optional<Tensor<1>> b;
      if (c.bias) b = float_tensor<1>(bv, Shape{c.c_out}, d, dtype());
      if (transposed) {
        const module::ConvTransposeOptions<N> o(c.stride, c.padding, c.padding_out, c.dilation, c.groups);
        if constexpr (N == 1) return module::conv_transpose1d(x, w, b, o);
        else if constexpr (N == 2) return module::conv_transpose2d(x, w, b, o);
        else return module::conv_transpose3d(x, w, b, o);
      }
      const module::ConvOptions<N> o(c.stride, c.padding, c.dilation, c.groups);
      if constexpr (N == 1) return module::conv1d(x, w, b, o);
      else if constexpr (N == 2) return module::conv2d(x, w, b, o);
      else return module::conv3d(x, w, b, o);
    };
    const std::string what = describe(c, layout);
    try {
      expect_agree(run(device(), layout), run(reference(), Layout::Contiguous), what);
    } catch (const Error& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  }

  template <std::size_t N>
  void sweep(std::size_t count, bool transposed, std::uint64_t seed) {
    CaseGenerator gen(seed);
    for (std::size_t i = 0; i < count; ++i) check<N>(gen.conv<N>(transposed), static_cast<Layout>(i % 3), transposed);
  }
};

TEST_P(ConvAgreementTest, Conv1dGenerated) { sweep<1>(15, false, 101); }
TEST_P(ConvAgreementTest, Conv2dGenerated) { sweep<2>(30, false, 202); }
TEST_P(ConvAgreementTest, Conv3dGenerated) { sweep<3>(8, false, 303); }
TEST_P(ConvAgreementTest, ConvTranspose1dGenerated) { sweep<1>(15, true, 404); }
TEST_P(ConvAgreementTest, ConvTranspose2dGenerated) { sweep<2>(24, true, 505); }
TEST_P(ConvAgreementTest, ConvTranspose3dGenerated) { sweep<3>(6, true, 606); }

TEST_P(ConvAgreementTest, Conv2dEdgeCases) {
  using C = ConvCase<2>;
  const std::vector<C> cases{
      // 1x1 kernel (a matmul in disguise), stride larger than the kernel.
      {.batch = 2, .c_in = 5, .c_out = 3, .size = {7, 8}, .kernel = {1, 1}, .stride = {3, 2}},
      // Depthwise with a channel multiplier and maximal padding.
      {.batch = 1, .c_in = 4, .c_out = 8, .size = {5, 6}, .kernel = {3, 3}, .padding = {2, 2}, .groups = 4},
      // Kernel exactly as large as the padded input: a single output.
      {.batch = 2,
       .c_in = 2,
       .c_out = 2,
       .size = {3, 4},
       .kernel = {5, 4},
       .padding = {1, 0},
       .stride = {2, 2},
       .bias = false},
      // Large dilation, odd sizes, stride 1.
      {.batch = 1, .c_in = 3, .c_out = 2, .size = {9, 11}, .kernel = {2, 3}, .padding = {0, 1}, .dilation = {4, 3}},
      // A wider problem where fast paths (blocking, threads) kick in.
      {.batch = 2, .c_in = 16, .c_out = 24, .size = {17, 15}, .kernel = {3, 3}, .padding = {1, 1}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i)
    for (Layout l : {Layout::Contiguous, Layout::ChannelsLast, Layout::Sliced}) check<2>(cases[i], l, false);
}

TEST_P(ConvAgreementTest, ConvTranspose2dEdgeCases) {
  using C = ConvCase<2>;
  const std::vector<C> cases{
      // Stride larger than kernel leaves gaps; output padding fills the edge.
      {.batch = 2, .c_in = 3, .c_out = 2, .size = {3, 4}, .kernel = {2, 2}, .stride = {3, 3}, .padding_out = {2, 1}},
      // Padding that crops most of the full output.
      {.batch = 1,
       .c_in = 2,
       .c_out = 4,
       .size = {4, 3},
       .kernel = {4, 4},
       .padding = {3, 2},
       .stride = {2, 1},
       .groups = 2},
      // Wider channels.
      {.batch = 2,
       .c_in = 16,
       .c_out = 8,
       .size = {9, 7},
       .kernel = {3, 3},
       .padding = {1, 1},
       .stride = {2, 2},
       .padding_out = {1, 1}},
  };
  for (const auto& c : cases)
    for (Layout l : {Layout::Contiguous, Layout::ChannelsLast, Layout::Sliced}) check<2>(c, l, true);
}

TEST_P(ConvAgreementTest, LargeShapesTakeParallelPaths) {
  // Outputs above flex's parallel grain size (2^15 elements).
  check<2>({.batch = 2, .c_in = 8, .c_out = 12, .size = {40, 40}, .kernel = {3, 3}, .padding = {1, 1}},
           Layout::Contiguous, false);
  check<2>({.batch = 2, .c_in = 8, .c_out = 12, .size = {40, 40}, .kernel = {3, 3}, .padding = {1, 1}, .groups = 4},
           Layout::ChannelsLast, false);
  check<2>(
      {.batch = 1, .c_in = 8, .c_out = 10, .size = {30, 30}, .kernel = {4, 4}, .padding = {1, 1}, .stride = {2, 2}},
      Layout::Contiguous, true);
}

BURN_AGREEMENT_SUITE(ConvAgreementTest);

}  // namespace
}  // namespace burn::testing::modules
