// ONNX import of model-local functions (ModelProto.functions) on hand-made
// graphs: calls expanded into their bodies, attributes passed by reference
// with the callee's defaults (IR 9) and overloads (IR 10), outputs that pass
// an input through, and the errors of recursive, duplicated and
// mismatched functions. tests/onnx/fixtures/modules_as_functions.onnx is the
// same from PyTorch's `export_modules_as_functions`, against PyTorch.
#include <burn/onnx.hpp>
#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "burn_test.hpp"
#include "onnx_builder.hpp"

namespace burn {
namespace {

using namespace onnx_test;

// Fields of IR 9 and 10 that the ONNX schema the tests build with (IR 8)
// does not know: written as a newer writer would, by field number.
constexpr int kFunctionAttributeProtoField = 11;
constexpr int kFunctionOverloadField = 13;
constexpr int kNodeOverloadField = 8;

void add_unknown(google::protobuf::Message& m, int field, const std::string& bytes) {
  m.GetReflection()->MutableUnknownFields(&m)->AddLengthDelimited(field, bytes);
}

::onnx::FunctionProto& add_function(Builder& b, const std::string& domain, const std::string& name,
                                    const std::vector<std::string>& in, const std::vector<std::string>& out,
                                    std::int64_t opset = 17) {
  auto& f = *b.model.add_functions();
  f.set_domain(domain);
  f.set_name(name);
  for (const auto& i : in) f.add_input(i);
  for (const auto& o : out) f.add_output(o);
  auto* o = f.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  auto* own = f.add_opset_import();
  own->set_domain(domain);
  own->set_version(1);
  bool imported = false;
  for (const auto& m : b.model.opset_import()) imported |= m.domain() == domain;
  if (!imported) {
    auto* m = b.model.add_opset_import();
    m->set_domain(domain);
    m->set_version(1);
  }
  return f;
}

::onnx::NodeProto& body_node(::onnx::FunctionProto& f, const std::string& op, const std::vector<std::string>& in,
                             const std::vector<std::string>& out, const std::string& domain = "") {
  auto& n = *f.add_node();
  n.set_op_type(op);
  n.set_domain(domain);
  n.set_name(op + "_" + std::to_string(f.node_size()));
  for (const auto& i : in) n.add_input(i);
  for (const auto& o : out) n.add_output(o);
  return n;
}

/// An attribute of `n` that takes the enclosing function's attribute `ref`.
void ref_attr(::onnx::NodeProto& n, const std::string& name, const std::string& ref,
              ::onnx::AttributeProto_AttributeType type) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_ref_attr_name(ref);
  a->set_type(type);
}

/// f(x) for each element of `x`.
template <class F>
std::vector<float> map(const std::vector<float>& x, F f) {
  std::vector<float> y(x.size());
  std::transform(x.begin(), x.end(), y.begin(), f);
  return y;
}

/// [n, k] x [k, m] in double, rounded to float.
std::vector<float> matmul(const std::vector<float>& a, const std::vector<float>& b, std::size_t n, std::size_t k,
                          std::size_t m) {
  std::vector<float> c(n * m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      double s = 0.0;
      for (std::size_t p = 0; p < k; ++p) s += static_cast<double>(a[i * k + p]) * b[p * m + j];
      c[i * m + j] = static_cast<float>(s);
    }
  return c;
}

TEST(OnnxLocalFunctions, CallsRunAsTheirBodiesWithTheCallersAttributesAndTheDefaults) {
  Builder b;
  b.model.set_ir_version(10);  // function attribute defaults are IR 9
  // ScaledLeaky(X, S) = LeakyRelu(X * S, alpha), alpha 0.1 unless the call
  // gives it. Its inner value "y1" is also a value of the main graph.
  auto& scaled = add_function(b, "custom", "ScaledLeaky", {"X", "S"}, {"Y"});
  body_node(scaled, "Mul", {"X", "S"}, {"y1"});
  ref_attr(body_node(scaled, "LeakyRelu", {"y1"}, {"Y"}), "alpha", "alpha", ::onnx::AttributeProto::FLOAT);
  ::onnx::AttributeProto alpha_default;
  alpha_default.set_name("alpha");
  alpha_default.set_type(::onnx::AttributeProto::FLOAT);
  alpha_default.set_f(0.1F);
  // An attribute with a default is listed as an AttributeProto only (not also by name).
  add_unknown(scaled, kFunctionAttributeProtoField, alpha_default.SerializeAsString());
  // Block(X, W, S) = (ScaledLeaky(X W, S) with alpha = slope, X): a function
  // calling a function, and an output that passes an input through.
  auto& block = add_function(b, "custom", "Block", {"X", "W", "S"}, {"Y", "X"});
  block.add_attribute("slope");
  body_node(block, "MatMul", {"X", "W"}, {"h"});
  ref_attr(body_node(block, "ScaledLeaky", {"h", "S"}, {"Y"}, "custom"), "alpha", "slope",
           ::onnx::AttributeProto::FLOAT);

  const std::vector<float> x{0.5F, -1.0F, 2.0F, -0.25F, 1.5F, -2.0F};
  const std::vector<float> w1{0.2F, -0.7F, 1.1F, 0.9F, 0.3F, -0.4F, -0.6F, 0.8F, 0.5F};
  const std::vector<float> w2{-0.3F, 0.6F, 0.4F, 1.2F, -0.9F, 0.1F, 0.7F, 0.2F, -1.0F};
  b.input("x", {2, 3}).output("z");
  b.init("w1", f32(w1, {3, 3})).init("w2", f32(w2, {3, 3})).init("s", f32({1.5F}, {1}));
  auto& first = b.node("Block", {"x", "w1", "s"}, {"y1", "x_again"});
  first.set_domain("custom");
  Builder::attr(first, "slope", 0.3F);
  b.node("Block", {"y1", "w2", "s"}, {"y"}).set_domain("custom");  // no slope: ScaledLeaky's default
  b.node("Add", {"y", "x_again"}, {"z"});

  auto leaky = [](float slope) { return [slope](float v) { return v < 0 ? v * slope : v; }; };
  auto scale = [](float v) { return v * 1.5F; };
  const auto y1 = map(map(matmul(x, w1, 2, 3, 3), scale), leaky(0.3F));
  const auto y = map(map(matmul(y1, w2, 2, 3, 3), scale), leaky(0.1F));
  std::vector<float> z(y.size());
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = y[i] + x[i];
  // Both slopes matter: some products are negative at each level.
  ASSERT_TRUE(std::any_of(y1.begin(), y1.end(), [](float v) { return v < 0; }));
  ASSERT_TRUE(std::any_of(y.begin(), y.end(), [](float v) { return v < 0; }));
  for (const Device& device : testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = b.load(device).run({f32(x, {2, 3})});
    out[0].assert_approx_eq(f32(z, {2, 3}), {1e-5, 1e-6});
  }
}

TEST(OnnxLocalFunctions, AnOverloadIsChosenByTheCallsOverload) {
  Builder b;
  b.model.set_ir_version(10);  // overloads are IR 10
  auto& relu = add_function(b, "custom", "Act", {"X"}, {"Y"});
  body_node(relu, "Relu", {"X"}, {"Y"});
  add_unknown(relu, kFunctionOverloadField, "relu");
  auto& neg = add_function(b, "custom", "Act", {"X"}, {"Y"});
  body_node(neg, "Neg", {"X"}, {"Y"});
  add_unknown(neg, kFunctionOverloadField, "neg");
  b.input("x", {4}).output("a").output("n");
  add_unknown(b.node("Act", {"x"}, {"a"}), kNodeOverloadField, "relu");
  add_unknown(b.node("Act", {"x"}, {"n"}), kNodeOverloadField, "neg");
  for (auto& n : *b.g.mutable_node()) n.set_domain("custom");
  const auto out = b.load(Device::flex()).run({f32({-1, 2, -3, 4}, {4})});
  out[0].assert_eq(f32({0, 2, 0, 4}, {4}));
  out[1].assert_eq(f32({1, -2, 3, -4}, {4}));
}

TEST(OnnxLocalFunctions, AFunctionAtAnotherOpsetLoadsWhereItsOperatorsAreTheSame) {
  // Relu is the same operator at opsets 14 and 17; Squeeze changed at 13.
  Builder same;
  body_node(add_function(same, "custom", "F", {"X"}, {"Y"}, 14), "Relu", {"X"}, {"Y"});
  same.input("x", {2}).output("y");
  same.node("F", {"x"}, {"y"}).set_domain("custom");
  same.load(Device::flex()).run({f32({-1, 1}, {2})})[0].assert_eq(f32({0, 1}, {2}));

  Builder changed;
  body_node(add_function(changed, "custom", "F", {"X"}, {"Y"}, 11), "Squeeze", {"X"}, {"Y"});
  changed.input("x", {1, 2}).output("y");
  changed.node("F", {"x"}, {"y"}).set_domain("custom");
  changed.model.set_ir_version(10);  // past the checker, which refuses it too
  const std::string e = error_of([&] { (void)changed.load(Device::flex()); });
  EXPECT_NE(e.find("local function 'custom::F' imports ONNX opset 11 and the model opset 17"), std::string::npos) << e;
  EXPECT_NE(e.find("(Squeeze)"), std::string::npos) << e;
}

TEST(OnnxLocalFunctions, BadFunctionsGetClearErrors) {
  {  // a function that calls itself
    Builder b;
    b.model.set_ir_version(10);
    body_node(add_function(b, "custom", "Loop", {"X"}, {"Y"}), "Loop", {"X"}, {"Y"}, "custom");
    b.input("x", {2}).output("y");
    b.node("Loop", {"x"}, {"y"}).set_domain("custom");
    const std::string e = error_of([&] { (void)b.load(Device::flex()); });
    EXPECT_NE(e.find("the local function 'custom::Loop' calls itself (custom::Loop -> custom::Loop)"),
              std::string::npos)
        << e;
  }
  {  // functions that call the next one twice each: 2^40 nodes, refused before any is made
    Builder b;
    b.model.set_ir_version(10);
    constexpr int kLevels = 40;
    for (int i = 0; i < kLevels; ++i) {
      auto& f = add_function(b, "custom", "F" + std::to_string(i), {"X"}, {"Y"});
      if (i + 1 == kLevels) {
        body_node(f, "Relu", {"X"}, {"Y"});
        continue;
      }
      const std::string next = "F" + std::to_string(i + 1);
      body_node(f, next, {"X"}, {"t"}, "custom");
      body_node(f, next, {"t"}, {"Y"}, "custom");
    }
    b.input("x", {2}).output("y");
    b.node("F0", {"x"}, {"y"}).set_domain("custom");
    const std::string e = error_of([&] { (void)b.load(Device::flex()); });
    EXPECT_NE(e.find("its local functions, expanded, would give more than 1048576 nodes"), std::string::npos) << e;
  }
  {  // an operator import lacks, inside a function: named by its inlined node
    Builder b;
    body_node(add_function(b, "custom", "Odd", {"X"}, {"Y"}), "Shrink", {"X"}, {"Y"});
    b.input("x", {2}).output("y");
    b.node("Odd", {"x"}, {"y"}).set_domain("custom");
    const std::string e = error_of([&] { (void)b.load(Device::flex()); });
    EXPECT_NE(e.find("unsupported operators: Shrink (node 'Odd_1/Shrink_1')"), std::string::npos) << e;
  }
  {  // more inputs than the function takes
    Builder b;
    b.model.set_ir_version(10);
    body_node(add_function(b, "custom", "One", {"X"}, {"Y"}), "Relu", {"X"}, {"Y"});
    b.input("x", {2}).output("y");
    b.node("One", {"x", "x"}, {"y"}).set_domain("custom");
    const std::string e = error_of([&] { (void)b.load(Device::flex()); });
    EXPECT_NE(e.find("node 'One_1' calls the local function 'custom::One' with 2 inputs and 1 outputs; it takes at "
                     "most 1 and 1"),
              std::string::npos)
        << e;
  }
  {  // the same function twice
    Builder b;
    b.model.set_ir_version(10);
    body_node(add_function(b, "custom", "Twice", {"X"}, {"Y"}), "Relu", {"X"}, {"Y"});
    body_node(add_function(b, "custom", "Twice", {"X"}, {"Y"}), "Neg", {"X"}, {"Y"});
    b.input("x", {2}).output("y");
    b.node("Twice", {"x"}, {"y"}).set_domain("custom");
    const std::string e = error_of([&] { (void)b.load(Device::flex()); });
    EXPECT_NE(e.find("it defines the local function 'custom::Twice' twice"), std::string::npos) << e;
  }
  {  // an output the body never computes
    Builder b;
    b.model.set_ir_version(10);
    body_node(add_function(b, "custom", "Half", {"X"}, {"Y", "Z"}), "Relu", {"X"}, {"Y"});
    b.input("x", {2}).output("z");
    b.node("Half", {"x"}, {"y", "z"}).set_domain("custom");
    const std::string e = error_of([&] { (void)b.load(Device::flex()); });
    EXPECT_NE(e.find("the local function 'custom::Half' never computes its output 'Z' (called by node 'Half_1')"),
              std::string::npos)
        << e;
  }
}

}  // namespace
}  // namespace burn
