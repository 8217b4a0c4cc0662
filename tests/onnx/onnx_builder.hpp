// Small ONNX models built by hand for the import tests: a graph's inputs,
// outputs, initializers and nodes written straight into ONNX's protobuf
// messages, then loaded like a file.
#pragma once

#include <burn/burn.hpp>
#include <burn/onnx.hpp>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace burn::onnx_test {

inline ::onnx::TensorProto_DataType onnx_type_of(DType dtype) {
  switch (dtype) {
    case DType::F32: return ::onnx::TensorProto::FLOAT;
    case DType::I32: return ::onnx::TensorProto::INT32;
    case DType::I8: return ::onnx::TensorProto::INT8;
    case DType::U8: return ::onnx::TensorProto::UINT8;
    default: return ::onnx::TensorProto::INT64;
  }
}

/// Builds small ONNX models by hand.
struct Builder {
  ::onnx::ModelProto model;
  ::onnx::GraphProto& g;
  explicit Builder(std::int64_t opset = 17) : g(*model.mutable_graph()) {
    model.set_ir_version(opset > 17 ? 10 : 8);  // the IR version exporters write with these opsets
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g.set_name("test");
  }
  void value_info(::onnx::ValueInfoProto* v, const std::string& name, ::onnx::TensorProto_DataType type,
                  const std::vector<std::int64_t>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* s = t->mutable_shape();
    for (auto d : dims) {
      auto* dim = s->add_dim();
      if (d < 0) dim->set_dim_param("n");
      else dim->set_dim_value(d);
    }
  }
  Builder& input(const std::string& name, const std::vector<std::int64_t>& dims,
                 ::onnx::TensorProto_DataType type = ::onnx::TensorProto::FLOAT) {
    value_info(g.add_input(), name, type, dims);
    return *this;
  }
  Builder& output(const std::string& name, ::onnx::TensorProto_DataType type = ::onnx::TensorProto::FLOAT) {
    auto* v = g.add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    v->mutable_type()->mutable_tensor_type()->mutable_shape();  // unknown dims
    return *this;
  }
  Builder& init(const std::string& name, const TensorData& data) {
    auto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx_type_of(data.dtype()));
    for (auto d : data.shape().dims()) t->add_dims(static_cast<std::int64_t>(d));
    t->set_raw_data(reinterpret_cast<const char*>(data.bytes().data()), data.bytes().size());
    return *this;
  }
  ::onnx::NodeProto& node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(g.node_size()));
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return *n;
  }
  static void attr(::onnx::NodeProto& n, const std::string& name, std::int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(::onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(::onnx::NodeProto& n, const std::string& name, const char* v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void attr(::onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  std::vector<std::byte> bytes() const {
    std::string s;
    EXPECT_TRUE(model.SerializeToString(&s));
    std::vector<std::byte> b(s.size());
    if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
    return b;
  }
  onnx::Model load(const Device& device) const { return onnx::Model::from_bytes(bytes(), device); }
  /// Writes the model to `path` and loads it from there (so that external data beside it is found).
  onnx::Model load_file(const std::string& path, const Device& device) const {
    const auto b = bytes();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return onnx::Model::load(path, device);
  }
};

inline TensorData f32(std::vector<float> v, Shape s) { return TensorData(v, std::move(s)); }
inline TensorData i64(std::vector<std::int64_t> v) { return TensorData(v); }

/// The message of the burn::Error `f` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace burn::onnx_test
