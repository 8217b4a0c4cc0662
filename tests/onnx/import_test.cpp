// ONNX import: hand-made graphs for operator semantics ONNX defines and burn
// spells differently (broadcasting across ranks, negative indices, slice
// clamping, shape arithmetic), bad files, bad inputs, and an imported model
// as a module (gradients, records).
#include <burn/onnx.hpp>
#include <burn/record/module_record.hpp>
#include <gtest/gtest.h>

#include <map>
#include <numbers>
#include <numeric>
#include <tuple>

#include "burn_test.hpp"
#include "onnx_builder.hpp"
#include "onnx_models.hpp"

namespace burn {
namespace {

using namespace onnx_test;

TEST(OnnxImport, GemmWithTransposedBAndFlatten) {
  Builder b;
  b.input("x", {2, 1, 3}).output("y");
  b.init("w", f32({1, 2, 3, 4, 5, 6}, {2, 3})).init("c", f32({10, 20}, {2}));
  b.node("Flatten", {"x"}, {"flat"});
  auto& gemm = b.node("Gemm", {"flat", "w", "c"}, {"y"});
  Builder::attr(gemm, "transB", std::int64_t{1});
  const auto out = b.load(Device::flex()).run({f32({1, 0, -1, 2, 2, 2}, {2, 1, 3})});
  // [1 0 -1]·[1 2 3] = -2, ·[4 5 6] = -2; [2 2 2]·... = 12, 30; plus c.
  out[0].assert_eq(f32({8, 18, 22, 50}, {2, 2}));
}

TEST(OnnxImport, ShapeArithmeticAroundReshapeRunsOnTheHostForAnyBatch) {
  // The pattern exporters write for x.view(x.size(0), -1).
  Builder b;
  b.input("x", {-1, 2, 3}).output("y");
  b.init("zero", i64({0})).init("minus_one", i64({-1}));
  b.node("Shape", {"x"}, {"shape"});
  auto& gather = b.node("Gather", {"shape", "zero"}, {"batch"});
  Builder::attr(gather, "axis", std::int64_t{0});
  b.node("Concat", {"batch", "minus_one"}, {"target"}).add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  b.node("Reshape", {"x", "target"}, {"y"});
  const auto model = b.load(Device::flex());
  for (std::size_t n : {1u, 4u}) {
    std::vector<float> v(n * 6);
    std::iota(v.begin(), v.end(), 0.0F);
    const auto out = model.run({f32(v, {n, 2, 3})});
    out[0].assert_eq(f32(v, {n, 6}));
  }
}

TEST(OnnxImport, SliceClampsAndStepsBackwardAsOnnxSays) {
  Builder b;
  b.input("x", {6}).output("y").output("z");
  b.init("starts", i64({-1})).init("ends", i64({-100})).init("axes", i64({0})).init("steps", i64({-2}));
  b.init("s2", i64({2})).init("e2", i64({1000}));
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  b.node("Slice", {"x", "s2", "e2"}, {"z"});
  const auto out = b.load(Device::flex()).run({f32({0, 1, 2, 3, 4, 5}, {6})});
  out[0].assert_eq(f32({5, 3, 1}, {3}));
  out[1].assert_eq(f32({2, 3, 4, 5}, {4}));
}

TEST(OnnxImport, PadInEachModeAndNegativePadsCrop) {
  Builder b;
  b.input("x", {2, 3}).input("r", {1, 4}).output("constant").output("reflect").output("edge").output("crop");
  b.init("p_const", i64({1, 0, 0, 2})).init("nine", f32({9}, {}));
  b.init("p_side", i64({0, 2, 0, 1})).init("p_crop", i64({0, -1, 0, -1}));
  b.node("Pad", {"x", "p_const", "nine"}, {"constant"});
  Builder::attr(b.node("Pad", {"r", "p_side"}, {"reflect"}), "mode", "reflect");
  Builder::attr(b.node("Pad", {"r", "p_side"}, {"edge"}), "mode", "edge");
  b.node("Pad", {"r", "p_crop"}, {"crop"});
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({1, 2, 3, 4}, {1, 4})});
    out[0].assert_eq(f32({9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9}, {3, 5}));
    out[1].assert_eq(f32({3, 2, 1, 2, 3, 4, 3}, {1, 7}));
    out[2].assert_eq(f32({1, 1, 1, 2, 3, 4, 4}, {1, 7}));
    out[3].assert_eq(f32({2, 3}, {1, 2}));
  }
  Builder bad;
  bad.input("r", {1, 4}).output("y").init("p", i64({0, 4, 0, 0}));
  Builder::attr(bad.node("Pad", {"r", "p"}, {"y"}), "mode", "reflect");
  EXPECT_NE(error_of([&] {
              (void)bad.load(Device::flex()).run({f32({1, 2, 3, 4}, {1, 4})});
            }).find("reflect padding of 4 on axis 1 of length 4"),
            std::string::npos);
}

TEST(OnnxImport, AsymmetricAndSamePaddingPadTheInputFirst) {
  // x = [[1, 2], [3, 4]] (and its negation), 2x2 kernels of ones.
  Builder b;
  b.input("x", {1, 1, 2, 2}).input("x3", {1, 1, 3, 3}).input("neg", {1, 1, 2, 2});
  b.output("end_only").output("same_upper").output("same_lower").output("pool").output("transposed");
  b.init("w", f32({1, 1, 1, 1}, {1, 1, 2, 2}));
  Builder::attr(b.node("Conv", {"x", "w"}, {"end_only"}), "pads", std::vector<std::int64_t>{0, 0, 1, 1});
  Builder::attr(b.node("Conv", {"x3", "w"}, {"same_upper"}), "auto_pad", "SAME_UPPER");
  Builder::attr(b.node("Conv", {"x3", "w"}, {"same_lower"}), "auto_pad", "SAME_LOWER");
  auto& pool = b.node("MaxPool", {"neg"}, {"pool"});
  Builder::attr(pool, "kernel_shape", std::vector<std::int64_t>{2, 2});
  Builder::attr(pool, "auto_pad", "SAME_UPPER");
  Builder::attr(b.node("ConvTranspose", {"x", "w"}, {"transposed"}), "pads", std::vector<std::int64_t>{0, 0, 1, 1});
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out =
        b.load(device).run({f32({1, 2, 3, 4}, {1, 1, 2, 2}), f32(std::vector<float>(9, 1.0F), {1, 1, 3, 3}),
                            f32({-1, -2, -3, -4}, {1, 1, 2, 2})});
    out[0].assert_eq(f32({10, 6, 7, 4}, {1, 1, 2, 2}));
    out[1].assert_eq(f32({4, 4, 2, 4, 4, 2, 2, 2, 1}, {1, 1, 3, 3}));
    out[2].assert_eq(f32({1, 2, 2, 2, 4, 4, 2, 4, 4}, {1, 1, 3, 3}));
    out[3].assert_eq(f32({-1, -2, -3, -4}, {1, 1, 2, 2}));  // the padding never wins a maximum
    out[4].assert_eq(f32({1, 3, 4, 10}, {1, 1, 2, 2}));     // a transposed convolution's pads crop its output
  }
}

TEST(OnnxImport, GatherTakesNegativeIndicesAndKeepsTheirShape) {
  Builder b;
  b.input("x", {3, 2}).output("y");
  b.init("idx", TensorData(std::vector<std::int64_t>{-1, 0, 1, -3}, Shape{2, 2}));
  b.node("Gather", {"x", "idx"}, {"y"});
  const auto out = b.load(Device::flex()).run({f32({0, 1, 10, 11, 20, 21}, {3, 2})});
  out[0].assert_eq(f32({20, 21, 0, 1, 10, 11, 0, 1}, {2, 2, 2}));
}

TEST(OnnxImport, BroadcastingAcrossRanksAndWhere) {
  Builder b;
  b.input("x", {2, 3}).output("y").output("w");
  b.init("row", f32({1, 2, 3}, {3})).init("zero", f32({0}, {}));
  b.node("Add", {"x", "row"}, {"y"});
  b.node("Greater", {"x", "zero"}, {"positive"});
  b.node("Where", {"positive", "x", "zero"}, {"w"});
  const auto out = b.load(Device::flex()).run({f32({-1, 0, 1, 2, -3, 4}, {2, 3})});
  out[0].assert_eq(f32({0, 2, 4, 3, -1, 7}, {2, 3}));
  out[1].assert_eq(f32({0, 0, 1, 2, 0, 4}, {2, 3}));
}

TEST(OnnxImport, LayerNormalizationAndSoftmaxMatchTheirDefinitions) {
  Builder b;
  b.input("x", {2, 4}).output("ln").output("sm");
  b.init("scale", f32({1, 2, 1, 2}, {4})).init("bias", f32({0, 0, 1, 1}, {4}));
  b.node("LayerNormalization", {"x", "scale", "bias"}, {"ln"});
  b.node("Softmax", {"x"}, {"sm"});
  const std::vector<float> x{1, 2, 3, 4, -1, 0, 0, 5};
  const auto out = b.load(Device::flex()).run({f32(x, {2, 4})});
  std::vector<float> ln, sm;
  const float scale[] = {1, 2, 1, 2}, bias[] = {0, 0, 1, 1};
  for (int r = 0; r < 2; ++r) {
    double mean = 0, var = 0, z = 0;
    for (int c = 0; c < 4; ++c) mean += x[r * 4 + c] / 4.0;
    for (int c = 0; c < 4; ++c) var += (x[r * 4 + c] - mean) * (x[r * 4 + c] - mean) / 4.0;
    for (int c = 0; c < 4; ++c) z += std::exp(x[r * 4 + c]);
    for (int c = 0; c < 4; ++c) {
      ln.push_back(static_cast<float>((x[r * 4 + c] - mean) / std::sqrt(var + 1e-5) * scale[c] + bias[c]));
      sm.push_back(static_cast<float>(std::exp(x[r * 4 + c]) / z));
    }
  }
  out[0].assert_approx_eq(f32(ln, {2, 4}), {1e-5, 1e-5});
  out[1].assert_approx_eq(f32(sm, {2, 4}), {1e-6, 1e-7});
}

TEST(OnnxImport, LayerNormalizationStatisticsAndDropoutsMaskAreTheOptionalOutputs) {
  // Axis 1 of [2, 2, 3]: each sample normalised over its six values; Mean
  // and InvStdDev have shape [2, 1, 1]. Both the fused row path (axis -1)
  // and the flattened one give them.
  Builder b;
  b.input("x", {2, 2, 3}).output("y").output("mean").output("inv").output("mean_row").output("kept");
  b.output("mask", ::onnx::TensorProto::BOOL);
  b.init("scale", f32(std::vector<float>(6, 1.0F), {2, 3})).init("row_scale", f32({1, 1, 1}, {3}));
  auto& ln = b.node("LayerNormalization", {"x", "scale"}, {"y", "mean", "inv"});
  Builder::attr(ln, "axis", std::int64_t{1});
  Builder::attr(b.node("LayerNormalization", {"x", "row_scale"}, {"y_row", "mean_row"}), "axis", std::int64_t{-1});
  b.node("Dropout", {"x"}, {"kept", "mask"});
  const std::vector<float> x{1, 2, 3, 4, 6, 8, -1, 0, 0, 5, 2, 1};
  std::vector<float> mean, inv, mean_row;
  for (int s = 0; s < 2; ++s) {
    double m = 0, v = 0;
    for (int i = 0; i < 6; ++i) m += x[s * 6 + i] / 6.0;
    for (int i = 0; i < 6; ++i) v += (x[s * 6 + i] - m) * (x[s * 6 + i] - m) / 6.0;
    mean.push_back(static_cast<float>(m));
    inv.push_back(static_cast<float>(1.0 / std::sqrt(v + 1e-5)));
    for (int r = 0; r < 2; ++r)
      mean_row.push_back((x[s * 6 + r * 3] + x[s * 6 + r * 3 + 1] + x[s * 6 + r * 3 + 2]) / 3.0F);
  }
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32(x, {2, 2, 3})});
    out[1].assert_approx_eq(f32(mean, {2, 1, 1}), {1e-6, 1e-6});
    out[2].assert_approx_eq(f32(inv, {2, 1, 1}), {1e-5, 1e-6});
    out[3].assert_approx_eq(f32(mean_row, {2, 2, 1}), {1e-6, 1e-6});
    out[4].assert_eq(f32(x, {2, 2, 3}));
    out[5].assert_eq(TensorData(std::vector<bool>(12, true), Shape{2, 2, 3}));
  }
}

TEST(OnnxImport, ReduceMeanWithoutKeepdimsAndSplit) {
  Builder b;
  b.input("x", {2, 4}).output("m").output("a").output("c");
  auto& mean = b.node("ReduceMean", {"x"}, {"m"});
  Builder::attr(mean, "axes", std::vector<std::int64_t>{-1});
  Builder::attr(mean, "keepdims", std::int64_t{0});
  b.init("sizes", i64({1, 3}));
  auto& split = b.node("Split", {"x", "sizes"}, {"a", "c"});
  Builder::attr(split, "axis", std::int64_t{1});
  const auto out = b.load(Device::flex()).run({f32({1, 2, 3, 6, 0, 0, 4, 4}, {2, 4})});
  out[0].assert_eq(f32({3, 2}, {2}));
  out[1].assert_eq(f32({1, 0}, {2, 1}));
  out[2].assert_eq(f32({2, 3, 6, 0, 4, 4}, {2, 3}));
}

TEST(OnnxImport, ArgMaxAndArgMinPickTheFirstOrTheLastOfEqualExtremes) {
  Builder b;
  b.input("x", {2, 4});
  const std::vector<std::tuple<const char*, const char*, std::int64_t, std::int64_t>> nodes{
      {"ArgMax", "max_first", 0, 1},
      {"ArgMax", "max_last", 1, 1},
      {"ArgMin", "min_first", 0, 0},
      {"ArgMin", "min_last", 1, 0}};
  for (const auto& [op, out, last, keepdims] : nodes) {
    b.output(out, ::onnx::TensorProto::INT64);
    auto& n = b.node(op, {"x"}, {out});
    Builder::attr(n, "axis", std::int64_t{-1});
    Builder::attr(n, "select_last_index", last);
    Builder::attr(n, "keepdims", keepdims);
  }
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32({1, 3, 3, 0, 2, 2, 1, 1}, {2, 4})});
    out[0].assert_eq(TensorData(std::vector<std::int64_t>{1, 0}, Shape{2, 1}));
    out[1].assert_eq(TensorData(std::vector<std::int64_t>{2, 1}, Shape{2, 1}));
    out[2].assert_eq(TensorData(std::vector<std::int64_t>{3, 2}, Shape{2}));
    out[3].assert_eq(TensorData(std::vector<std::int64_t>{3, 3}, Shape{2}));
  }
}

TEST(OnnxImport, MaxPoolIndicesNumberTheMaximaOverTheWholeTensor) {
  // [2, 2, 5, 5], kernel 3, stride 2, pads 1: each maximum's index in the
  // flattened NCHW input, as ONNX numbers them (PyTorch numbers per plane).
  Builder b;
  b.input("x", {2, 2, 5, 5}).output("y").output("i", ::onnx::TensorProto::INT64);
  auto& pool = b.node("MaxPool", {"x"}, {"y", "i"});
  Builder::attr(pool, "kernel_shape", std::vector<std::int64_t>{3, 3});
  Builder::attr(pool, "strides", std::vector<std::int64_t>{2, 2});
  Builder::attr(pool, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
  std::vector<float> x(100);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101);  // distinct
  std::vector<float> want_y;
  std::vector<std::int64_t> want_i;
  for (std::int64_t plane = 0; plane < 4; ++plane)
    for (std::int64_t oh = 0; oh < 3; ++oh)
      for (std::int64_t ow = 0; ow < 3; ++ow) {
        std::int64_t best = -1;
        for (std::int64_t h = oh * 2 - 1; h <= oh * 2 + 1; ++h)
          for (std::int64_t w = ow * 2 - 1; w <= ow * 2 + 1; ++w) {
            if (h < 0 || h >= 5 || w < 0 || w >= 5) continue;
            const std::int64_t at = plane * 25 + h * 5 + w;
            if (best < 0 || x[static_cast<std::size_t>(at)] > x[static_cast<std::size_t>(best)]) best = at;
          }
        want_y.push_back(x[static_cast<std::size_t>(best)]);
        want_i.push_back(best);
      }
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32(x, {2, 2, 5, 5})});
    out[0].assert_eq(f32(want_y, {2, 2, 3, 3}));
    out[1].assert_eq(TensorData(want_i, Shape{2, 2, 3, 3}));
  }
  Builder lopsided;
  lopsided.input("x", {1, 1, 4, 4}).output("y").output("i", ::onnx::TensorProto::INT64);
  auto& p2 = lopsided.node("MaxPool", {"x"}, {"y", "i"});
  Builder::attr(p2, "kernel_shape", std::vector<std::int64_t>{2, 2});
  Builder::attr(p2, "pads", std::vector<std::int64_t>{0, 0, 1, 1});
  const std::string e = error_of([&] {
    (void)lopsided.load(Device::flex()).run({f32(std::vector<float>(16, 1.0F), {1, 1, 4, 4})});
  });
  EXPECT_NE(e.find("the Indices output with asymmetric padding is not supported"), std::string::npos) << e;
}

TEST(OnnxImport, MaxUnpoolPutsEachMaximumBackWhereMaxPoolFoundIt) {
  // 4x4 planes pooled 2x2/2 and unpooled to the default 4x4; 5x5 planes
  // (the last row and column never pooled) unpooled to 5x5 by output_shape.
  // The maxima come back in place, zeros elsewhere.
  Builder b;
  b.input("x4", {1, 2, 4, 4}).input("x5", {1, 2, 5, 5}).output("y4").output("y5");
  b.init("shape", i64({1, 2, 5, 5}));
  for (const char* side : {"4", "5"}) {
    const std::string x = std::string("x") + side, p = std::string("p") + side, i = std::string("i") + side;
    auto& pool = b.node("MaxPool", {x}, {p, i});
    Builder::attr(pool, "kernel_shape", std::vector<std::int64_t>{2, 2});
    Builder::attr(pool, "strides", std::vector<std::int64_t>{2, 2});
    std::vector<std::string> in{p, i};
    if (std::string(side) == "5") in.emplace_back("shape");
    auto& unpool = b.node("MaxUnpool", in, {std::string("y") + side});
    Builder::attr(unpool, "kernel_shape", std::vector<std::int64_t>{2, 2});
    Builder::attr(unpool, "strides", std::vector<std::int64_t>{2, 2});
  }
  // Distinct values; the expected output keeps each 2x2 window's maximum.
  auto case_of = [](std::size_t side) {
    std::vector<float> x(2 * side * side), y(x.size(), 0.0F);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 29) % 53);
    for (std::size_t c = 0; c < 2; ++c)
      for (std::size_t oh = 0; oh + 1 < side; oh += 2)
        for (std::size_t ow = 0; ow + 1 < side; ow += 2) {
          std::size_t best = c * side * side + oh * side + ow;
          for (std::size_t h = oh; h < oh + 2; ++h)
            for (std::size_t w = ow; w < ow + 2; ++w)
              if (x[c * side * side + h * side + w] > x[best]) best = c * side * side + h * side + w;
          y[best] = x[best];
        }
    return std::pair{x, y};
  };
  const auto [x4, y4] = case_of(4);
  const auto [x5, y5] = case_of(5);
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32(x4, {1, 2, 4, 4}), f32(x5, {1, 2, 5, 5})});
    out[0].assert_eq(f32(y4, {1, 2, 4, 4}));
    out[1].assert_eq(f32(y5, {1, 2, 5, 5}));
  }
  Builder stray;
  stray.input("x", {1, 1, 1, 2}).output("y");
  stray.init("i", TensorData(std::vector<std::int64_t>{0, 9}, Shape{1, 1, 1, 2}));
  auto& unpool = stray.node("MaxUnpool", {"x", "i"}, {"y"});
  Builder::attr(unpool, "kernel_shape", std::vector<std::int64_t>{2, 2});
  Builder::attr(unpool, "strides", std::vector<std::int64_t>{2, 2});
  const std::string e = error_of([&] { (void)stray.load(Device::flex()).run({f32({1, 2}, {1, 1, 1, 2})}); });
  EXPECT_NE(e.find("index 9 is outside the output's 8 elements"), std::string::npos) << e;
}

TEST(OnnxImport, ConvTransposeOutputShapeAndSamePaddingChooseThePads) {
  // x [1, 2, 4, 4], w [2, 1, 3, 3], stride 2: the full output is 9x9.
  // output_shape [7, 8] crops (1, 1) and (1, 0); SAME_UPPER makes 8x8 with
  // the odd pixel cut at the end, SAME_LOWER at the start.
  std::vector<float> x(32), w(18);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(std::cos(0.3 * static_cast<double>(i)));
  // y[oh, ow] = sum over ci, ih, iw, kh, kw with oh = 2 ih + kh - top, ow = 2 iw + kw - left.
  auto reference = [&](std::int64_t top, std::int64_t left, std::int64_t oh_n, std::int64_t ow_n) {
    std::vector<float> y(static_cast<std::size_t>(oh_n * ow_n), 0.0F);
    for (std::int64_t ci = 0; ci < 2; ++ci)
      for (std::int64_t ih = 0; ih < 4; ++ih)
        for (std::int64_t iw = 0; iw < 4; ++iw)
          for (std::int64_t kh = 0; kh < 3; ++kh)
            for (std::int64_t kw = 0; kw < 3; ++kw) {
              const std::int64_t oh = 2 * ih + kh - top, ow = 2 * iw + kw - left;
              if (oh < 0 || oh >= oh_n || ow < 0 || ow >= ow_n) continue;
              y[static_cast<std::size_t>(oh * ow_n + ow)] += x[static_cast<std::size_t>((ci * 4 + ih) * 4 + iw)] *
                                                             w[static_cast<std::size_t>(ci * 9 + kh * 3 + kw)];
            }
    return y;
  };
  auto model = [&](const std::function<void(::onnx::NodeProto&)>& attrs) {
    Builder b;
    b.input("x", {1, 2, 4, 4}).output("y").init("w", f32(w, {2, 1, 3, 3}));
    auto& n = b.node("ConvTranspose", {"x", "w"}, {"y"});
    Builder::attr(n, "strides", std::vector<std::int64_t>{2, 2});
    attrs(n);
    return b;
  };
  const auto shaped = model([](auto& n) { Builder::attr(n, "output_shape", std::vector<std::int64_t>{7, 8}); });
  const auto upper = model([](auto& n) { Builder::attr(n, "auto_pad", "SAME_UPPER"); });
  const auto lower = model([](auto& n) { Builder::attr(n, "auto_pad", "SAME_LOWER"); });
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    shaped.load(device).run({f32(x, {1, 2, 4, 4})})[0].assert_approx_eq(f32(reference(1, 1, 7, 8), {1, 1, 7, 8}),
                                                                        {1e-5, 1e-5});
    upper.load(device).run({f32(x, {1, 2, 4, 4})})[0].assert_approx_eq(f32(reference(0, 0, 8, 8), {1, 1, 8, 8}),
                                                                       {1e-5, 1e-5});
    lower.load(device).run({f32(x, {1, 2, 4, 4})})[0].assert_approx_eq(f32(reference(1, 1, 8, 8), {1, 1, 8, 8}),
                                                                       {1e-5, 1e-5});
  }
  const auto too_big = model([](auto& n) { Builder::attr(n, "output_shape", std::vector<std::int64_t>{10, 8}); });
  const std::string e = error_of([&] { (void)too_big.load(Device::flex()).run({f32(x, {1, 2, 4, 4})}); });
  EXPECT_NE(e.find("output_shape 10 is larger than the full transposed output 9 on spatial dim 0"), std::string::npos)
      << e;
}

TEST(OnnxImport, AveragePoolWithAsymmetricPadsThatDoNotCountAveragesTheInputOnly) {
  // TensorFlow's SAME pooling: kernel 3, stride 2 over 5x6 (pads (1, 1) on
  // H, (0, 1) on W for SAME_UPPER; (1, 1) and (1, 0) for SAME_LOWER) and
  // explicit pads [0, 0, 1, 1], each window's mean over its input elements.
  std::vector<float> x(30);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.9 * static_cast<double>(i)));
  auto reference = [&](std::int64_t top, std::int64_t left, std::int64_t oh_n, std::int64_t ow_n) {
    std::vector<float> y;
    for (std::int64_t oh = 0; oh < oh_n; ++oh)
      for (std::int64_t ow = 0; ow < ow_n; ++ow) {
        double sum = 0.0;
        int count = 0;
        for (std::int64_t h = oh * 2 - top; h < oh * 2 - top + 3; ++h)
          for (std::int64_t w = ow * 2 - left; w < ow * 2 - left + 3; ++w)
            if (h >= 0 && h < 5 && w >= 0 && w < 6) {
              sum += x[static_cast<std::size_t>(h * 6 + w)];
              ++count;
            }
        y.push_back(static_cast<float>(sum / count));
      }
    return y;
  };
  auto model = [](const std::function<void(::onnx::NodeProto&)>& attrs) {
    Builder b;
    b.input("x", {1, 1, 5, 6}).output("y");
    auto& n = b.node("AveragePool", {"x"}, {"y"});
    Builder::attr(n, "kernel_shape", std::vector<std::int64_t>{3, 3});
    Builder::attr(n, "strides", std::vector<std::int64_t>{2, 2});
    attrs(n);
    return b;
  };
  const auto upper = model([](auto& n) { Builder::attr(n, "auto_pad", "SAME_UPPER"); });
  const auto lower = model([](auto& n) { Builder::attr(n, "auto_pad", "SAME_LOWER"); });
  const auto explicit_pads = model([](auto& n) { Builder::attr(n, "pads", std::vector<std::int64_t>{0, 0, 1, 1}); });
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const TensorData in = f32(x, {1, 1, 5, 6});
    upper.load(device).run({in})[0].assert_approx_eq(f32(reference(1, 0, 3, 3), {1, 1, 3, 3}), {1e-5, 1e-6});
    lower.load(device).run({in})[0].assert_approx_eq(f32(reference(1, 1, 3, 3), {1, 1, 3, 3}), {1e-5, 1e-6});
    explicit_pads.load(device).run({in})[0].assert_approx_eq(f32(reference(0, 0, 2, 3), {1, 1, 2, 3}), {1e-5, 1e-6});
  }
}

TEST(OnnxImport, AnAntialiasedResizeTooLargeForItsMatrixIsAClearError) {
  Builder b(18);
  b.input("x", {1, 1, 3, 4}).output("y");
  b.init("sizes", i64({3, 100000000}));
  auto& n = b.node("Resize", {"x", "", "", "sizes"}, {"y"});
  Builder::attr(n, "mode", "linear");
  Builder::attr(n, "antialias", std::int64_t{1});
  Builder::attr(n, "axes", std::vector<std::int64_t>{2, 3});
  const std::string e = error_of([&] {
    (void)b.load(Device::flex()).run({f32(std::vector<float>(12, 1.0F), {1, 1, 3, 4})});
  });
  EXPECT_NE(e.find("an antialiased resize of an axis from 4 to 100000000 values is too large"), std::string::npos) << e;
}

TEST(OnnxImport, ExclusiveScansAreTheScansOfTheValuesBefore) {
  // Exclusive CumSum of [1, 1e8, 1] is [0, 1, 1e8]: the inclusive scan minus
  // x would give 0 for the second (1 + 1e8 rounds to 1e8 in f32). Exclusive
  // CumProd of [2, 0, 3] is [1, 2, 0], which no division could recover.
  Builder b(26);
  b.input("s", {3}).input("p", {3}).output("sum").output("prod").output("prod_rev");
  b.init("axis", TensorData(std::vector<std::int64_t>{0}, Shape{}));
  Builder::attr(b.node("CumSum", {"s", "axis"}, {"sum"}), "exclusive", std::int64_t{1});
  Builder::attr(b.node("CumProd", {"p", "axis"}, {"prod"}), "exclusive", std::int64_t{1});
  auto& rev = b.node("CumProd", {"p", "axis"}, {"prod_rev"});
  Builder::attr(rev, "exclusive", std::int64_t{1});
  Builder::attr(rev, "reverse", std::int64_t{1});
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32({1.0F, 1e8F, 1.0F}, {3}), f32({2.0F, 0.0F, 3.0F}, {3})});
    out[0].assert_eq(f32({0.0F, 1.0F, 1e8F}, {3}));
    out[1].assert_eq(f32({1.0F, 2.0F, 0.0F}, {3}));
    out[2].assert_eq(f32({0.0F, 3.0F, 1.0F}, {3}));
  }
}

TEST(OnnxImport, BitwiseOperatorsAndBitCastWorkOnTheBits) {
  Builder b(26);
  b.input("a", {4}, ::onnx::TensorProto::INT32).input("u", {3}, ::onnx::TensorProto::UINT8).input("f", {2});
  b.output("and", ::onnx::TensorProto::INT32).output("or", ::onnx::TensorProto::INT32);
  b.output("xor", ::onnx::TensorProto::INT32).output("not", ::onnx::TensorProto::INT32);
  b.output("left", ::onnx::TensorProto::UINT8).output("right", ::onnx::TensorProto::UINT8);
  b.output("bits", ::onnx::TensorProto::INT32).output("back");
  b.init("mask", TensorData(std::vector<std::int32_t>{0x0F}, Shape{}));
  b.init("by", TensorData(std::vector<std::uint8_t>{1, 2, 3}, Shape{3}));
  b.node("BitwiseAnd", {"a", "mask"}, {"and"});
  b.node("BitwiseOr", {"a", "mask"}, {"or"});
  b.node("BitwiseXor", {"a", "mask"}, {"xor"});
  b.node("BitwiseNot", {"a"}, {"not"});
  Builder::attr(b.node("BitShift", {"u", "by"}, {"left"}), "direction", "LEFT");
  Builder::attr(b.node("BitShift", {"u", "by"}, {"right"}), "direction", "RIGHT");
  Builder::attr(b.node("BitCast", {"f"}, {"bits"}), "to", std::int64_t{::onnx::TensorProto::INT32});
  Builder::attr(b.node("BitCast", {"bits"}, {"back"}), "to", std::int64_t{::onnx::TensorProto::FLOAT});
  const TensorData a(std::vector<std::int32_t>{0x12, -1, 0, 0x7F0}, Shape{4});
  const TensorData u(std::vector<std::uint8_t>{0x81, 0x0F, 0xFF}, Shape{3});
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({a, u, f32({1.0F, -2.0F}, {2})});
    out[0].assert_eq(TensorData(std::vector<std::int32_t>{0x02, 0x0F, 0, 0}, Shape{4}));
    out[1].assert_eq(TensorData(std::vector<std::int32_t>{0x1F, -1, 0x0F, 0x7FF}, Shape{4}));
    out[2].assert_eq(TensorData(std::vector<std::int32_t>{0x1D, -16, 0x0F, 0x7FF}, Shape{4}));
    out[3].assert_eq(TensorData(std::vector<std::int32_t>{~0x12, 0, -1, ~0x7F0}, Shape{4}));
    out[4].assert_eq(TensorData(std::vector<std::uint8_t>{0x02, 0x3C, 0xF8}, Shape{3}));
    out[5].assert_eq(TensorData(std::vector<std::uint8_t>{0x40, 0x03, 0x1F}, Shape{3}));
    // 1.0f is 0x3F800000, -2.0f is 0xC0000000.
    out[6].assert_eq(
        TensorData(std::vector<std::int32_t>{0x3F800000, static_cast<std::int32_t>(0xC0000000U)}, Shape{2}));
    out[7].assert_eq(f32({1.0F, -2.0F}, {2}));
  }
  Builder wide(26);
  wide.input("f", {2}).output("y", ::onnx::TensorProto::INT64);
  Builder::attr(wide.node("BitCast", {"f"}, {"y"}), "to", std::int64_t{::onnx::TensorProto::INT64});
  const std::string e = error_of([&] { (void)wide.load(Device::flex()).run({f32({1, 2}, {2})}); });
  EXPECT_NE(e.find("BitCast needs types of one width: f32 has 4 bytes, i64 has 8"), std::string::npos) << e;
}

TEST(OnnxImport, TheFormsOfOpsetsEighteenToTwentyRunAsDefined) {
  // What opsets 18 to 20 changed in operators burn runs: reductions take
  // their axes as an input, Split counts its outputs, Pad takes axes and
  // wraps, Resize takes axes, and Gelu is an operator.
  Builder b(20);
  b.input("x", {2, 3}).input("img", {1, 1, 2, 2});
  for (const char* o : {"mean", "max", "halves", "rest", "wrapped", "resized", "gelu", "gelu_tanh"}) b.output(o);
  b.init("last_axis", i64({-1})).init("wrap_pads", i64({2, 1})).init("pad_axes", i64({1}));
  b.init("twice", f32({2, 2}, {2}));
  Builder::attr(b.node("ReduceMean", {"x", "last_axis"}, {"mean"}), "keepdims", std::int64_t{0});
  auto& all = b.node("ReduceMax", {"x"}, {"max"});
  Builder::attr(all, "keepdims", std::int64_t{0});
  auto& split = b.node("Split", {"x"}, {"halves", "rest"});
  Builder::attr(split, "axis", std::int64_t{1});
  Builder::attr(split, "num_outputs", std::int64_t{2});
  Builder::attr(b.node("Pad", {"x", "wrap_pads", "", "pad_axes"}, {"wrapped"}), "mode", "wrap");
  auto& resize = b.node("Resize", {"img", "", "twice"}, {"resized"});
  Builder::attr(resize, "axes", std::vector<std::int64_t>{2, 3});
  Builder::attr(resize, "mode", "nearest");
  Builder::attr(resize, "coordinate_transformation_mode", "asymmetric");
  Builder::attr(resize, "nearest_mode", "floor");
  b.node("Gelu", {"x"}, {"gelu"});
  Builder::attr(b.node("Gelu", {"x"}, {"gelu_tanh"}), "approximate", "tanh");
  const std::vector<float> xs{-2, -0.5F, 0, 0.5F, 1, 3};
  std::vector<float> exact, tanh_form;
  for (const float v : xs) {
    const double x = v;
    exact.push_back(static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)))));
    tanh_form.push_back(static_cast<float>(
        0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)))));
  }
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32(xs, {2, 3}), f32({1, 2, 3, 4}, {1, 1, 2, 2})});
    out[0].assert_approx_eq(f32({-2.5F / 3, 4.5F / 3}, {2}));
    out[1].assert_eq(f32({3}, {}));
    out[2].assert_eq(f32({-2, -0.5F, 0.5F, 1}, {2, 2}));
    out[3].assert_eq(f32({0, 3}, {2, 1}));
    out[4].assert_eq(f32({-0.5F, 0, -2, -0.5F, 0, -2, 1, 3, 0.5F, 1, 3, 0.5F}, {2, 6}));
    out[5].assert_eq(f32({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, {1, 1, 4, 4}));
    out[6].assert_approx_eq(f32(exact, {2, 3}), {1e-5, 1e-6});
    out[7].assert_approx_eq(f32(tanh_form, {2, 3}), {1e-5, 1e-6});
  }
}

TEST(OnnxImport, ActivationsNormsAndDepthToSpaceMatchTheirDefinitions) {
  Builder b(18);  // Mish is an operator from opset 18
  b.input("x", {2, 2, 2, 2});
  for (const char* o : {"elu", "selu", "celu", "prelu", "hardswish", "mish", "instance", "dcr", "crd"}) b.output(o);
  b.init("slope", f32({0.5F, -2}, {2, 1, 1})).init("scale", f32({2, 3}, {2})).init("shift", f32({1, -1}, {2}));
  Builder::attr(b.node("Elu", {"x"}, {"elu"}), "alpha", 0.5F);
  b.node("Selu", {"x"}, {"selu"});
  b.node("Celu", {"x"}, {"celu"});
  b.node("PRelu", {"x", "slope"}, {"prelu"});
  b.node("HardSwish", {"x"}, {"hardswish"});
  b.node("Mish", {"x"}, {"mish"});
  b.node("InstanceNormalization", {"x", "scale", "shift"}, {"instance"});
  Builder::attr(b.node("DepthToSpace", {"x"}, {"dcr"}), "blocksize", std::int64_t{1});
  auto& crd = b.node("DepthToSpace", {"x"}, {"crd"});
  Builder::attr(crd, "blocksize", std::int64_t{1});
  Builder::attr(crd, "mode", "CRD");

  std::vector<float> xs(16);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = (static_cast<float>(i) - 7.5F) / 2.0F;
  auto each = [&](auto f) {
    std::vector<float> out;
    for (std::size_t i = 0; i < xs.size(); ++i) out.push_back(static_cast<float>(f(static_cast<double>(xs[i]), i)));
    return f32(out, {2, 2, 2, 2});
  };
  const double selu_alpha = 1.67326319217681884765625, selu_gamma = 1.05070102214813232421875;
  const TensorData elu = each([](double x, std::size_t) { return x > 0 ? x : 0.5 * std::expm1(x); });
  const TensorData selu =
      each([&](double x, std::size_t) { return selu_gamma * (x > 0 ? x : selu_alpha * std::expm1(x)); });
  const TensorData celu = each([](double x, std::size_t) { return x > 0 ? x : std::expm1(x); });
  // The slope is per channel (dim 1): 0.5 for channel 0, -2 for channel 1.
  const TensorData prelu =
      each([](double x, std::size_t i) { return x > 0 ? x : (((i / 4) % 2 == 0) ? 0.5 : -2.0) * x; });
  const TensorData hardswish = each([](double x, std::size_t) { return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0); });
  const TensorData mish = each([](double x, std::size_t) { return x * std::tanh(std::log1p(std::exp(x))); });
  // Each (sample, channel) holds four values in arithmetic steps of 0.5: mean
  // at the middle, population variance 0.3125.
  const TensorData instance = each([](double x, std::size_t i) {
    const double mean = (static_cast<double>(i / 4 * 4) + 1.5 - 7.5) / 2.0;
    const bool first = (i / 4) % 2 == 0;
    return (first ? 2.0 : 3.0) * (x - mean) / std::sqrt(0.3125 + 1e-5) + (first ? 1.0 : -1.0);
  });
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32(xs, {2, 2, 2, 2})});
    const Tolerance tol{1e-5, 1e-6};
    out[0].assert_approx_eq(elu, tol);
    out[1].assert_approx_eq(selu, tol);
    out[2].assert_approx_eq(celu, tol);
    out[3].assert_approx_eq(prelu, tol);
    out[4].assert_approx_eq(hardswish, tol);
    out[5].assert_approx_eq(mish, tol);
    out[6].assert_approx_eq(instance, {1e-4, 1e-5});
    out[7].assert_eq(f32(xs, {2, 2, 2, 2}));  // block size 1: the identity
    out[8].assert_eq(f32(xs, {2, 2, 2, 2}));
  }

  // Block size 2 in both orders, against their definitions on [1, 8, 1, 1]:
  // DCR reads the channels as [b, b, C'], CRD as [C', b, b].
  Builder d2s;
  d2s.input("x", {1, 8, 1, 1}).output("dcr").output("crd");
  Builder::attr(d2s.node("DepthToSpace", {"x"}, {"dcr"}), "blocksize", std::int64_t{2});
  auto& crd2 = d2s.node("DepthToSpace", {"x"}, {"crd"});
  Builder::attr(crd2, "blocksize", std::int64_t{2});
  Builder::attr(crd2, "mode", "CRD");
  const auto out = d2s.load(Device::flex()).run({f32({0, 1, 2, 3, 4, 5, 6, 7}, {1, 8, 1, 1})});
  out[0].assert_eq(f32({0, 2, 4, 6, 1, 3, 5, 7}, {1, 2, 2, 2}));
  out[1].assert_eq(f32({0, 1, 2, 3, 4, 5, 6, 7}, {1, 2, 2, 2}));
}

TEST(OnnxImport, NormReductionsTileAndTriluMatchTheirDefinitions) {
  Builder b(18);  // the reductions take their axes as an input
  b.input("x", {2, 3});
  for (const char* o : {"l1", "l2", "sumsq", "logsum", "lse", "tile", "upper", "lower"}) b.output(o);
  b.init("last", i64({-1})).init("reps", i64({2, 1})).init("k_up", i64({1})).init("k_low", i64({-1}));
  b.node("ReduceL1", {"x", "last"}, {"l1"});
  Builder::attr(b.node("ReduceL2", {"x", "last"}, {"l2"}), "keepdims", std::int64_t{0});
  b.node("ReduceSumSquare", {"x"}, {"sumsq"});  // no axes: every axis
  b.node("ReduceLogSum", {"x", "last"}, {"logsum"});
  Builder::attr(b.node("ReduceLogSumExp", {"x", "last"}, {"lse"}), "keepdims", std::int64_t{0});
  b.node("Tile", {"x", "reps"}, {"tile"});
  b.node("Trilu", {"x", "k_up"}, {"upper"});
  Builder::attr(b.node("Trilu", {"x", "k_low"}, {"lower"}), "upper", std::int64_t{0});
  // Large values: log-sum-exp must not overflow (1000 + log(e^0 + e^-1 + e^-2)).
  const TensorData x = f32({1, 2, 3, 1000, 999, 998}, {2, 3});
  const double lse1 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const double lse2 = 1000.0 + std::log(1.0 + std::exp(-1.0) + std::exp(-2.0));
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({x});
    out[0].assert_eq(f32({6, 2997}, {2, 1}));
    out[1].assert_approx_eq(f32({std::sqrt(14.0F), std::sqrt(2994005.0F)}, {2}), {1e-6, 1e-6});
    out[2].assert_approx_eq(f32({2994019}, {1, 1}), {1e-6, 0});
    out[3].assert_approx_eq(f32({std::log(6.0F), std::log(2997.0F)}, {2, 1}), {1e-6, 1e-6});
    out[4].assert_approx_eq(f32({static_cast<float>(lse1), static_cast<float>(lse2)}, {2}), {1e-6, 1e-6});
    out[5].assert_eq(f32({1, 2, 3, 1000, 999, 998, 1, 2, 3, 1000, 999, 998}, {4, 3}));
    out[6].assert_eq(f32({0, 2, 3, 0, 0, 998}, {2, 3}));
    out[7].assert_eq(f32({0, 0, 0, 1000, 0, 0}, {2, 3}));
  }
}

TEST(OnnxImport, ScatterNDReplacesOrAddsTheSlicesItsIndicesName) {
  // PyTorch writes index_put (x[idx] = v) as ScatterND.
  Builder b;
  b.input("rows", {3, 2}).input("cells", {2, 2}).output("replaced").output("added");
  b.init("row_idx", TensorData(std::vector<std::int64_t>{2, -3}, Shape{2, 1}));
  b.init("row_upd", f32({10, 11, 20, 21}, {2, 2}));
  b.init("cell_idx", TensorData(std::vector<std::int64_t>{0, 1, 1, 0, 0, 1}, Shape{3, 2}));
  b.init("cell_upd", f32({5, 7, 100}, {3}));
  b.node("ScatterND", {"rows", "row_idx", "row_upd"}, {"replaced"});
  Builder::attr(b.node("ScatterND", {"cells", "cell_idx", "cell_upd"}, {"added"}), "reduction", "add");
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32({1, 2, 3, 4, 5, 6}, {3, 2}), f32({1, 2, 3, 4}, {2, 2})});
    out[0].assert_eq(f32({20, 21, 3, 4, 10, 11}, {3, 2}));  // index -3 is row 0
    out[1].assert_eq(f32({1, 107, 10, 4}, {2, 2}));         // [0, 1] twice: 2 + 5 + 100
  }
  Builder bad;
  bad.input("rows", {3, 2}).output("y");
  bad.init("idx", TensorData(std::vector<std::int64_t>{3}, Shape{1, 1})).init("upd", f32({0, 0}, {1, 2}));
  bad.node("ScatterND", {"rows", "idx", "upd"}, {"y"});
  const std::string e = error_of([&] { (void)bad.load(Device::flex()).run({f32({1, 2, 3, 4, 5, 6}, {3, 2})}); });
  EXPECT_NE(e.find("index 3 is out of range for dim 0 of size 3"), std::string::npos) << e;
}

TEST(OnnxImport, QuantizationOperatorsComputeWhatOnnxDefines) {
  Builder b;
  b.input("x", {5}).input("m", {2, 3}).input("a", {2, 3}, ::onnx::TensorProto::UINT8);
  b.output("q8", ::onnx::TensorProto::INT8).output("qu8", ::onnx::TensorProto::UINT8).output("dq");
  b.output("dyn", ::onnx::TensorProto::UINT8).output("dyn_scale").output("dyn_zp", ::onnx::TensorProto::UINT8);
  b.output("mm", ::onnx::TensorProto::INT32);
  b.init("one", f32({1}, {})).init("zero_i8", TensorData(std::vector<std::int8_t>{0}, Shape{}));
  b.init("half", f32({0.5F}, {})).init("zp_u8", TensorData(std::vector<std::uint8_t>{10}, Shape{}));
  // Per axis 1 of [2, 3]: scales 1, 10, 100 and zero points 0, 1, 2.
  b.init("scales", f32({1, 10, 100}, {3})).init("zps", TensorData(std::vector<std::int8_t>{0, 1, 2}, Shape{3}));
  b.init("m_int", TensorData(std::vector<std::int8_t>{1, 2, 3, -4, -5, -6}, Shape{2, 3}));
  // MatMulInteger: a per-row zero point for A ([2, 3] uint8), a per-column one for B ([3, 2] int8).
  b.init("b", TensorData(std::vector<std::int8_t>{1, -1, 2, 0, -3, 5}, Shape{3, 2}));
  b.init("a_zp", TensorData(std::vector<std::uint8_t>{1, 2}, Shape{2}));
  b.init("b_zp", TensorData(std::vector<std::int8_t>{0, -1}, Shape{2}));
  b.node("QuantizeLinear", {"x", "one", "zero_i8"}, {"q8"});
  b.node("QuantizeLinear", {"x", "half", "zp_u8"}, {"qu8"});
  b.node("DequantizeLinear", {"m_int", "scales", "zps"}, {"dq"});
  b.node("DynamicQuantizeLinear", {"m"}, {"dyn", "dyn_scale", "dyn_zp"});
  b.node("MatMulInteger", {"a", "b", "a_zp", "b_zp"}, {"mm"});

  const TensorData m = f32({-1, 0, 0.5F, 2, 3, 1.5F}, {2, 3});
  // The dynamic scale spans [min(0, m), max(0, m)] = [-1, 3] in 255 steps;
  // the zero point is round(1 / scale) = round(63.75).
  const float scale = 4.0F / 255.0F;
  std::vector<std::uint8_t> dyn;
  for (const float v : m.to_vec<float>()) dyn.push_back(static_cast<std::uint8_t>(std::nearbyint(v / scale) + 64));
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32({2.5F, 3.5F, -2.5F, 1000, -1000}, {5}), m,
                                         TensorData(std::vector<std::uint8_t>{3, 4, 5, 6, 7, 8}, Shape{2, 3})});
    // Half to even, then saturated to int8 and to uint8 (x / 0.5 + 10).
    out[0].assert_eq(TensorData(std::vector<std::int8_t>{2, 4, -2, 127, -128}, Shape{5}));
    out[1].assert_eq(TensorData(std::vector<std::uint8_t>{15, 17, 5, 255, 0}, Shape{5}));
    out[2].assert_eq(f32({1, 10, 100, -4, -60, -800}, {2, 3}));
    out[3].assert_eq(TensorData(dyn, Shape{2, 3}));
    out[4].assert_approx_eq(f32({scale}, {}), {1e-7, 0});
    out[5].assert_eq(TensorData(std::vector<std::uint8_t>{64}, Shape{}));
    // (A - [1, 2] per row) x (B - [0, -1] per column), in int32.
    out[6].assert_eq(TensorData(std::vector<std::int32_t>{-4, 27, -4, 41}, Shape{2, 2}));
  }

  // A per-axis scale whose axis the input does not have, and a zero point of the wrong shape.
  Builder bad_axis;
  bad_axis.input("x", {4}).output("y").init("s", f32({1, 2, 3, 4}, {4}));
  Builder::attr(bad_axis.node("DequantizeLinear", {"x", "s"}, {"y"}), "axis", std::int64_t{1});
  const std::string e1 = error_of([&] { (void)bad_axis.load(Device::flex()).run({f32({1, 2, 3, 4}, {4})}); });
  EXPECT_NE(e1.find("axis 1 is outside a rank-1 input"), std::string::npos) << e1;
  Builder bad_zp;
  bad_zp.input("x", {2, 2}, ::onnx::TensorProto::UINT8).input("w", {2, 2}, ::onnx::TensorProto::UINT8).output("y");
  bad_zp.init("zp", TensorData(std::vector<std::uint8_t>{1, 2, 3, 4}, Shape{2, 2}));
  bad_zp.node("MatMulInteger", {"x", "w", "zp"}, {"y"});
  const std::string e2 = error_of([&] {
    const TensorData u8(std::vector<std::uint8_t>{1, 2, 3, 4}, Shape{2, 2});
    (void)bad_zp.load(Device::flex()).run({u8, u8});
  });
  EXPECT_NE(e2.find("zero point 2 has shape [2, 2]; it must be a scalar or 1-D"), std::string::npos) << e2;
}

/// A model whose initializer "w" ([2, 2] f32) keeps its data externally at
/// `location` (with `offset` and `length` entries when not empty).
Builder external_weight_model(const std::string& location, const std::string& offset, const std::string& length) {
  Builder b(20);
  b.input("x", {2, 2}).output("y");
  b.init("w", f32({0, 0, 0, 0}, {2, 2}));
  auto& w = *b.g.mutable_initializer(0);
  w.clear_raw_data();
  w.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto entry = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    auto* e = w.add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  entry("location", location);
  entry("offset", offset);
  entry("length", length);
  b.node("MatMul", {"x", "w"}, {"y"});
  return b;
}

TEST(OnnxImport, ExternalDataIsReadFromTheFilesBesideTheModel) {
  const std::filesystem::path dir = std::filesystem::path(temp_path("external")) / "model";
  std::filesystem::create_directories(dir);
  {
    // Four bytes of another tensor, then w = [[1, 2], [3, 4]].
    const float values[] = {-1, 1, 2, 3, 4};
    std::ofstream((dir / "weights.bin").string(), std::ios::binary)
        .write(reinterpret_cast<const char*>(values), sizeof(values));
  }
  const std::string model_path = (dir / "m.onnx").string();
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out =
        external_weight_model("weights.bin", "4", "16").load_file(model_path, device).run({f32({1, 0, 0, 1}, {2, 2})});
    out[0].assert_eq(f32({1, 2, 3, 4}, {2, 2}));
  }
  // Without a length, the tensor's own size is read from the offset.
  external_weight_model("weights.bin", "4", "")
      .load_file(model_path, Device::flex())
      .run({f32({1, 0, 0, 1}, {2, 2})})[0]
      .assert_eq(f32({1, 2, 3, 4}, {2, 2}));

  auto load_error = [&](const Builder& b) { return error_of([&] { b.load_file(model_path, Device::flex()); }); };
  const std::string from_bytes =
      error_of([&] { external_weight_model("weights.bin", "4", "16").load(Device::flex()); });
  EXPECT_NE(from_bytes.find("load it with onnx::Model::load(path)"), std::string::npos) << from_bytes;
  const std::string missing = load_error(external_weight_model("gone.bin", "", ""));
  EXPECT_NE(missing.find("tensor 'w' keeps its data in"), std::string::npos) << missing;
  EXPECT_NE(missing.find("gone.bin"), std::string::npos) << missing;
  const std::string truncated = load_error(external_weight_model("weights.bin", "8", "16"));
  EXPECT_NE(truncated.find("needs bytes 8 to 24 of 'weights.bin', which has 20 bytes"), std::string::npos) << truncated;
  const std::string wrong_length = load_error(external_weight_model("weights.bin", "0", "12"));
  EXPECT_NE(wrong_length.find("needs 16 bytes but its external data in 'weights.bin' has length 12"), std::string::npos)
      << wrong_length;
  const std::string not_a_number = load_error(external_weight_model("weights.bin", "4x", ""));
  EXPECT_NE(not_a_number.find("offset '4x', which is not a byte count"), std::string::npos) << not_a_number;
  for (const std::string escape : {"../weights.bin", "/etc/hostname", "sub/../../weights.bin"}) {
    const std::string e = load_error(external_weight_model(escape, "", ""));
    EXPECT_NE(e.find("which is not a path inside the model's directory"), std::string::npos) << escape << ": " << e;
  }
}

TEST(OnnxImport, ModelsNewerThanTheCheckerAreCheckedByBurn) {
  // Debian's ONNX checker knows opsets up to 17 and IR version 8; burn
  // checks the structure of newer models itself.
  Builder undefined(20);
  undefined.input("x", {2}).output("y");
  undefined.node("Add", {"x", "not_defined_anywhere"}, {"y"});
  const std::string e1 = error_of([&] { undefined.load(Device::flex()); });
  EXPECT_NE(e1.find("reads 'not_defined_anywhere', which no graph input, initializer or earlier node defines"),
            std::string::npos)
      << e1;

  Builder twice(20);
  twice.input("x", {2}).output("y");
  twice.node("Relu", {"x"}, {"y"});
  twice.node("Neg", {"x"}, {"y"});
  const std::string e2 = error_of([&] { twice.load(Device::flex()); });
  EXPECT_NE(e2.find("the value 'y' (an output of node 'Neg_2') is defined twice"), std::string::npos) << e2;

  Builder no_output(20);
  no_output.input("x", {2}).output("nowhere");
  no_output.node("Relu", {"x"}, {"y"});
  const std::string e3 = error_of([&] { no_output.load(Device::flex()); });
  EXPECT_NE(e3.find("the graph output 'nowhere' is never defined"), std::string::npos) << e3;

  Builder newer_ir(20);
  newer_ir.model.set_ir_version(14);
  newer_ir.input("x", {2}).output("y");
  newer_ir.node("Relu", {"x"}, {"y"});
  const std::string e4 = error_of([&] { newer_ir.load(Device::flex()); });
  EXPECT_NE(e4.find("IR version 14; this version reads IR versions up to 13"), std::string::npos) << e4;

  // An attribute of the wrong type is named when its node runs.
  Builder typed(20);
  typed.input("x", {2, 2}).output("y");
  auto* axis = typed.node("Softmax", {"x"}, {"y"}).add_attribute();
  axis->set_name("axis");
  axis->set_type(::onnx::AttributeProto::FLOAT);
  axis->set_f(1.0F);
  const std::string e5 = error_of([&] { (void)typed.load(Device::flex()).run({f32({1, 2, 3, 4}, {2, 2})}); });
  EXPECT_NE(e5.find("attribute 'axis' must be of type INT, it is FLOAT"), std::string::npos) << e5;
}

// ---- bad files and bad inputs ------------------------------------------------------------------

TEST(OnnxImport, BadFilesGetClearErrors) {
  const Device device = Device::flex();
  EXPECT_NE(error_of([&] { onnx::Model::load(temp_path("does-not-exist.onnx"), device); }).find("cannot open"),
            std::string::npos);
  {
    std::ofstream(temp_path("empty.onnx"), std::ios::binary);
    EXPECT_NE(error_of([&] { onnx::Model::load(temp_path("empty.onnx"), device); }).find("is not an ONNX model"),
              std::string::npos);
  }
  {
    std::ofstream f(temp_path("garbage.onnx"), std::ios::binary);
    f << "PK\x03\x04 this is a zip file, not a protobuf \xff\xff\xff";
  }
  EXPECT_NE(error_of([&] { onnx::Model::load(temp_path("garbage.onnx"), device); }).find("is not an ONNX model"),
            std::string::npos);

  // A real model cut in half.
  const Mlp mlp = make_mlp(device);
  const std::string path = temp_path("to-truncate.onnx");
  onnx::export_model(mlp, Tensor<2>::zeros({1, 6}, device), path);
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  const std::string truncated = error_of([&] { onnx::Model::load(path, device); });
  EXPECT_TRUE(truncated.find("is not an ONNX model") != std::string::npos ||
              truncated.find("fails ONNX's model checker") != std::string::npos)
      << truncated;
}

/// einsum by its definition, for the test's reference: every assignment of
/// the letters, each product added at its output position; a dim of size 1
/// broadcasts (index 0) against the letter's largest size.
std::vector<float> naive_einsum(const std::string& equation, const std::vector<TensorData>& operands) {
  const auto arrow = equation.find("->");
  std::vector<std::string> terms;
  for (std::size_t start = 0;;) {
    const auto comma = equation.find(',', start);
    terms.push_back(equation.substr(start, std::min(comma, arrow) - start));
    if (comma == std::string::npos || comma > arrow) break;
    start = comma + 1;
  }
  const std::string out = equation.substr(arrow + 2);
  std::map<char, std::size_t> size;
  for (std::size_t i = 0; i < terms.size(); ++i)
    for (std::size_t d = 0; d < terms[i].size(); ++d)
      size[terms[i][d]] = std::max(size[terms[i][d]], operands[i].shape()[d]);
  std::vector<char> letters;
  for (const auto& [c, n] : size) letters.push_back(c);
  std::size_t out_count = 1;
  for (char c : out) out_count *= size[c];
  std::vector<double> result(out_count, 0.0);
  std::vector<std::vector<float>> values;
  for (const auto& op : operands) values.push_back(op.to_vec<float>());
  std::map<char, std::size_t> at;
  for (char c : letters) at[c] = 0;
  for (;;) {
    double product = 1.0;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      std::size_t flat = 0;
      for (std::size_t d = 0; d < terms[i].size(); ++d) {
        const std::size_t n = operands[i].shape()[d];
        flat = flat * n + (n == 1 ? 0 : at[terms[i][d]]);
      }
      product *= values[i][flat];
    }
    std::size_t o = 0;
    for (char c : out) o = o * size[c] + at[c];
    result[o] += product;
    std::size_t k = letters.size();
    while (k > 0 && ++at[letters[k - 1]] == size[letters[k - 1]]) at[letters[--k]] = 0;
    if (k == 0) break;
  }
  return {result.begin(), result.end()};
}

TEST(OnnxImport, EinsumMatchesItsDefinition) {
  struct Case {
    const char* equation;   // as the node has it
    const char* reference;  // the same with letters for ellipses and the implicit output spelled out
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", "ij,jk->ik", {{3, 4}, {4, 5}}},
      {"bij,bjk->bik", "bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
      {"bij,jk->bik", "bij,jk->bik", {{2, 3, 4}, {4, 5}}},
      {"bhqd,bhkd->bhqk", "bhqd,bhkd->bhqk", {{2, 3, 4, 5}, {2, 3, 6, 5}}},
      {"...ij,...jk->...ik", "xyij,yjk->xyik", {{2, 1, 3, 4}, {5, 4, 2}}},
      {"...i,...i->...", "xi,xi->x", {{3, 4}, {1, 4}}},
      {"ij,jk", "ij,jk->ik", {{3, 4}, {4, 2}}},
      {"ij->ji", "ij->ji", {{3, 4}}},
      {"ij->", "ij->", {{3, 4}}},
      {"i,j->ij", "i,j->ij", {{3}, {4}}},
      {"ij,ij->i", "ij,ij->i", {{3, 4}, {3, 4}}},
      {"ijk,ikl,ilm->jm", "ijk,ikl,ilm->jm", {{2, 3, 4}, {2, 4, 5}, {2, 5, 3}}},
      {"abc,cd->da", "abc,cd->da", {{2, 3, 4}, {4, 5}}},
  };
  for (const Device& device : {Device::flex(), Device::ndarray()}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.equation) + " on " + device.to_string());
      Builder b;
      std::vector<std::string> names;
      std::vector<TensorData> inputs;
      for (std::size_t i = 0; i < c.shapes.size(); ++i) {
        names.push_back("x" + std::to_string(i));
        std::vector<std::int64_t> dims;
        for (auto d : c.shapes[i].dims()) dims.push_back(static_cast<std::int64_t>(d));
        b.input(names.back(), dims);
        std::vector<float> v(c.shapes[i].num_elements());
        for (std::size_t j = 0; j < v.size(); ++j) v[j] = static_cast<float>((j * 7 + i * 3) % 11) / 4.0F - 1.0F;
        inputs.push_back(f32(v, c.shapes[i]));
      }
      b.output("y");
      Builder::attr(b.node("Einsum", names, {"y"}), "equation", c.equation);
      const auto out = b.load(device).run(inputs);
      const auto want = naive_einsum(c.reference, inputs);
      const auto have = out[0].to_vec<float>();
      ASSERT_EQ(have.size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(have[i], want[i], 1e-5 * (1.0 + std::abs(want[i]))) << i;
    }
  }
}

TEST(OnnxImport, EinsumDiagonalsAndUnknownOutputIndicesAreRefused) {
  const auto einsum_error = [](const char* equation, std::vector<std::vector<std::int64_t>> shapes) {
    Builder b;
    std::vector<std::string> names;
    std::vector<TensorData> inputs;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      names.push_back("x" + std::to_string(i));
      b.input(names.back(), shapes[i]);
      std::vector<std::size_t> dims(shapes[i].begin(), shapes[i].end());
      inputs.push_back(
          f32(std::vector<float>(std::accumulate(dims.begin(), dims.end(), std::size_t{1}, std::multiplies<>()), 1.0F),
              Shape(dims)));
    }
    b.output("y");
    Builder::attr(b.node("Einsum", names, {"y"}), "equation", equation);
    return error_of([&] { b.load(Device::flex()).run(inputs); });
  };
  const std::string diagonal = einsum_error("ii->i", {{3, 3}});
  EXPECT_NE(diagonal.find("diagonals are not supported"), std::string::npos) << diagonal;
  EXPECT_NE(diagonal.find("Einsum"), std::string::npos) << diagonal;
  const std::string unknown = einsum_error("ij,jk->iz", {{2, 3}, {3, 4}});
  EXPECT_NE(unknown.find("output index 'z'"), std::string::npos) << unknown;
  const std::string sizes = einsum_error("ij,jk->ik", {{2, 3}, {4, 5}});
  EXPECT_NE(sizes.find("index 'j' has size"), std::string::npos) << sizes;
}

TEST(OnnxImport, AnUnsupportedOperatorIsListedWithItsNodeAndWhatIsSupported) {
  Builder b;
  b.input("x", {2}).output("y");
  b.node("Hardmax", {"x"}, {"y"}).set_name("my_hardmax");
  const std::string e = error_of([&] { b.load(Device::flex()); });
  EXPECT_NE(e.find("unsupported operators: Hardmax (node 'my_hardmax')"), std::string::npos) << e;
  EXPECT_NE(e.find("Supported"), std::string::npos) << e;
  EXPECT_NE(e.find("MatMul"), std::string::npos) << e;
}

TEST(OnnxImport, AMissingInitializerAndANewerOpsetAreRefused) {
  Builder missing;
  missing.input("x", {2}).output("y");
  missing.node("Add", {"x", "not_defined_anywhere"}, {"y"});
  const std::string e1 = error_of([&] { missing.load(Device::flex()); });
  EXPECT_NE(e1.find("fails ONNX's model checker"), std::string::npos) << e1;
  EXPECT_NE(e1.find("not_defined_anywhere"), std::string::npos) << e1;

  Builder newer(27);
  newer.input("x", {2}).output("y");
  newer.node("Relu", {"x"}, {"y"});
  const std::string e2 = error_of([&] { newer.load(Device::flex()); });
  EXPECT_NE(e2.find("the model uses ONNX opset 27; this version reads opsets 13 to 26"), std::string::npos) << e2;
}

TEST(OnnxImport, WrongInputsAreNamed) {
  Builder b;
  b.input("x", {-1, 3}).output("y");
  b.node("Relu", {"x"}, {"y"});
  const auto model = b.load(Device::flex());
  EXPECT_NE(error_of([&] { model.run({}); }).find("takes 1 input"), std::string::npos);
  EXPECT_NE(error_of([&] {
              model.run({f32({1, 2}, {1, 2})});
            }).find("input 'x' must have shape [?, 3]"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              model.run({TensorData(std::vector<std::int64_t>{1, 2, 3}, Shape{1, 3})});
            }).find("input 'x' must be f32"),
            std::string::npos);
  model.run({f32({-1, 0, 1, 2, -2, 3}, {2, 3})})[0].assert_eq(f32({0, 0, 1, 2, 0, 3}, {2, 3}));
}

TEST(OnnxImport, ExportedModelsRunOnEveryDevice) {
  const Device flex = Device::flex();
  flex.seed(17);
  const std::string mlp = temp_path("every-mlp.onnx"), cnn = temp_path("every-cnn.onnx"),
                    attn = temp_path("every-attention.onnx");
  onnx::export_model(make_mlp(flex), Tensor<2>::zeros({1, 6}, flex), mlp, onnx::ExportOptions{}.with_dynamic_batch());
  onnx::export_model(make_cnn(flex).valid(), Tensor<4>::zeros({1, 1, 12, 12}, flex), cnn,
                     onnx::ExportOptions{}.with_dynamic_batch());
  onnx::export_model(make_attention(flex), Tensor<3>::zeros({1, 5, 8}, flex), attn,
                     onnx::ExportOptions{}.with_dynamic_batch());
  const TensorData x_mlp = Tensor<2>::random({3, 6}, Distribution::normal(0, 1), flex).to_data();
  const TensorData x_cnn = Tensor<4>::random({2, 1, 12, 12}, Distribution::uniform(0, 1), flex).to_data();
  const TensorData x_attn = Tensor<3>::random({2, 5, 8}, Distribution::normal(0, 1), flex).to_data();
  const auto want_mlp = onnx::Model::load(mlp, flex).run({x_mlp})[0];
  const auto want_cnn = onnx::Model::load(cnn, flex).run({x_cnn})[0];
  const auto want_attn = onnx::Model::load(attn, flex).run({x_attn})[0];
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    onnx::Model::load(mlp, device).run({x_mlp})[0].assert_approx_eq(want_mlp, {1e-4, 1e-5});
    onnx::Model::load(cnn, device).run({x_cnn})[0].assert_approx_eq(want_cnn, {1e-4, 1e-5});
    onnx::Model::load(attn, device).run({x_attn})[0].assert_approx_eq(want_attn, {1e-4, 1e-5});
  }
}

// ---- the inference form (trainable = false) ---------------------------------------------------

std::vector<std::string> param_names(const onnx::Model& m) {
  std::vector<std::string> names;
  module::for_each_param(m, [&](const std::string& name, const module::ParamBase&) { names.push_back(name); });
  std::sort(names.begin(), names.end());
  return names;
}

/// x -> Conv(w, [b]) -> BatchNormalization(prefix) -> Relu, plus a batch
/// norm straight on the input (no Conv to fold into).
Builder conv_bn_model(bool conv_bias, bool conv_also_output) {
  const Device flex = Device::flex();
  auto values = [&](std::size_t n, double lo, double hi, std::uint64_t seed) {
    flex.seed(seed);
    return Tensor<1>::random({n}, Distribution::uniform(lo, hi), flex).to_data();
  };
  flex.seed(5);
  const TensorData w = Tensor<4>::random({4, 3, 3, 3}, Distribution::normal(0, 0.3), flex).to_data();
  Builder b;
  b.input("x", {-1, 3, 6, 6}).output("y");
  b.init("w", w);
  std::vector<std::string> conv_in{"x", "w"};
  if (conv_bias) {
    b.init("b", values(4, -0.5, 0.5, 6));
    conv_in.push_back("b");
  }
  b.init("gamma", values(4, 0.5, 1.5, 7)).init("beta", values(4, -1, 1, 8));
  b.init("mean", values(4, -0.5, 0.5, 9)).init("var", values(4, 0.2, 2.0, 10));
  b.init("in_gamma", values(3, 0.5, 1.5, 11)).init("in_beta", values(3, -1, 1, 12));
  b.init("in_mean", values(3, -0.5, 0.5, 13)).init("in_var", values(3, 0.2, 2.0, 14));
  b.node("BatchNormalization", {"x", "in_gamma", "in_beta", "in_mean", "in_var"}, {"xn"});
  conv_in[0] = "xn";
  Builder::attr(b.node("Conv", conv_in, {"c"}), "pads", std::vector<std::int64_t>{1, 1, 1, 1});
  b.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"n"});
  b.node("Relu", {"n"}, {"y"});
  if (conv_also_output) b.output("c");
  return b;
}

TEST(OnnxImport, InferenceLoadFoldsBatchNormIntoTheConvBeforeIt) {
  const Device flex = Device::flex();
  flex.seed(3);
  const TensorData x = Tensor<4>::random({2, 3, 6, 6}, Distribution::normal(0, 1), flex).to_data();
  for (const bool conv_bias : {false, true}) {
    SCOPED_TRACE(conv_bias ? "conv with bias" : "conv without bias");
    const Builder b = conv_bn_model(conv_bias, false);
    const auto trained = onnx::Model::from_bytes(b.bytes(), flex, true);
    const auto want = trained.run({x})[0];
    for (const Device& device : testing::all_devices()) {
      SCOPED_TRACE(device.to_string());
      const auto inference = onnx::Model::from_bytes(b.bytes(), device, false);
      inference.run({x})[0].assert_approx_eq(want, {1e-5, 1e-5});
      // The conv's batch norm became the conv's weight and bias (under the
      // batch norm's bias name); the one on the input stays.
      std::vector<std::string> want_names{"beta", "in_beta", "in_gamma", "in_mean", "in_var", "w"};
      EXPECT_EQ(param_names(inference), want_names);
    }
    EXPECT_EQ(param_names(trained).size(), conv_bias ? 10u : 9u);
  }
}

TEST(OnnxImport, InferenceLoadLeavesABatchNormWhoseConvOutputIsReadElsewhere) {
  const Device flex = Device::flex();
  flex.seed(4);
  const TensorData x = Tensor<4>::random({1, 3, 6, 6}, Distribution::normal(0, 1), flex).to_data();
  const Builder b = conv_bn_model(true, true);
  const auto want = onnx::Model::from_bytes(b.bytes(), flex, true).run({x});
  const auto inference = onnx::Model::from_bytes(b.bytes(), flex, false);
  const auto got = inference.run({x});
  ASSERT_EQ(got.size(), 2u);
  got[0].assert_approx_eq(want[0], {1e-6, 1e-6});
  got[1].assert_approx_eq(want[1], {1e-6, 1e-6});
  EXPECT_EQ(param_names(inference).size(), 10u) << "nothing folded: the conv's output is also a graph output";
}

TEST(OnnxImport, InferenceLoadOfMalformedConvAndBatchNormPairsIsSafe) {
  // Found by the onnx fuzz target: in a model newer than ONNX's checker
  // knows, a batch norm without outputs after a Conv crashed the batch-norm
  // fold, and so could a Conv missing its weight.
  Builder b(21);
  b.model.set_ir_version(10);
  b.input("x", {1, 1, 2, 2}).output("y");
  for (const char* name : {"scale", "bias", "mean", "var"}) b.init(name, f32({1.0F}, {1}));
  b.node("Conv", {"x"}, {"c"});
  b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"});
  const auto model = onnx::Model::from_bytes(b.bytes(), Device::flex(), /*trainable=*/false);
  const std::string e = error_of([&] { (void)model.run({f32({1, 2, 3, 4}, {1, 1, 2, 2})}); });
  EXPECT_NE(e.find("node 'Conv_1' (Conv): input 1 is required but missing"), std::string::npos) << e;

  // And a batch norm with no outputs at all: nothing to fold into.
  Builder silent(21);
  silent.model.set_ir_version(10);
  silent.input("x", {1, 1, 2, 2}).output("y");
  silent.init("w", f32({2.0F}, {1, 1, 1, 1}));
  for (const char* name : {"scale", "bias", "mean", "var"}) silent.init(name, f32({1.0F}, {1}));
  silent.node("Identity", {"x"}, {"y"});
  silent.node("Conv", {"x", "w"}, {"c"});
  silent.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {});
  onnx::Model::from_bytes(silent.bytes(), Device::flex(), /*trainable=*/false)
      .run({f32({1, 2, 3, 4}, {1, 1, 2, 2})})[0]
      .assert_eq(f32({1, 2, 3, 4}, {1, 1, 2, 2}));
}

TEST(OnnxImport, AValueAGraphOutputAndALaterNodeBothReadSurvivesTheRun) {
  // forward() drops each value after its last reader; a graph output is
  // never dropped, even when a node reads it later.
  Builder b;
  b.input("x", {2}).output("h").output("y");
  b.node("Relu", {"x"}, {"h"});
  b.node("Neg", {"h"}, {"y"});
  const auto out = b.load(Device::flex()).run({f32({-1, 2}, {2})});
  ASSERT_EQ(out.size(), 2u);
  out[0].assert_eq(f32({0, 2}, {2}));
  out[1].assert_eq(f32({-0.0F, -2}, {2}));
}

// ---- an imported model is a module ----------------------------------------------------------------

TEST(OnnxImport, GradientsFlowToTheImportedParametersAsToTheOriginals) {
  const Device device = Device::flex();
  device.seed(11);
  const Mlp model = make_mlp(device);
  const std::string path = temp_path("mlp-grad.onnx");
  onnx::export_model(model, Tensor<2>::zeros({1, 6}, device), path, onnx::ExportOptions{}.with_dynamic_batch());

  const Device ad = device.autodiff();
  const auto x = Tensor<2>::random({5, 6}, Distribution::normal(0, 1), device);
  const Mlp native = model.fork(ad);
  const auto native_grads = native.forward(x.to_device(ad)).powi_scalar(2).sum().backward();

  const auto imported = onnx::Model::load(path, ad);
  const auto y = imported.forward<2>(x.to_device(ad));
  const auto grads = y.powi_scalar(2).sum().backward();
  std::size_t checked = 0;
  module::for_each_param(imported, [&](const std::string& name, const module::ParamBase& p) {
    const auto g = detail::grad(p.ref(), grads);
    ASSERT_TRUE(g) << name;
    std::optional<detail::TensorRef> want;
    module::for_each_param(native, [&](const std::string& n, const module::ParamBase& q) {
      if (n == name) want = detail::grad(q.ref(), native_grads);
    });
    ASSERT_TRUE(want) << name;
    detail::to_data(*g).assert_approx_eq(detail::to_data(*want), {1e-6, 1e-6});
    ++checked;
  });
  EXPECT_EQ(checked, 4u);
}

TEST(OnnxImport, RecordsSaveAndLoadTheImportedParameters) {
  const Device device = Device::flex();
  device.seed(13);
  const std::string path = temp_path("mlp-record.onnx");
  onnx::export_model(make_mlp(device), Tensor<2>::zeros({2, 6}, device), path);
  const auto a = onnx::Model::load(path, device);
  // A different model's weights, through the record.
  const std::string other = temp_path("mlp-other.onnx");
  onnx::export_model(make_mlp(device), Tensor<2>::zeros({2, 6}, device), other);
  const auto b = onnx::Model::load(other, device);
  const std::string rec = temp_path("mlp-b.safetensors");
  record::save_module(b, rec);
  const auto a_with_b = record::load_module(a, rec);
  const auto x = TensorData(std::vector<float>(12, 0.5F), Shape{2, 6});
  a_with_b.run({x})[0].assert_eq(b.run({x})[0]);
  EXPECT_NE(a.run({x})[0], b.run({x})[0]);
}

}  // namespace
}  // namespace burn
