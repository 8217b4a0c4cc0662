// The non-generic functions the thin Tensor<D, K> template forwards to.
// Everything here works on backend-free handles; ranks are checked by the
// template, shapes and dtypes by the IR, devices by dispatch.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <burn/detail/tensor_ref.hpp>
#include <burn/kind.hpp>
#include <burn/tensor_data.hpp>

namespace burn::detail {

/// Throws burn::Error("[op] the tensor was moved from ..."): a Tensor used
/// after std::move has no handle (src/tensor/creation.cpp).
[[noreturn]] void throw_moved_from(std::string_view op);

// ---- dispatch (src/dispatch/) ---------------------------------------------------------------------
/// Runs a primitive op on the inputs' device (all inputs must share one).
/// A handle in `inputs` that nothing else shares (use count 1) counts as
/// handed over: the backend may reuse or release its storage. A caller that
/// borrows a handle passes a copy (the initializer-list form copies).
std::vector<TensorRef> execute(const ir::Op& op, std::span<const TensorRef> inputs);
TensorRef execute1(const ir::Op& op, std::span<const TensorRef> inputs);
inline TensorRef execute1(const ir::Op& op, std::initializer_list<TensorRef> inputs) {
  return execute1(op, std::span<const TensorRef>(inputs.begin(), inputs.size()));
}
/// Runs a creation op (no inputs) on `device`.
TensorRef create(const ir::Op& op, const Device& device);

// ---- creation and data (src/tensor/creation.cpp) -------------------------------------------------
/// The dtype a new tensor of `kind` gets: the explicit one (checked against the
/// kind) or the device's default; locks the device's settings.
DType creation_dtype(const TensorCreationOptions& options, TensorKind kind, std::string_view op);
TensorRef full(const Shape& shape, Scalar value, const TensorCreationOptions& options, TensorKind kind);
TensorRef arange(std::int64_t start, std::int64_t end, std::int64_t step, const TensorCreationOptions& options,
                 TensorKind kind);
TensorRef linspace(double start, double end, std::size_t steps, const TensorCreationOptions& options);
TensorRef eye(std::size_t n, const TensorCreationOptions& options, TensorKind kind);
TensorRef random(const Shape& shape, const Distribution& dist, const TensorCreationOptions& options, TensorKind kind);
/// Converts the data to the options' dtype, or to the device default of `kind`.
TensorRef from_data(TensorData data, const TensorCreationOptions& options, TensorKind kind);
/// from_data of data the caller keeps: one copy, straight into the new
/// tensor's storage on a device with host memory (from_data would first
/// copy the TensorData and then its bytes).
TensorRef copy_from_data(const TensorData& data, const TensorCreationOptions& options, TensorKind kind);
TensorData to_data(const TensorRef& t);
TensorRef to_device(const TensorRef& t, const Device& device);
TensorRef cast(const TensorRef& t, DType dtype);
/// Changes kind: to Float uses the device's default float dtype, etc.
TensorRef to_kind(const TensorRef& t, TensorKind kind);
/// A handle with the same storage and another autodiff context.
TensorRef with_context(const TensorRef& t, const Device& device_with_context);

// ---- elementwise (src/tensor/elementwise.cpp) --------------------------------------------------------
TensorRef unary(ir::UnaryOp op, const TensorRef& t);
TensorRef binary(ir::BinaryOp op, const TensorRef& a, const TensorRef& b);
TensorRef binary_scalar(ir::BinaryOp op, const TensorRef& a, Scalar b);
// The same, consuming an operand: when the caller held the only handle, the
// backend may write the result into its storage (in-place execution).
TensorRef unary(ir::UnaryOp op, TensorRef&& t);
TensorRef binary(ir::BinaryOp op, TensorRef&& a, const TensorRef& b);
TensorRef binary(ir::BinaryOp op, const TensorRef& a, TensorRef&& b);
TensorRef binary(ir::BinaryOp op, TensorRef&& a, TensorRef&& b);
TensorRef binary_scalar(ir::BinaryOp op, TensorRef&& a, Scalar b);
/// `scalar op t` for non-commutative ops (2 - t, 1 / t, 2 ^ t).
TensorRef scalar_binary(ir::BinaryOp op, Scalar a, const TensorRef& t);
TensorRef clamp(const TensorRef& t, std::optional<Scalar> min, std::optional<Scalar> max);
TensorRef cross(const TensorRef& a, const TensorRef& b, std::int64_t dim);
TensorRef matmul(const TensorRef& a, const TensorRef& b);

// ---- reductions (src/tensor/reduce.cpp) -----------------------------------------------------------------
/// dim is normalised here (negative counts from the end).
TensorRef reduce_dim(ir::ReduceOp op, const TensorRef& t, std::int64_t dim);
/// Whole-tensor reduction -> shape [1].
TensorRef reduce_all(ir::ReduceOp op, const TensorRef& t);
TensorRef var_dim(const TensorRef& t, std::int64_t dim, std::size_t correction);
std::pair<TensorRef, TensorRef> var_mean_dim(const TensorRef& t, std::int64_t dim, std::size_t correction);
std::pair<TensorRef, TensorRef> max_min_dim_with_indices(const TensorRef& t, std::int64_t dim, bool max);
TensorRef cumulative(ir::CumulativeOp op, const TensorRef& t, std::int64_t dim);
/// {values, indices}
std::pair<TensorRef, TensorRef> sort(const TensorRef& t, std::int64_t dim, bool descending);
std::pair<TensorRef, TensorRef> topk(const TensorRef& t, std::size_t k, std::int64_t dim, bool largest);

// ---- layout (src/tensor/layout.cpp) ------------------------------------------------------------------------
/// `dims` may hold one -1 (inferred) and 0 (keep the input's size, as in Burn).
TensorRef reshape(const TensorRef& t, std::span<const std::int64_t> dims);
/// Reshape to a fully resolved shape (sizes taken literally: 0 is an empty dim).
TensorRef reshape_exact(const TensorRef& t, Shape shape);
TensorRef permute(const TensorRef& t, std::span<const std::int64_t> axes);
TensorRef swap_dims(const TensorRef& t, std::int64_t a, std::int64_t b);
TensorRef flip(const TensorRef& t, std::span<const std::int64_t> axes);
/// Target shape with -1 meaning "keep"; new leading dims allowed.
TensorRef expand(const TensorRef& t, std::span<const std::int64_t> shape);
TensorRef unsqueeze_dim(const TensorRef& t, std::int64_t dim);
TensorRef squeeze_dim(const TensorRef& t, std::int64_t dim);
TensorRef slice(const TensorRef& t, std::span<const Range> ranges);
TensorRef slice_assign(const TensorRef& t, std::span<const Range> ranges, const TensorRef& values);
TensorRef slice_fill(const TensorRef& t, std::span<const Range> ranges, Scalar value);
TensorRef narrow(const TensorRef& t, std::int64_t dim, std::int64_t start, std::size_t length);
std::vector<TensorRef> chunk(const TensorRef& t, std::size_t chunks, std::int64_t dim);
std::vector<TensorRef> split(const TensorRef& t, std::size_t split_size, std::int64_t dim);
std::vector<TensorRef> split_with_sizes(const TensorRef& t, std::span<const std::size_t> sizes, std::int64_t dim);
TensorRef cat(std::span<const TensorRef> tensors, std::int64_t dim);
TensorRef stack(std::span<const TensorRef> tensors, std::int64_t dim);
TensorRef repeat_dim(const TensorRef& t, std::int64_t dim, std::size_t times);
TensorRef repeat(const TensorRef& t, std::span<const std::size_t> sizes);
TensorRef unfold(const TensorRef& t, std::int64_t dim, std::size_t size, std::size_t step);

// ---- indexing (src/tensor/indexing.cpp) ---------------------------------------------------------------------
TensorRef gather(const TensorRef& t, std::int64_t dim, const TensorRef& indices);
TensorRef scatter(const TensorRef& t, std::int64_t dim, const TensorRef& indices, const TensorRef& values,
                  ir::IndexReduce reduce);
TensorRef select(const TensorRef& t, std::int64_t dim, const TensorRef& indices);
TensorRef select_assign(const TensorRef& t, std::int64_t dim, const TensorRef& indices, const TensorRef& values,
                        ir::IndexReduce reduce);
TensorRef mask_where(const TensorRef& t, const TensorRef& mask, const TensorRef& source);
TensorRef mask_fill(const TensorRef& t, const TensorRef& mask, Scalar value);
/// Consuming form: the result may take t's storage when nothing else holds it.
TensorRef mask_fill(TensorRef&& t, const TensorRef& mask, Scalar value);
/// [n, rank] int indices of the true (non-zero) elements, row-major order.
TensorRef argwhere(const TensorRef& t);
/// One 1-D int tensor per dim.
std::vector<TensorRef> nonzero(const TensorRef& t);

// ---- composite marks (src/tensor/composite.cpp) --------------------------------------------------------
/// Composite operations written from primitives that a format may have as
/// one operator (ONNX's Softmax, LayerNormalization, Gemm, BatchNormalization).
enum class Composite : std::uint8_t {
  Softmax,     ///< inputs: x; dim
  LogSoftmax,  ///< inputs: x; dim
  LayerNorm,   ///< inputs: x, gamma, beta; normalises the last dim; epsilon
  Linear,      ///< inputs: x (2-D), weight [d_in, d_out], optional bias
  BatchNorm,   ///< evaluation: inputs x, gamma, beta, running mean, running var; epsilon
};
/// Tells a recording device (capture) that `out` is `kind` of `inputs`, so an
/// export can write one operator instead of the primitives that computed it.
/// Does nothing on every other device.
void mark_composite(const TensorRef& out, Composite kind, std::initializer_list<TensorRef> inputs, std::int64_t dim = 0,
                    double epsilon = 0.0);

}  // namespace burn::detail
