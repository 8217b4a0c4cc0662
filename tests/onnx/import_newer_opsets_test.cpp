// ONNX import of the operators opsets 21 to 26 brought (Attention,
// RotaryEmbedding, RMSNormalization, GroupNormalization's per-channel form,
// Swish, blocked quantization) and of the QOperator format's QLinearMatMul
// and QLinearConv, on hand-made graphs checked against the definitions
// computed here; tests/onnx/fixtures has the same operators as PyTorch and
// onnx.helper write them, checked against ONNX Runtime.
#include <burn/onnx.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "burn_test.hpp"
#include "onnx_builder.hpp"

namespace burn {
namespace {

using namespace onnx_test;

/// n values spread over about [-1.5, 1.5], different for each `seed`.
std::vector<float> wave(std::size_t n, int seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(1.5 * std::sin(0.7 * static_cast<double>(i) + 1.3 * seed));
  return v;
}

/// Attention as its definition says, in double, on 4-D row-major data:
/// q [b, hq, l, d], k [b, hk, s, d], v [b, hk, s, dv]; allowed(b, i, j)
/// says whether query i may see key j (a float bias is added after).
struct AttentionCase {
  std::size_t b, hq, hk, l, s, d, dv;
  double scale, softcap = 0.0;
  std::function<bool(std::size_t, std::size_t, std::size_t)> allowed = [](std::size_t, std::size_t, std::size_t) {
    return true;
  };
  std::function<double(std::size_t, std::size_t)> added = [](std::size_t, std::size_t) { return 0.0; };

  std::vector<float> run(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v) const {
    std::vector<float> y(b * hq * l * dv, 0.0F);
    const std::size_t group = hq / hk;
    for (std::size_t n = 0; n < b; ++n) {
      for (std::size_t h = 0; h < hq; ++h) {
        const std::size_t kh = h / group;
        for (std::size_t i = 0; i < l; ++i) {
          std::vector<double> score(s, -std::numeric_limits<double>::infinity());
          bool any = false;
          for (std::size_t j = 0; j < s; ++j) {
            if (!allowed(n, i, j)) continue;
            double dot = 0.0;
            for (std::size_t e = 0; e < d; ++e)
              dot += static_cast<double>(q[((n * hq + h) * l + i) * d + e]) * k[((n * hk + kh) * s + j) * d + e];
            dot *= scale;
            if (softcap > 0.0) dot = softcap * std::tanh(dot / softcap);
            score[j] = dot + added(i, j);
            any = true;
          }
          if (!any) continue;  // a query that sees no key gives zeros
          double top = -std::numeric_limits<double>::infinity(), total = 0.0;
          for (const double x : score) top = std::max(top, x);
          for (double& x : score) total += (x = std::exp(x - top));
          for (std::size_t e = 0; e < dv; ++e) {
            double acc = 0.0;
            for (std::size_t j = 0; j < s; ++j) acc += score[j] / total * v[((n * hk + kh) * s + j) * dv + e];
            y[((n * hq + h) * l + i) * dv + e] = static_cast<float>(acc);
          }
        }
      }
    }
    return y;
  }
};

/// [b, s, h * d] -> [b, h, s, d] on host data.
std::vector<float> heads_first(const std::vector<float>& x, std::size_t b, std::size_t s, std::size_t h,
                               std::size_t d) {
  std::vector<float> out(x.size());
  for (std::size_t n = 0; n < b; ++n)
    for (std::size_t t = 0; t < s; ++t)
      for (std::size_t i = 0; i < h; ++i)
        for (std::size_t e = 0; e < d; ++e) out[((n * h + i) * s + t) * d + e] = x[((n * s + t) * h + i) * d + e];
  return out;
}

TEST(OnnxImportNewerOpsets, AttentionMatchesItsDefinition) {
  // Four nodes: plain multi-head on 4-D inputs; grouped-query causal on 3-D
  // inputs with the heads as attributes; a cache (past keys first, causal
  // aligned bottom-right) with its present outputs; a bool mask that hides
  // every key from one query, a float mask shorter than the keys, a scale
  // and a softcap.
  Builder g(23);
  g.input("q", {2, 2, 3, 4}).input("k", {2, 2, 5, 4}).input("v", {2, 2, 5, 3});
  g.input("q3", {2, 3, 16}).input("k3", {2, 3, 8}).input("v3", {2, 3, 8});
  g.input("past_k", {2, 2, 2, 4}).input("past_v", {2, 2, 2, 3}).input("bias", {3, 4});
  g.input("mask", {2, 1, 3, 5}, ::onnx::TensorProto::BOOL);
  for (const char* o : {"plain", "gqa", "cached", "present_k", "present_v", "masked_bool", "masked_float", "negative"})
    g.output(o);
  g.node("Attention", {"q", "k", "v"}, {"plain"});
  auto& gqa = g.node("Attention", {"q3", "k3", "v3"}, {"gqa"});
  Builder::attr(gqa, "q_num_heads", std::int64_t{4});
  Builder::attr(gqa, "kv_num_heads", std::int64_t{2});
  Builder::attr(gqa, "is_causal", std::int64_t{1});
  Builder::attr(g.node("Attention", {"q", "k", "v", "", "past_k", "past_v"}, {"cached", "present_k", "present_v"}),
                "is_causal", std::int64_t{1});
  auto& masked = g.node("Attention", {"q", "k", "v", "mask"}, {"masked_bool"});
  Builder::attr(masked, "scale", 0.25F);
  Builder::attr(masked, "softcap", 2.0F);
  g.node("Attention", {"q", "k", "v", "bias"}, {"masked_float"});
  Builder::attr(g.node("Attention", {"q", "k", "v"}, {"negative"}), "scale", -0.5F);  // no real square root

  const auto q = wave(2 * 2 * 3 * 4, 1), k = wave(2 * 2 * 5 * 4, 2), v = wave(2 * 2 * 5 * 3, 3);
  const auto q3 = wave(2 * 3 * 16, 4), k3 = wave(2 * 3 * 8, 5), v3 = wave(2 * 3 * 8, 6);
  const auto past_k = wave(2 * 2 * 2 * 4, 7), past_v = wave(2 * 2 * 2 * 3, 8);
  // A float bias for 4 of the 5 keys (the fifth is masked as padding).
  const auto bias = wave(3 * 4, 9);
  // Query 1 of batch 1 sees no key; the others miss key (i + 2) % 5.
  std::vector<std::uint8_t> mask(2 * 3 * 5);
  for (std::size_t n = 0; n < 2; ++n)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 5; ++j) mask[(n * 3 + i) * 5 + j] = !(n == 1 && i == 1) && j != (i + 2) % 5;

  const double inv_sqrt4 = 0.5;
  const AttentionCase plain{2, 2, 2, 3, 5, 4, 3, inv_sqrt4};
  AttentionCase gqa_case{2, 4, 2, 3, 3, 4, 4, inv_sqrt4};
  gqa_case.allowed = [](std::size_t, std::size_t i, std::size_t j) { return j <= i; };
  std::vector<float> cat_k, cat_v;  // past then new, per (batch, head)
  for (std::size_t nh = 0; nh < 4; ++nh) {
    cat_k.insert(cat_k.end(), past_k.begin() + static_cast<std::ptrdiff_t>(nh * 8),
                 past_k.begin() + static_cast<std::ptrdiff_t>(nh * 8 + 8));
    cat_k.insert(cat_k.end(), k.begin() + static_cast<std::ptrdiff_t>(nh * 20),
                 k.begin() + static_cast<std::ptrdiff_t>(nh * 20 + 20));
    cat_v.insert(cat_v.end(), past_v.begin() + static_cast<std::ptrdiff_t>(nh * 6),
                 past_v.begin() + static_cast<std::ptrdiff_t>(nh * 6 + 6));
    cat_v.insert(cat_v.end(), v.begin() + static_cast<std::ptrdiff_t>(nh * 15),
                 v.begin() + static_cast<std::ptrdiff_t>(nh * 15 + 15));
  }
  // Two cached keys come first: the causal frontier of query i moves to
  // key i + 2 (the offset is the cache's length).
  AttentionCase cached{2, 2, 2, 3, 7, 4, 3, inv_sqrt4};
  cached.allowed = [](std::size_t, std::size_t i, std::size_t j) { return j <= i + 2; };
  AttentionCase by_bool{2, 2, 2, 3, 5, 4, 3, 0.25, 2.0};
  by_bool.allowed = [&](std::size_t n, std::size_t i, std::size_t j) { return mask[(n * 3 + i) * 5 + j] != 0; };
  AttentionCase by_float{2, 2, 2, 3, 5, 4, 3, inv_sqrt4};
  by_float.allowed = [](std::size_t, std::size_t, std::size_t j) { return j < 4; };
  by_float.added = [&](std::size_t i, std::size_t j) { return static_cast<double>(bias[i * 4 + j]); };
  // The grouped-query node works on [b, h, s, d] and gives [b, s, h * d] back.
  const auto gqa_heads =
      gqa_case.run(heads_first(q3, 2, 3, 4, 4), heads_first(k3, 2, 3, 2, 4), heads_first(v3, 2, 3, 2, 4));
  std::vector<float> want_gqa(gqa_heads.size());
  for (std::size_t n = 0; n < 2; ++n)
    for (std::size_t h = 0; h < 4; ++h)
      for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t e = 0; e < 4; ++e)
          want_gqa[((n * 3 + t) * 4 + h) * 4 + e] = gqa_heads[((n * 4 + h) * 3 + t) * 4 + e];

  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = g.load(device).run({f32(q, {2, 2, 3, 4}), f32(k, {2, 2, 5, 4}), f32(v, {2, 2, 5, 3}),
                                         f32(q3, {2, 3, 16}), f32(k3, {2, 3, 8}), f32(v3, {2, 3, 8}),
                                         f32(past_k, {2, 2, 2, 4}), f32(past_v, {2, 2, 2, 3}), f32(bias, {3, 4}),
                                         TensorData(mask, Shape{2, 1, 3, 5}).convert(DType::Bool)});
    const Tolerance tol{1e-5, 1e-5};
    out[0].assert_approx_eq(f32(plain.run(q, k, v), {2, 2, 3, 3}), tol);
    out[1].assert_approx_eq(f32(want_gqa, {2, 3, 16}), tol);
    out[2].assert_approx_eq(f32(cached.run(q, cat_k, cat_v), {2, 2, 3, 3}), tol);
    out[3].assert_eq(f32(cat_k, {2, 2, 7, 4}));
    out[4].assert_eq(f32(cat_v, {2, 2, 7, 3}));
    out[5].assert_approx_eq(f32(by_bool.run(q, k, v), {2, 2, 3, 3}), tol);
    out[6].assert_approx_eq(f32(by_float.run(q, k, v), {2, 2, 3, 3}), tol);
    out[7].assert_approx_eq(f32(AttentionCase{2, 2, 2, 3, 5, 4, 3, -0.5}.run(q, k, v), {2, 2, 3, 3}), tol);
    // The query that sees no key gives exact zeros (not a softmax's NaN).
    const auto masked_rows = out[5].to_vec<float>();
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t e = 0; e < 3; ++e) EXPECT_EQ(masked_rows[((2 + h) * 3 + 1) * 3 + e], 0.0F) << h << ", " << e;
  }
}

TEST(OnnxImportNewerOpsets, AttentionWindowsAndValidLengthsMaskAsDefined) {
  // Opset 25's sliding windows on a causal node, and opset 24's external
  // cache: each batch's valid key count (the causal frontier moves with it).
  Builder g(25);
  g.input("q", {2, 1, 3, 2}).input("k", {2, 1, 5, 2}).input("v", {2, 1, 5, 2}).output("windowed").output("valid");
  g.init("lengths", TensorData(std::vector<std::int64_t>{4, 2}, Shape{2}));
  auto& windowed = g.node("Attention", {"q", "k", "v"}, {"windowed"});
  Builder::attr(windowed, "left_window_size", std::int64_t{1});
  Builder::attr(windowed, "right_window_size", std::int64_t{1});
  Builder::attr(g.node("Attention", {"q", "k", "v", "", "", "", "lengths"}, {"valid"}), "is_causal", std::int64_t{1});
  const auto q = wave(12, 11), k = wave(20, 12), v = wave(20, 13);
  const double scale = 1.0 / std::sqrt(2.0);
  AttentionCase windowed_case{2, 1, 1, 3, 5, 2, 2, scale};
  windowed_case.allowed = [](std::size_t, std::size_t i, std::size_t j) {
    return j + 1 >= i && j <= i + 1;  // |i - j| <= 1
  };
  // Batch 0 has 4 valid keys (offset 1), batch 1 has 2 (offset -1: query 0 sees nothing).
  AttentionCase valid_case{2, 1, 1, 3, 5, 2, 2, scale};
  valid_case.allowed = [](std::size_t n, std::size_t i, std::size_t j) {
    const std::size_t valid = n == 0 ? 4 : 2;
    return j < valid && j + 3 <= i + valid;
  };
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = g.load(device).run({f32(q, {2, 1, 3, 2}), f32(k, {2, 1, 5, 2}), f32(v, {2, 1, 5, 2})});
    out[0].assert_approx_eq(f32(windowed_case.run(q, k, v), {2, 1, 3, 2}), {1e-5, 1e-5});
    out[1].assert_approx_eq(f32(valid_case.run(q, k, v), {2, 1, 3, 2}), {1e-5, 1e-5});
  }
}

TEST(OnnxImportNewerOpsets, RotaryEmbeddingTurnsEachPairByItsPositionsAngle) {
  // Non-interleaved on [b, heads, seq, head] with position ids; interleaved
  // on [b, seq, hidden] with num_heads and only the first 4 of 6 dims turned.
  Builder g(23);
  g.input("x", {1, 2, 3, 4}).input("x3", {1, 3, 12}).output("halves").output("pairs");
  std::vector<float> cos_cache, sin_cache;
  for (int p = 0; p < 5; ++p)
    for (int f = 0; f < 2; ++f) {
      cos_cache.push_back(static_cast<float>(std::cos(0.3 * p * (f + 1))));
      sin_cache.push_back(static_cast<float>(std::sin(0.3 * p * (f + 1))));
    }
  g.init("cos", f32(cos_cache, {5, 2})).init("sin", f32(sin_cache, {5, 2}));
  g.init("positions", TensorData(std::vector<std::int64_t>{4, 0, 2}, Shape{1, 3}));
  g.node("RotaryEmbedding", {"x", "cos", "sin", "positions"}, {"halves"});
  auto& pairs = g.node("RotaryEmbedding", {"x3", "cos", "sin", "positions"}, {"pairs"});
  Builder::attr(pairs, "interleaved", std::int64_t{1});
  Builder::attr(pairs, "num_heads", std::int64_t{2});
  Builder::attr(pairs, "rotary_embedding_dim", std::int64_t{4});
  const auto x = wave(24, 21), x3 = wave(36, 22);
  const std::int64_t position[3] = {4, 0, 2};
  const auto turn = [&](double a, double b, std::size_t t, std::size_t f, bool second) {
    const double c = cos_cache[static_cast<std::size_t>(position[t]) * 2 + f];
    const double s = sin_cache[static_cast<std::size_t>(position[t]) * 2 + f];
    return static_cast<float>(second ? s * a + c * b : c * a - s * b);
  };
  std::vector<float> halves(x.size()), pairs_want(x3);
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t t = 0; t < 3; ++t) {
      const float* row = &x[(h * 3 + t) * 4];
      float* out = &halves[(h * 3 + t) * 4];
      for (std::size_t f = 0; f < 2; ++f) {
        out[f] = turn(row[f], row[f + 2], t, f, false);
        out[f + 2] = turn(row[f], row[f + 2], t, f, true);
      }
    }
  for (std::size_t t = 0; t < 3; ++t)
    for (std::size_t h = 0; h < 2; ++h) {
      const float* row = &x3[t * 12 + h * 6];
      float* out = &pairs_want[t * 12 + h * 6];
      for (std::size_t f = 0; f < 2; ++f) {
        out[2 * f] = turn(row[2 * f], row[2 * f + 1], t, f, false);
        out[2 * f + 1] = turn(row[2 * f], row[2 * f + 1], t, f, true);
      }  // dims 4 and 5 pass through
    }
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = g.load(device).run({f32(x, {1, 2, 3, 4}), f32(x3, {1, 3, 12})});
    out[0].assert_approx_eq(f32(halves, {1, 2, 3, 4}), {1e-6, 1e-6});
    out[1].assert_approx_eq(f32(pairs_want, {1, 3, 12}), {1e-6, 1e-6});
  }
}

TEST(OnnxImportNewerOpsets, RmsAndGroupNormalizationFollowTheirOpsetsDefinitions) {
  const auto x = wave(2 * 4 * 3, 31);  // [2, 4, 3]
  const auto rms = [&](std::size_t from, const std::vector<float>& scale) {
    // Normalised over the dims from `from` on ([2, 4, 3]: 1 or 2).
    const std::size_t span = from == 1 ? 12 : 3;
    std::vector<float> out(x.size());
    for (std::size_t start = 0; start < x.size(); start += span) {
      double sq = 0.0;
      for (std::size_t i = 0; i < span; ++i) sq += static_cast<double>(x[start + i]) * x[start + i];
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(span) + 1e-3);
      for (std::size_t i = 0; i < span; ++i)
        out[start + i] = static_cast<float>(x[start + i] * inv * scale[(start + i) % scale.size()]);
    }
    return out;
  };
  // Two groups of two channels; affine per group (opset 18) or per channel (21).
  const auto group = [&](const std::vector<float>& scale, const std::vector<float>& bias, bool per_channel) {
    std::vector<float> out(x.size());
    for (std::size_t n = 0; n < 2; ++n)
      for (std::size_t grp = 0; grp < 2; ++grp) {
        const std::size_t start = n * 12 + grp * 6;
        double mean = 0.0, var = 0.0;
        for (std::size_t i = 0; i < 6; ++i) mean += x[start + i] / 6.0;
        for (std::size_t i = 0; i < 6; ++i) var += (x[start + i] - mean) * (x[start + i] - mean) / 6.0;
        for (std::size_t i = 0; i < 6; ++i) {
          const std::size_t c = grp * 2 + i / 3, at = per_channel ? c : grp;
          out[start + i] = static_cast<float>((x[start + i] - mean) / std::sqrt(var + 1e-5) * scale[at] + bias[at]);
        }
      }
    return out;
  };
  const std::vector<float> last_scale{0.5F, 2.0F, -1.0F}, two_dims_scale = wave(12, 32);
  const std::vector<float> per_channel_scale{1, 2, 3, 4}, per_channel_bias{0.5F, -0.5F, 1, 0};
  const std::vector<float> per_group_scale{2, -1}, per_group_bias{1, 3};

  Builder g21(21);
  g21.input("x", {2, 4, 3}).output("gn");
  g21.init("scale", f32(per_channel_scale, {4})).init("bias", f32(per_channel_bias, {4}));
  Builder::attr(g21.node("GroupNormalization", {"x", "scale", "bias"}, {"gn"}), "num_groups", std::int64_t{2});
  Builder g18(18);
  g18.input("x", {2, 4, 3}).output("gn");
  g18.init("scale", f32(per_group_scale, {2})).init("bias", f32(per_group_bias, {2}));
  Builder::attr(g18.node("GroupNormalization", {"x", "scale", "bias"}, {"gn"}), "num_groups", std::int64_t{2});
  Builder g23(23);
  g23.input("x", {2, 4, 3}).output("last").output("two");
  g23.init("s1", f32(last_scale, {3})).init("s2", f32(two_dims_scale, {4, 3}));
  Builder::attr(g23.node("RMSNormalization", {"x", "s1"}, {"last"}), "epsilon", 1e-3F);
  auto& two = g23.node("RMSNormalization", {"x", "s2"}, {"two"});
  Builder::attr(two, "axis", std::int64_t{-2});
  Builder::attr(two, "epsilon", 1e-3F);

  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const TensorData in = f32(x, {2, 4, 3});
    const Tolerance tol{1e-5, 1e-5};
    g21.load(device).run({in})[0].assert_approx_eq(f32(group(per_channel_scale, per_channel_bias, true), {2, 4, 3}),
                                                   tol);
    g18.load(device).run({in})[0].assert_approx_eq(f32(group(per_group_scale, per_group_bias, false), {2, 4, 3}), tol);
    const auto out = g23.load(device).run({in});
    out[0].assert_approx_eq(f32(rms(2, last_scale), {2, 4, 3}), tol);
    out[1].assert_approx_eq(f32(rms(1, two_dims_scale), {2, 4, 3}), tol);
  }

  // Each version's affine shape is the one it reads; the other is named.
  Builder wrong(21);
  wrong.input("x", {2, 4, 3}).output("gn");
  wrong.init("scale", f32(per_group_scale, {2})).init("bias", f32(per_group_bias, {2}));
  Builder::attr(wrong.node("GroupNormalization", {"x", "scale", "bias"}, {"gn"}), "num_groups", std::int64_t{2});
  const std::string e = error_of([&] { (void)wrong.load(Device::flex()).run({f32(x, {2, 4, 3})}); });
  EXPECT_NE(e.find("scale must be 1-D with 4 values (one per channel, opset 21), it has shape [2]"), std::string::npos)
      << e;
}

TEST(OnnxImportNewerOpsets, SwishAndBlockedQuantizationComputeWhatOnnxDefines) {
  Builder g(24);
  g.input("x", {5})
      .input("w", {2, 6})
      .output("swish")
      .output("silu")
      .output("dq")
      .output("q", ::onnx::TensorProto::INT8);
  g.output("q_u8", ::onnx::TensorProto::UINT8);
  // Blocks of 4 along axis 1 of a [2, 6] weight: two blocks, the second short.
  g.init("w_int", TensorData(std::vector<std::int8_t>{1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}, Shape{2, 6}));
  g.init("scale", f32({0.5F, 2.0F, 0.25F, 4.0F}, {2, 2}));
  g.init("zp", TensorData(std::vector<std::int8_t>{0, 1, -1, 2}, Shape{2, 2}));
  Builder::attr(g.node("Swish", {"x"}, {"swish"}), "alpha", 1.5F);
  g.node("Swish", {"x"}, {"silu"});
  auto& dq = g.node("DequantizeLinear", {"w_int", "scale", "zp"}, {"dq"});
  Builder::attr(dq, "block_size", std::int64_t{4});
  auto& q = g.node("QuantizeLinear", {"w", "scale", "zp"}, {"q"});
  Builder::attr(q, "block_size", std::int64_t{4});
  // output_dtype without a zero point (opset 21), rounding done in float.
  g.init("one_scale", f32({0.5F}, {}));
  auto& q_u8 = g.node("QuantizeLinear", {"x", "one_scale"}, {"q_u8"});
  Builder::attr(q_u8, "output_dtype", std::int64_t{::onnx::TensorProto::UINT8});
  Builder::attr(q_u8, "precision", std::int64_t{::onnx::TensorProto::FLOAT});

  const std::vector<float> x{-2.0F, -0.5F, 0.0F, 1.25F, 3.0F};
  std::vector<float> swish, silu;
  for (const float v : x) {
    swish.push_back(static_cast<float>(v / (1.0 + std::exp(-1.5 * v))));
    silu.push_back(static_cast<float>(v / (1.0 + std::exp(-static_cast<double>(v)))));
  }
  // Row 0: (w - 0) * 0.5 for columns 0-3, (w - 1) * 2 for 4-5; row 1: (w + 1) * 0.25, (w - 2) * 4.
  const std::vector<float> dq_want{0.5F, 1.0F, 1.5F, 2.0F, 8.0F, 10.0F, 0.0F, -0.25F, -0.5F, -0.75F, -28.0F, -32.0F};
  const std::vector<float> w{1.0F, -0.75F, 0.2F, 100.0F, 5.0F, -3.0F, 0.3F, 0.125F, -0.375F, 40.0F, 1.0F, -9.0F};
  // round_half_even(w / scale) + zp, saturated to int8.
  const std::vector<std::int8_t> q_want{2, -2, 0, 127, 3, -1, 0, -1, -3, 127, 2, 0};
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = g.load(device).run({f32(x, {5}), f32(w, {2, 6})});
    out[0].assert_approx_eq(f32(swish, {5}), {1e-6, 1e-6});
    out[1].assert_approx_eq(f32(silu, {5}), {1e-6, 1e-6});
    out[2].assert_eq(f32(dq_want, {2, 6}));
    out[3].assert_eq(TensorData(q_want, Shape{2, 6}));
    out[4].assert_eq(TensorData(std::vector<std::uint8_t>{0, 0, 0, 2, 6}, Shape{5}));
  }

  // A block scale whose shape does not cover the input, and a zero point of another size.
  Builder bad(21);
  bad.input("w", {2, 6}, ::onnx::TensorProto::INT8).output("y").init("s", f32({1, 2, 3}, {1, 3}));
  Builder::attr(bad.node("DequantizeLinear", {"w", "s"}, {"y"}), "block_size", std::int64_t{4});
  const std::string e = error_of([&] {
    (void)bad.load(Device::flex()).run({TensorData(std::vector<std::int8_t>(12, 1), Shape{2, 6})});
  });
  EXPECT_NE(e.find("with block_size 4 along axis 1, the scale must have shape like the input [2, 6] with 2 blocks on "
                   "that axis, it has shape [1, 3]"),
            std::string::npos)
      << e;
}

/// A 4-bit initializer (INT4 22, UINT4 21) of `values`, packed two a byte
/// with the first in the low bits, in raw_data or (`typed`) in int32_data.
void add_four_bit(Builder& g, const std::string& name, std::int32_t type, const std::vector<int>& values,
                  const std::vector<std::int64_t>& dims, bool typed = false) {
  std::string packed((values.size() + 1) / 2, '\0');
  for (std::size_t i = 0; i < values.size(); ++i)
    packed[i / 2] = static_cast<char>(static_cast<unsigned char>(packed[i / 2]) |
                                      ((static_cast<unsigned>(values[i]) & 0xFU) << (4 * (i % 2))));
  auto* t = g.g.add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (auto d : dims) t->add_dims(d);
  if (typed) {
    for (char c : packed) t->add_int32_data(static_cast<unsigned char>(c));
  } else {
    t->set_raw_data(packed);
  }
}

TEST(OnnxImportNewerOpsets, FourBitIntegersAreReadUnpackedAndQuantizeLinearSaturatesToThem) {
  constexpr std::int32_t kUint4 = 21, kInt4 = 22;
  Builder g(21);
  g.model.set_ir_version(10);
  g.input("x", {5}).input("zp_in", {}, static_cast<::onnx::TensorProto_DataType>(kInt4));
  g.output("signed").output("unsigned").output("typed").output("q").output("q_u4").output("q_in");
  // Five values: the last byte holds one, its high bits unused.
  add_four_bit(g, "w_i4", kInt4, {-8, -1, 0, 7, 3}, {5});
  add_four_bit(g, "w_u4", kUint4, {15, 0, 8, 1, 9}, {5});
  add_four_bit(g, "w_typed", kInt4, {-3, 5, -7, 2, -1}, {5}, /*typed=*/true);
  add_four_bit(g, "zp_i4", kInt4, {0}, {});
  g.init("half", f32({0.5F}, {}));
  g.node("DequantizeLinear", {"w_i4", "half"}, {"signed"});
  g.node("DequantizeLinear", {"w_u4", "half"}, {"unsigned"});
  g.node("DequantizeLinear", {"w_typed", "half"}, {"typed"});
  // A 4-bit zero point makes the output INT4: x / 0.5 saturates to [-8, 7].
  g.node("QuantizeLinear", {"x", "half", "zp_i4"}, {"q4"});
  g.node("DequantizeLinear", {"q4", "half", "zp_i4"}, {"q"});
  // output_dtype UINT4 without a zero point: [0, 15].
  Builder::attr(g.node("QuantizeLinear", {"x", "half"}, {"qu4"}), "output_dtype", std::int64_t{kUint4});
  g.node("DequantizeLinear", {"qu4", "half"}, {"q_u4"});
  // An INT4 zero point given as a graph input (fed as I8) saturates the same way.
  g.node("QuantizeLinear", {"x", "half", "zp_in"}, {"qi4"});
  g.node("DequantizeLinear", {"qi4", "half", "zp_in"}, {"q_in"});
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = g.load(device).run(
        {f32({-100.0F, -1.6F, 0.2F, 3.4F, 100.0F}, {5}), TensorData(std::vector<std::int8_t>{1}, Shape{})});
    out[0].assert_eq(f32({-4.0F, -0.5F, 0.0F, 3.5F, 1.5F}, {5}));
    out[1].assert_eq(f32({7.5F, 0.0F, 4.0F, 0.5F, 4.5F}, {5}));
    out[2].assert_eq(f32({-1.5F, 2.5F, -3.5F, 1.0F, -0.5F}, {5}));
    out[3].assert_eq(f32({-4.0F, -1.5F, 0.0F, 3.5F, 3.5F}, {5}));  // -200 -> -8, -3.2 -> -3, 6.8 -> 7, 200 -> 7
    out[4].assert_eq(f32({0.0F, 0.0F, 0.0F, 3.5F, 7.5F}, {5}));
    // Zero point 1: round(x / 0.5) + 1 saturated to [-8, 7], minus 1, times 0.5.
    out[5].assert_eq(f32({-4.5F, -1.5F, 0.0F, 3.0F, 3.0F}, {5}));
  }

  Builder short_data(21);
  short_data.model.set_ir_version(10);
  short_data.output("y");
  add_four_bit(short_data, "w", kInt4, {1, 2, 3}, {6});  // two bytes for six values that need three
  short_data.init("one", f32({1.0F}, {}));
  short_data.node("DequantizeLinear", {"w", "one"}, {"y"});
  const std::string e = error_of([&] { (void)short_data.load(Device::flex()); });
  EXPECT_NE(e.find("tensor 'w' (INT4 [6]) has 2 bytes of data, expected 3 (two 4-bit values a byte)"),
            std::string::npos)
      << e;

  // Dims that claim 2^40 values over two bytes (found by the onnx fuzz
  // target: the buffer was allocated before the size was checked).
  Builder huge(21);
  huge.model.set_ir_version(10);
  huge.output("y");
  add_four_bit(huge, "w", kInt4, {1, 2, 3}, {std::int64_t{1} << 40});
  huge.init("one", f32({1.0F}, {}));
  huge.node("DequantizeLinear", {"w", "one"}, {"y"});
  const std::string h = error_of([&] { (void)huge.load(Device::flex()); });
  EXPECT_NE(h.find("has 2 bytes of data, expected 549755813888"), std::string::npos) << h;
}

TEST(OnnxImportNewerOpsets, MatMulNBitsDequantizesEachBlockAsOnnxRuntimeDefines) {
  // ONNX Runtime's com.microsoft MatMulNBits with 2-bit weights (its
  // quantizer's fixtures cover 4 and 8 bits): K = 20 in blocks of 16 (the
  // second short), N = 3, zero points packed four a byte, a bias.
  constexpr std::int64_t kK = 20, kN = 3, kBlock = 16;
  std::vector<int> codes(kN * 32);  // [N, 2 blocks, 16 values], padding zero
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = (i % 32) < kK ? static_cast<int>((i * 7 + i / 5) % 4) : 0;
  std::vector<std::uint8_t> b(kN * 2 * 4, 0);  // 4 bytes a block of 16 two-bit values
  for (std::size_t i = 0; i < codes.size(); ++i)
    b[i / 4] = static_cast<std::uint8_t>(b[i / 4] | (codes[i] << (2 * (i % 4))));
  const std::vector<float> scales{0.5F, 2.0F, 1.0F, 0.25F, 4.0F, 1.5F};  // [N, 2]
  const std::vector<int> zero{1, 2, 3, 0, 2, 1};                         // [N, 2]
  std::vector<std::uint8_t> zp(kN, 0);                                   // a byte a row
  for (std::size_t r = 0; r < static_cast<std::size_t>(kN); ++r)
    zp[r] = static_cast<std::uint8_t>(zero[2 * r] | (zero[2 * r + 1] << 2));
  std::vector<float> x(2 * kK);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.3 * static_cast<double>(i)));
  const std::vector<float> bias{0.25F, -1.0F, 2.0F};
  std::vector<float> want(2 * kN);
  for (std::size_t m = 0; m < 2; ++m)
    for (std::size_t n = 0; n < static_cast<std::size_t>(kN); ++n) {
      double sum = bias[n];
      for (std::size_t k = 0; k < static_cast<std::size_t>(kK); ++k) {
        const std::size_t blk = k / kBlock;
        sum += static_cast<double>(x[m * kK + k]) * (codes[n * 32 + k] - zero[n * 2 + blk]) * scales[n * 2 + blk];
      }
      want[m * kN + n] = static_cast<float>(sum);
    }

  auto model = [&](bool with_g_idx, std::int64_t k) {
    Builder g(21);
    g.model.set_ir_version(10);
    auto* ms = g.model.add_opset_import();
    ms->set_domain("com.microsoft");
    ms->set_version(1);
    g.input("x", {2, kK}).output("y");
    g.init("b", TensorData(b, Shape{kN, 2, 4}));
    g.init("scales", f32(scales, {kN * 2}));
    g.init("zp", TensorData(zp, Shape{kN}));
    g.init("bias", f32(bias, {kN}));
    g.init("g_idx", TensorData(std::vector<std::int32_t>(kK, 0), Shape{kK}));
    auto& n = g.node("MatMulNBits", {"x", "b", "scales", "zp", with_g_idx ? "g_idx" : "", "bias"}, {"y"});
    n.set_domain("com.microsoft");
    Builder::attr(n, "K", k);
    Builder::attr(n, "N", kN);
    Builder::attr(n, "bits", std::int64_t{2});
    Builder::attr(n, "block_size", kBlock);
    return g;
  };
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    model(false, kK).load(device).run({f32(x, {2, kK})})[0].assert_approx_eq(f32(want, {2, kN}), {1e-5, 1e-5});
  }
  const std::string e = error_of([&] { (void)model(true, kK).load(Device::flex()).run({f32(x, {2, kK})}); });
  EXPECT_NE(e.find("node 'MatMulNBits_1' (MatMulNBits): g_idx (a column order, act-order quantization) is not "
                   "supported"),
            std::string::npos)
      << e;
  // Sizes that would overflow the products computed from them are refused.
  const std::string huge = error_of([&] {
    (void)model(false, std::int64_t{1} << 40).load(Device::flex()).run({f32(x, {2, kK})});
  });
  EXPECT_NE(huge.find("attributes K and N must be in [1, 2^30], they are 1099511627776 and 3"), std::string::npos)
      << huge;
}

TEST(OnnxImportNewerOpsets, QLinearOperatorsRequantizeAsDefined) {
  // QLinearMatMul with b's scale and zero point per column, and QLinearConv
  // with a per-channel weight scale and zero point and an int32 bias: sums
  // in integers, then round(sum x (input scale x weight scale / output
  // scale)) + zero point, saturated, with the multiplier in f32.
  Builder g(21);
  g.input("a", {2, 3}, ::onnx::TensorProto::UINT8).input("x", {1, 1, 3, 3}, ::onnx::TensorProto::UINT8);
  g.output("mm", ::onnx::TensorProto::UINT8).output("conv", ::onnx::TensorProto::INT8);
  const auto u8 = [](std::vector<std::uint8_t> v, Shape s) { return TensorData(std::move(v), std::move(s)); };
  const auto i8 = [](std::vector<std::int8_t> v, Shape s) { return TensorData(std::move(v), std::move(s)); };
  g.init("a_scale", f32({0.5F}, {})).init("a_zp", u8({10}, {}));
  g.init("b", i8({3, -7, 12, 5, -2, 9}, {3, 2})).init("b_scale", f32({0.25F, 0.125F}, {2}));
  g.init("b_zp", i8({0, -1}, {2})).init("y_scale", f32({6.0F}, {})).init("y_zp", u8({128}, {}));
  g.node("QLinearMatMul", {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"}, {"mm"});
  g.init("x_scale", f32({0.5F}, {})).init("x_zp", u8({2}, {}));
  g.init("w", i8({1, -2, 3, 4, -5, 6, 7, -8}, {2, 1, 2, 2})).init("w_scale", f32({0.1F, 0.2F}, {2}));
  g.init("w_zp", i8({0, 1}, {2})).init("c_scale", f32({0.5F}, {})).init("c_zp", i8({-3}, {}));
  g.init("bias", TensorData(std::vector<std::int32_t>{5, -3}, Shape{2}));
  g.node("QLinearConv", {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "c_scale", "c_zp", "bias"}, {"conv"});

  const std::vector<std::uint8_t> a{12, 0, 255, 9, 100, 37};
  const std::vector<std::uint8_t> x{0, 7, 255, 3, 2, 90, 41, 5, 18};
  const auto requantize = [](std::int32_t sum, float multiplier, float zp, float lo, float hi) {
    return std::clamp(std::nearbyint(static_cast<float>(sum) * multiplier) + zp, lo, hi);
  };
  const std::vector<std::int8_t> b{3, -7, 12, 5, -2, 9}, w{1, -2, 3, 4, -5, 6, 7, -8};
  std::vector<std::uint8_t> mm;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      std::int32_t sum = 0;
      for (int l = 0; l < 3; ++l) sum += (a[i * 3 + l] - 10) * (b[l * 2 + j] - (j == 0 ? 0 : -1));
      const float multiplier = 0.5F * (j == 0 ? 0.25F : 0.125F) / 6.0F;
      mm.push_back(static_cast<std::uint8_t>(requantize(sum, multiplier, 128, 0, 255)));
    }
  std::vector<std::int8_t> conv;
  for (int o = 0; o < 2; ++o)
    for (int y = 0; y < 2; ++y)
      for (int xx = 0; xx < 2; ++xx) {
        std::int32_t sum = o == 0 ? 5 : -3;
        for (int ky = 0; ky < 2; ++ky)
          for (int kx = 0; kx < 2; ++kx)
            sum += (x[(y + ky) * 3 + xx + kx] - 2) * (w[o * 4 + ky * 2 + kx] - (o == 0 ? 0 : 1));
        const float multiplier = 0.5F * (o == 0 ? 0.1F : 0.2F) / 0.5F;
        conv.push_back(static_cast<std::int8_t>(requantize(sum, multiplier, -3, -128, 127)));
      }
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = g.load(device).run({u8(a, {2, 3}), u8(x, {1, 1, 3, 3})});
    out[0].assert_eq(u8(mm, {2, 2}));
    out[1].assert_eq(i8(conv, {1, 2, 2, 2}));
  }

  // A weight zero point that is neither one value nor one per output channel.
  Builder bad(13);
  bad.input("x", {1, 1, 3, 3}, ::onnx::TensorProto::UINT8).output("y", ::onnx::TensorProto::INT8);
  bad.init("s", f32({1}, {})).init("zp", u8({0}, {})).init("w", i8({1, 2, 3, 4}, {1, 1, 2, 2}));
  bad.init("w_zp", i8({0, 0}, {2})).init("y_zp", i8({0}, {}));
  bad.node("QLinearConv", {"x", "s", "zp", "w", "s", "w_zp", "s", "y_zp"}, {"y"});
  const std::string e = error_of([&] { (void)bad.load(Device::flex()).run({u8(x, {1, 1, 3, 3})}); });
  EXPECT_NE(e.find("the weight's zero point has shape [2]; it must be one value or one per output channel (1)"),
            std::string::npos)
      << e;
}

TEST(OnnxImportNewerOpsets, OnnxRuntimesQLinearAddAndGlobalAveragePoolRequantizeAsItDoes) {
  // com.microsoft's QLinearAdd (B broadcast per channel) and
  // QLinearGlobalAveragePool, in f32 as ONNX Runtime computes them; an
  // operator of that domain import does not run is named with its domain.
  Builder g(13);
  auto* msft = g.model.add_opset_import();
  msft->set_domain("com.microsoft");
  msft->set_version(1);
  g.input("a", {1, 2, 2, 2}, ::onnx::TensorProto::UINT8);
  g.output("sum", ::onnx::TensorProto::UINT8).output("mean", ::onnx::TensorProto::UINT8);
  const auto u8 = [](std::vector<std::uint8_t> v, Shape s) { return TensorData(std::move(v), std::move(s)); };
  g.init("a_scale", f32({0.5F}, {})).init("a_zp", u8({100}, {})).init("b", u8({7, 250}, {2, 1, 1}));
  g.init("b_scale", f32({0.25F}, {})).init("b_zp", u8({128}, {})).init("c_scale", f32({0.75F}, {}));
  g.init("c_zp", u8({90}, {})).init("y_scale", f32({0.2F}, {})).init("y_zp", u8({20}, {}));
  g.node("QLinearAdd", {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "c_scale", "c_zp"}, {"sum"})
      .set_domain("com.microsoft");
  g.node("QLinearGlobalAveragePool", {"a", "a_scale", "a_zp", "y_scale", "y_zp"}, {"mean"}).set_domain("com.microsoft");
  const std::vector<std::uint8_t> a{0, 37, 101, 255, 180, 99, 3, 140};
  std::vector<std::uint8_t> sum, mean;
  const float ratio_a = 0.5F / 0.75F, ratio_b = 0.25F / 0.75F;
  for (std::size_t i = 0; i < 8; ++i) {
    const float v = ratio_a * static_cast<float>(a[i] - 100) + ratio_b * static_cast<float>((i < 4 ? 7 : 250) - 128);
    sum.push_back(static_cast<std::uint8_t>(std::clamp(std::nearbyint(v) + 90.0F, 0.0F, 255.0F)));
  }
  for (std::size_t c = 0; c < 2; ++c) {
    std::int32_t total = 0;
    for (std::size_t i = 0; i < 4; ++i) total += a[c * 4 + i];
    const float scale = 0.5F / (0.2F * 4.0F);
    mean.push_back(static_cast<std::uint8_t>(
        std::clamp(std::nearbyint(static_cast<float>(total - 100 * 4) * scale) + 20.0F, 0.0F, 255.0F)));
  }
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = g.load(device).run({u8(a, {1, 2, 2, 2})});
    out[0].assert_eq(u8(sum, {1, 2, 2, 2}));
    out[1].assert_eq(u8(mean, {1, 2, 1, 1}));
  }
  Builder unknown(13);
  *unknown.model.add_opset_import() = *msft;
  unknown.input("x", {2}).output("y");
  unknown.node("FusedGemm", {"x", "x"}, {"y"}).set_domain("com.microsoft");
  const std::string e = error_of([&] { unknown.load(Device::flex()); });
  EXPECT_NE(e.find("unsupported operators: com.microsoft::FusedGemm (node 'FusedGemm_1')"), std::string::npos) << e;
}

TEST(OnnxImportNewerOpsets, MalformedAttentionNodesAreNamed) {
  const auto attention_error = [](const std::function<void(Builder&)>& make, std::vector<TensorData> inputs) {
    Builder g(24);
    make(g);
    return error_of([&] { (void)g.load(Device::flex()).run(inputs); });
  };
  const TensorData x3 = f32(wave(2 * 3 * 8, 41), {2, 3, 8}), x4 = f32(wave(2 * 2 * 3 * 4, 42), {2, 2, 3, 4});
  const std::string no_heads = attention_error(
      [](Builder& g) {
        g.input("x", {2, 3, 8}).output("y");
        g.node("Attention", {"x", "x", "x"}, {"y"});
      },
      {x3});
  EXPECT_NE(no_heads.find("3-D Q, K and V need the q_num_heads and kv_num_heads attributes"), std::string::npos)
      << no_heads;
  const std::string uneven = attention_error(
      [](Builder& g) {
        g.input("x", {2, 3, 8}).output("y");
        auto& n = g.node("Attention", {"x", "x", "x"}, {"y"});
        Builder::attr(n, "q_num_heads", std::int64_t{3});
        Builder::attr(n, "kv_num_heads", std::int64_t{2});
      },
      {x3});
  EXPECT_NE(uneven.find("Q's hidden size 8 is not a multiple of 3 heads"), std::string::npos) << uneven;
  const std::string half_cache = attention_error(
      [](Builder& g) {
        g.input("x", {2, 2, 3, 4}).output("y");
        g.node("Attention", {"x", "x", "x", "", "x"}, {"y"});
      },
      {x4});
  EXPECT_NE(half_cache.find("past_key and past_value must be given together"), std::string::npos) << half_cache;
  const std::string lengths = attention_error(
      [](Builder& g) {
        g.input("x", {2, 2, 3, 4}).output("y");
        g.init("n", TensorData(std::vector<std::int64_t>{3, 9}, Shape{2}));
        g.node("Attention", {"x", "x", "x", "", "", "", "n"}, {"y"});
      },
      {x4});
  EXPECT_NE(lengths.find("nonpad_kv_seqlen 9 is outside [0, 3]"), std::string::npos) << lengths;
  const std::string long_mask = attention_error(
      [](Builder& g) {
        g.input("x", {2, 2, 3, 4}).output("y").init("m", f32(std::vector<float>(3 * 4), {3, 4}));
        g.node("Attention", {"x", "x", "x", "m"}, {"y"});
      },
      {x4});
  EXPECT_NE(long_mask.find("attn_mask covers 4 keys, more than the 3 there are"), std::string::npos) << long_mask;
  EXPECT_NE(long_mask.find("node 'Attention_1' (Attention)"), std::string::npos) << long_mask;
}

TEST(OnnxImportNewerOpsets, TheNewestOpsetAndIrVersionImportReadsLoadAndRun) {
  // Opset 26 with IR version 13; one past either is refused
  // (import_test.cpp, ModelsNewerThanTheCheckerAreCheckedByBurn and
  // AMissingInitializerAndANewerOpsetAreRefused).
  Builder newest(26);
  newest.model.set_ir_version(13);
  newest.input("x", {2}).output("y");
  newest.node("Relu", {"x"}, {"y"});
  newest.load(Device::flex()).run({f32({-1, 2}, {2})})[0].assert_eq(f32({0, 2}, {2}));
}

}  // namespace
}  // namespace burn
