// Every IR op through ATen: the second (and last) translation unit of the
// LibTorch backend that includes torch headers. The op families live in the
// .inc files below, textually included so they compile once, here; each
// defines `Tensors run(Call&, const ir::X&)` overloads.
//
// Conventions shared by every op:
// - Half types (f16, bf16) are computed in f32 by arithmetic ops, as on the
//   other backends (many ATen 1.13 CPU kernels have no f16 version); outputs
//   are rounded back to the dtype `ir::infer_outputs` asked for.
// - Results never write into an input's storage, except for an input that
//   dispatch marked reusable whose tensor and storage nobody else holds.
// - ATen failures become burn::Error "[op] LibTorch: ..."; the conditions the
//   IR documents as errors (integer division by zero, bad indices) are checked
//   here first, with the other backends' messages.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "backends/libtorch/torch_common.hpp"

namespace burn::libtorch {
namespace {

using Tensors = std::vector<at::Tensor>;

/// Ops that compute with their elements (not just move them): these see
/// half inputs widened to f32. Scatter and select_assign with Add are not
/// among them: their accumulation rounds to the 16-bit dtype after every
/// add, as the other backends store each partial sum, and ATen's 16-bit
/// `+=` does exactly that in the same order.
bool computes(const ir::Op& op) {
  return std::visit(
      [](const auto& o) {
        using O = std::decay_t<decltype(o)>;
        return std::is_same_v<O, ir::Unary> || std::is_same_v<O, ir::Binary> || std::is_same_v<O, ir::Clamp> ||
               std::is_same_v<O, ir::Matmul> || std::is_same_v<O, ir::Reduce> || std::is_same_v<O, ir::Cumulative> ||
               std::is_same_v<O, ir::Sort> || std::is_same_v<O, ir::Conv> || std::is_same_v<O, ir::ConvTranspose> ||
               std::is_same_v<O, ir::ConvWeightGrad> || std::is_same_v<O, ir::MaxPool> ||
               std::is_same_v<O, ir::AvgPool> || std::is_same_v<O, ir::AdaptiveAvgPool> ||
               std::is_same_v<O, ir::Interpolate> || std::is_same_v<O, ir::LayerNorm> ||
               std::is_same_v<O, ir::Softmax> || std::is_same_v<O, ir::Gelu> || std::is_same_v<O, ir::BatchNorm>;
      },
      op);
}

/// One op's inputs and outputs as the kernels see them.
struct Call {
  Engine& engine;
  std::string_view name;                   ///< the op's name, for errors
  std::span<const backend::Input> inputs;  ///< original specs and reusability
  Tensors in;                              ///< inputs, half types widened when `widened`
  std::vector<bool> exclusive;             ///< tensor and storage held by the input's primitive only
  std::vector<ir::TensorSpec> out;         ///< outputs in the dtypes the kernel computes in
  bool widened = false;

  /// The dtype input i had before widening.
  DType dtype(std::size_t i) const { return inputs[i].spec.dtype; }
  at::TensorOptions options(DType d) const { return at::TensorOptions().dtype(scalar_type(d)).device(engine.device); }
  at::Tensor empty(std::size_t o = 0) const { return at::empty(sizes_of(out[o].shape), options(out[o].dtype)); }

  /// Whether input i may be overwritten: dispatch lends it, nothing shares its
  /// tensor or storage, and its layout has no repeated (expanded) elements.
  bool may_overwrite(std::size_t i) const {
    return i < in.size() && inputs[i].reusable && exclusive[i] && !widened && in[i].is_non_overlapping_and_dense();
  }
  /// Where an elementwise result goes: the first overwritable candidate input
  /// shaped and typed like output 0, else a fresh tensor.
  at::Tensor target(std::initializer_list<std::size_t> candidates) const {
    const auto sizes = sizes_of(out[0].shape);
    for (std::size_t i : candidates)
      if (may_overwrite(i) && in[i].sizes().equals(sizes) && in[i].scalar_type() == scalar_type(out[0].dtype))
        return in[i];
    return empty();
  }
  /// Input i as a tensor the caller may write into: itself when allowed, else a copy.
  at::Tensor writable(std::size_t i) const {
    if (may_overwrite(i)) return in[i];
    return in[i].clone(at::MemoryFormat::Contiguous);
  }
};

/// A scalar operand as the element type `d` holds it (x == 0.1 on f16
/// compares with 0.1 rounded to f16), as the other backends take it.
at::Scalar element_scalar(const Scalar& s, DType d) {
  return visit_dtype(d, [&]<class T>() -> at::Scalar {
    const T v = s.as<T>();
    if constexpr (std::is_same_v<T, bool>) return at::Scalar(v);
    else if constexpr (std::is_integral_v<T>) return at::Scalar(static_cast<std::int64_t>(v));
    else return at::Scalar(convert_element<double>(v));
  });
}

/// The scalar as a 0-dim tensor of the dtype `like` computes in.
at::Tensor scalar_tensor(const Scalar& s, DType d, const at::Tensor& like) {
  return at::scalar_tensor(element_scalar(s, d), like.options());
}

std::vector<std::int64_t> i64s(const std::vector<std::size_t>& v) {
  return std::vector<std::int64_t>(v.begin(), v.end());
}

bool any_true(const at::Tensor& mask) { return mask.numel() > 0 && mask.any().item<bool>(); }

}  // namespace
}  // namespace burn::libtorch

#include "backends/libtorch/cast.inc"
#include "backends/libtorch/creation.inc"
#include "backends/libtorch/elementwise.inc"
#include "backends/libtorch/indexing.inc"
#include "backends/libtorch/layout.inc"
#include "backends/libtorch/module_ops.inc"
#include "backends/libtorch/reduce.inc"

namespace burn::libtorch {

namespace {

std::vector<backend::PrimitivePtr> execute_op(Engine& engine, const ir::Op& op, std::string_view name,
                                              std::span<const backend::Input> inputs,
                                              std::span<const ir::TensorSpec> outputs) {
  std::vector<backend::PrimitivePtr> prims;
  prims.reserve(outputs.size());
  // Results without elements need no kernel (ATen refuses some, such as the
  // argmax of an empty dim inside an empty tensor).
  if (std::all_of(outputs.begin(), outputs.end(), [](const auto& s) { return s.shape.num_elements() == 0; })) {
    for (const auto& s : outputs) {
      const auto options = at::TensorOptions().dtype(scalar_type(s.dtype)).device(engine.device);
      prims.push_back(wrap(at::empty(sizes_of(s.shape), options)));
    }
    return prims;
  }
  Call call{engine, name, inputs, {}, {}, {outputs.begin(), outputs.end()}};
  for (const auto& in : inputs) call.widened = call.widened || is_half(in.spec.dtype);
  call.widened = call.widened && computes(op);
  for (const auto& in : inputs) {
    const at::Tensor& t = tensor_of(in.primitive);
    call.exclusive.push_back(t.use_count() == 1 && t.storage().use_count() == 1);
    call.in.push_back(call.widened && is_half(in.spec.dtype) ? t.to(at::kFloat) : t);
  }
  if (call.widened)
    for (auto& s : call.out)
      if (is_half(s.dtype)) s.dtype = DType::F32;

  Tensors results = std::visit([&](const auto& o) { return run(call, o); }, op);
  if (results.size() != outputs.size())
    throw ExecutionError(
        name, fmt::format("the libtorch kernel returned {} outputs, {} expected", results.size(), outputs.size()));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    at::Tensor t = std::move(results[i]);
    const auto want = scalar_type(outputs[i].dtype);
    if (t.scalar_type() != want) t = t.to(want);
    if (!t.sizes().equals(sizes_of(outputs[i].shape)))
      throw ExecutionError(name, fmt::format("the libtorch kernel returned shape {} where {} was expected",
                                             fmt::join(t.sizes(), ", "), outputs[i].shape.to_string()));
    prims.push_back(wrap(std::move(t)));
  }
  return prims;
}

}  // namespace

std::vector<backend::PrimitivePtr> execute(Engine& engine, const ir::Op& op, std::span<const backend::Input> inputs,
                                           std::span<const ir::TensorSpec> outputs) {
  TorchGuard guard;
  const std::string_view name = ir::op_name(op);
  return translating_errors(name, [&] { return execute_op(engine, op, name, inputs, outputs); });
}

}  // namespace burn::libtorch
