// Tensor<D, K>: the typed, rank-checked, backend-free tensor API.
//
//   auto device = burn::Device::flex();
//   auto a = burn::Tensor<2>::ones({2, 3}, device);
//   auto b = (a * 2.0f + 1.0f).exp().sum_dim(1);     // shape [2, 1]
//   auto i = burn::Tensor<2, burn::Int>::from_ints({{1, 2}, {3, 4}}, device);
//
// The template only checks ranks and kinds at compile time and forwards to
// the non-generic functions of <burn/detail/ops.hpp>; copying a tensor is O(1)
// (storage is shared; operations never modify their inputs).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <burn/autodiff.hpp>
#include <burn/detail/ops.hpp>
#include <burn/kind.hpp>

namespace burn {

namespace detail {
/// Nested initializer lists of depth D: {{1, 2}, {3, 4}} for D = 2.
template <class T, std::size_t D>
struct nested_list {
  using type = std::initializer_list<typename nested_list<T, D - 1>::type>;
};
template <class T>
struct nested_list<T, 1> {
  using type = std::initializer_list<T>;
};
template <class T, std::size_t D>
void flatten_nested(const typename nested_list<T, D>::type& list, std::size_t depth, std::vector<std::size_t>& shape,
                    std::vector<T>& out) {
  if (depth == shape.size()) shape.push_back(list.size());
  else if (shape[depth] != list.size()) throw Error("from_data", "nested initializer lists are ragged");
  if constexpr (D == 1) {
    out.insert(out.end(), list.begin(), list.end());
  } else {
    for (const auto& inner : list) flatten_nested<T, D - 1>(inner, depth + 1, shape, out);
  }
}
template <class T, std::size_t D>
TensorData nested_to_data(const typename nested_list<T, D>::type& list) {
  std::vector<std::size_t> shape;
  std::vector<T> values;
  flatten_nested<T, D>(list, 0, shape, values);
  while (shape.size() < D) shape.push_back(0);  // an empty outer list
  return TensorData(values, Shape(shape));
}
void check_rank(const TensorRef& t, std::size_t rank, std::string_view what);
void check_kind(const TensorRef& t, TensorKind kind, std::string_view what);
/// Throws "[cast] ..." when `dtype` is not of `kind`.
void check_cast_kind(DType dtype, TensorKind kind);
template <class T>
std::vector<TensorRef> refs_of(std::span<const T> tensors, const char* op) {
  std::vector<TensorRef> refs;
  refs.reserve(tensors.size());
  for (const auto& t : tensors) refs.push_back(t.ref(op));
  return refs;
}
}  // namespace detail

template <std::size_t D, class K = Float>
class Tensor {
  static_assert(D >= 1, "a tensor has at least one dimension");
  static constexpr bool is_float_kind = std::is_same_v<K, Float>;
  static constexpr bool is_int_kind = std::is_same_v<K, Int>;
  static constexpr bool is_bool_kind = std::is_same_v<K, Bool>;
  static constexpr bool is_numeric = is_float_kind || is_int_kind;

 public:
  static constexpr std::size_t rank = D;
  using kind = K;

  /// Wraps a handle; throws burn::Error if its rank or kind do not match.
  explicit Tensor(detail::TensorRef ref) : ref_(std::move(ref)) {
    detail::check_rank(ref_, D, "Tensor");
    detail::check_kind(ref_, kind_of<K>(), "Tensor");
  }

  // ---- creation ------------------------------------------------------------------------------------
  static Tensor zeros(const Shape& shape, const TensorCreationOptions& o) { return full(shape, 0, o); }
  static Tensor ones(const Shape& shape, const TensorCreationOptions& o) { return full(shape, 1, o); }
  static Tensor full(const Shape& shape, Scalar value, const TensorCreationOptions& o) {
    return Tensor(detail::full(shape, value, o, kind_of<K>()));
  }
  /// Uninitialised in spirit; burn fills it with zeros so results are reproducible.
  static Tensor empty(const Shape& shape, const TensorCreationOptions& o) { return zeros(shape, o); }
  static Tensor zeros_like(const Tensor& t) { return like(t, 0, "zeros_like"); }
  static Tensor ones_like(const Tensor& t) { return like(t, 1, "ones_like"); }
  static Tensor full_like(const Tensor& t, Scalar v) { return like(t, v, "full_like"); }
  /// [start, end) with step 1 (1-D).
  static Tensor arange(std::int64_t start, std::int64_t end,
                       const TensorCreationOptions& o) requires(D == 1 && is_numeric) {
    return Tensor(detail::arange(start, end, 1, o, kind_of<K>()));
  }
  static Tensor arange_step(std::int64_t start, std::int64_t end, std::int64_t step,
                            const TensorCreationOptions& o) requires(D == 1 && is_numeric) {
    return Tensor(detail::arange(start, end, step, o, kind_of<K>()));
  }
  /// `steps` evenly spaced values from start to end inclusive.
  static Tensor linspace(double start, double end, std::size_t steps,
                         const TensorCreationOptions& o) requires(D == 1 && is_float_kind) {
    return Tensor(detail::linspace(start, end, steps, o));
  }
  /// The n x n identity matrix.
  static Tensor eye(std::size_t n, const TensorCreationOptions& o) requires(D == 2 && is_numeric) {
    return Tensor(detail::eye(n, o, kind_of<K>()));
  }
  /// Random values; seeded by Device::seed, reproducible for one seed.
  static Tensor random(const Shape& shape, const Distribution& dist, const TensorCreationOptions& o) {
    return Tensor(detail::random(shape, dist, o, kind_of<K>()));
  }
  /// A tensor of the data's values. Data handed over (an rvalue) is moved
  /// in; data the caller keeps is copied once, into the tensor's storage.
  static Tensor from_data(TensorData&& data, const TensorCreationOptions& o) {
    return Tensor(detail::from_data(std::move(data), o, kind_of<K>()));
  }
  static Tensor from_data(const TensorData& data, const TensorCreationOptions& o) {
    return Tensor(detail::copy_from_data(data, o, kind_of<K>()));
  }
  static Tensor from_floats(typename detail::nested_list<double, D>::type values,
                            const TensorCreationOptions& o) requires is_float_kind {
    return from_data(detail::nested_to_data<double, D>(values), o);
  }
  static Tensor from_ints(typename detail::nested_list<std::int64_t, D>::type values,
                          const TensorCreationOptions& o) requires is_int_kind {
    return from_data(detail::nested_to_data<std::int64_t, D>(values), o);
  }
  static Tensor from_bools(typename detail::nested_list<bool, D>::type values,
                           const TensorCreationOptions& o) requires is_bool_kind {
    return from_data(detail::nested_to_data<bool, D>(values), o);
  }

  // ---- properties ---------------------------------------------------------------------------------
  // The accessors throw burn::Error on a moved-from tensor (it has no handle).
  const Shape& shape() const { return live()->spec.shape; }
  std::array<std::size_t, D> dims() const {
    const Shape& s = live()->spec.shape;
    std::array<std::size_t, D> d{};
    for (std::size_t i = 0; i < D; ++i) d[i] = s.dims()[i];
    return d;
  }
  std::size_t num_elements() const { return live()->spec.shape.num_elements(); }
  DType dtype() const { return live()->spec.dtype; }
  const Device& device() const { return live()->device; }
  /// The handle; `op` names the operation in the error for a moved-from
  /// tensor (by default the calling function: conv2d, linear, ...).
  const detail::TensorRef& ref(const char* op = __builtin_FUNCTION()) const { return live(op); }

  TensorData to_data() const { return detail::to_data(live()); }
  TensorData into_data() const { return to_data(); }
  /// The single element as T; throws unless the tensor has one element.
  template <class T>
  T into_scalar() const {
    TensorData d = to_data();
    if (d.num_elements() != 1)
      throw Error("into_scalar", "tensor of shape " + shape().to_string() + " does not hold exactly one element");
    return d.convert<T>().template to_vec<T>()[0];
  }

  Tensor to_device(const Device& device) const { return Tensor(detail::to_device(live(), device)); }
  /// Converts to another dtype of the same kind (use to_int()/to_float()/to_bool() to change kind).
  Tensor cast(DType dtype) const {
    detail::check_cast_kind(dtype, kind_of<K>());
    return Tensor(detail::cast(live(), dtype));
  }
  Tensor cast(FloatDType dtype) const requires is_float_kind { return cast(to_dtype(dtype)); }
  Tensor cast(IntDType dtype) const requires is_int_kind { return cast(to_dtype(dtype)); }
  Tensor<D, Float> to_float() const { return Tensor<D, Float>(detail::to_kind(live(), TensorKind::Float)); }
  Tensor<D, Int> to_int() const { return Tensor<D, Int>(detail::to_kind(live(), TensorKind::Int)); }
  Tensor<D, Bool> to_bool() const { return Tensor<D, Bool>(detail::to_kind(live(), TensorKind::Bool)); }

  // ---- autodiff context ----------------------------------------------------------------------------------
  bool is_autodiff() const { return live()->device.is_autodiff(); }
#if BURN_HAS_AUTODIFF
  Tensor autodiff() const { return Tensor(detail::with_context(live(), device().autodiff())); }
#endif
  Tensor without_autodiff() const { return Tensor(detail::with_context(live(), device().without_autodiff())); }

  // ---- gradients (float tensors on an autodiff device) -----------------------------------------------
  /// Marks this tensor as a leaf whose gradient backward() collects.
  Tensor require_grad() const requires is_float_kind { return Tensor(detail::require_grad(live(), true)); }
  Tensor set_require_grad(bool require) const requires is_float_kind {
    return Tensor(detail::require_grad(live(), require));
  }
  bool is_require_grad() const { return detail::is_require_grad(live()); }
  /// The same values without any autodiff graph.
  Tensor detach() const { return Tensor(detail::detach(live())); }
  /// Backward pass from this tensor; a non-scalar output is seeded with ones.
  Gradients backward() const requires is_float_kind { return detail::backward(live()); }
  /// This leaf's gradient in `grads` (nullopt if none reached it).
  std::optional<Tensor> grad(const Gradients& grads) const requires is_float_kind {
    auto g = detail::grad(live(), grads);
    return g ? std::optional<Tensor>(Tensor(*g)) : std::nullopt;
  }
  /// Removes and returns this leaf's gradient.
  std::optional<Tensor> grad_remove(Gradients& grads) const requires is_float_kind {
    auto g = detail::grad_remove(live(), grads);
    return g ? std::optional<Tensor>(Tensor(*g)) : std::nullopt;
  }

  // ---- arithmetic ------------------------------------------------------------------------------------------
  Tensor add(const Tensor& o) const& requires is_numeric { return bin(ir::BinaryOp::Add, o); }
  Tensor add(const Tensor& o) && requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Add, take(), o.live()));
  }
  Tensor sub(const Tensor& o) const& requires is_numeric { return bin(ir::BinaryOp::Sub, o); }
  Tensor sub(const Tensor& o) && requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Sub, take(), o.live()));
  }
  Tensor mul(const Tensor& o) const& requires is_numeric { return bin(ir::BinaryOp::Mul, o); }
  Tensor mul(const Tensor& o) && requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Mul, take(), o.live()));
  }
  Tensor div(const Tensor& o) const& requires is_numeric { return bin(ir::BinaryOp::Div, o); }
  Tensor div(const Tensor& o) && requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Div, take(), o.live()));
  }
  /// Remainder with the divisor's sign (Python's %, torch.remainder).
  Tensor remainder(const Tensor& o) const requires is_numeric { return bin(ir::BinaryOp::Rem, o); }
  Tensor add(Scalar s) const& requires is_numeric { return bin(ir::BinaryOp::Add, s); }
  Tensor add(Scalar s) && requires is_numeric { return Tensor(detail::binary_scalar(ir::BinaryOp::Add, take(), s)); }
  Tensor sub(Scalar s) const& requires is_numeric { return bin(ir::BinaryOp::Sub, s); }
  Tensor sub(Scalar s) && requires is_numeric { return Tensor(detail::binary_scalar(ir::BinaryOp::Sub, take(), s)); }
  Tensor mul(Scalar s) const& requires is_numeric { return bin(ir::BinaryOp::Mul, s); }
  Tensor mul(Scalar s) && requires is_numeric { return Tensor(detail::binary_scalar(ir::BinaryOp::Mul, take(), s)); }
  Tensor div(Scalar s) const& requires is_numeric { return bin(ir::BinaryOp::Div, s); }
  Tensor div(Scalar s) && requires is_numeric { return Tensor(detail::binary_scalar(ir::BinaryOp::Div, take(), s)); }
  Tensor remainder(Scalar s) const requires is_numeric { return bin(ir::BinaryOp::Rem, s); }
  Tensor add_scalar(Scalar s) const requires is_numeric { return add(s); }
  Tensor sub_scalar(Scalar s) const requires is_numeric { return sub(s); }
  Tensor mul_scalar(Scalar s) const requires is_numeric { return mul(s); }
  Tensor div_scalar(Scalar s) const requires is_numeric { return div(s); }
  Tensor remainder_scalar(Scalar s) const requires is_numeric { return remainder(s); }
  Tensor powf(const Tensor& o) const requires is_float_kind { return bin(ir::BinaryOp::Pow, o); }
  Tensor powf_scalar(Scalar s) const requires is_float_kind { return bin(ir::BinaryOp::Pow, s); }
  /// Float base, int exponent tensor (converted to the base's dtype).
  Tensor powi(const Tensor<D, Int>& o) const requires is_float_kind {
    return bin(ir::BinaryOp::Pow, Tensor(detail::cast(o.ref(), dtype())));
  }
  Tensor powi(const Tensor& o) const requires is_int_kind { return bin(ir::BinaryOp::Pow, o); }
  Tensor powi_scalar(std::int64_t s) const requires is_numeric { return bin(ir::BinaryOp::Pow, Scalar(s)); }
  Tensor neg() const& requires is_numeric { return un(ir::UnaryOp::Neg); }
  Tensor neg() && requires is_numeric { return Tensor(detail::unary(ir::UnaryOp::Neg, take())); }
  Tensor recip() const& requires is_float_kind { return un(ir::UnaryOp::Recip); }
  Tensor recip() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Recip, take())); }
  Tensor abs() const& requires is_numeric { return un(ir::UnaryOp::Abs); }
  Tensor abs() && requires is_numeric { return Tensor(detail::unary(ir::UnaryOp::Abs, take())); }
  Tensor sign() const& requires is_numeric { return un(ir::UnaryOp::Sign); }
  Tensor sign() && requires is_numeric { return Tensor(detail::unary(ir::UnaryOp::Sign, take())); }
  Tensor clamp(Scalar min, Scalar max) const requires is_numeric { return Tensor(detail::clamp(live(), min, max)); }
  Tensor clamp_min(Scalar min) const requires is_numeric { return Tensor(detail::clamp(live(), min, std::nullopt)); }
  Tensor clamp_max(Scalar max) const requires is_numeric { return Tensor(detail::clamp(live(), std::nullopt, max)); }
  /// Elementwise maximum / minimum of two tensors.
  Tensor max_pair(const Tensor& o) const requires is_numeric { return bin(ir::BinaryOp::Max, o); }
  Tensor min_pair(const Tensor& o) const requires is_numeric { return bin(ir::BinaryOp::Min, o); }

  // ---- unary math (float) ------------------------------------------------------------------------------------
  Tensor exp() const& requires is_float_kind { return un(ir::UnaryOp::Exp); }
  Tensor exp() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Exp, take())); }
  Tensor log() const& requires is_float_kind { return un(ir::UnaryOp::Log); }
  Tensor log() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Log, take())); }
  Tensor log1p() const& requires is_float_kind { return un(ir::UnaryOp::Log1p); }
  Tensor log1p() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Log1p, take())); }
  Tensor expm1() const& requires is_float_kind { return un(ir::UnaryOp::Expm1); }
  Tensor expm1() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Expm1, take())); }
  Tensor sqrt() const& requires is_float_kind { return un(ir::UnaryOp::Sqrt); }
  Tensor sqrt() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Sqrt, take())); }
  Tensor rsqrt() const& requires is_float_kind { return un(ir::UnaryOp::Rsqrt); }
  Tensor rsqrt() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Rsqrt, take())); }
  Tensor sin() const& requires is_float_kind { return un(ir::UnaryOp::Sin); }
  Tensor sin() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Sin, take())); }
  Tensor cos() const& requires is_float_kind { return un(ir::UnaryOp::Cos); }
  Tensor cos() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Cos, take())); }
  Tensor tan() const& requires is_float_kind { return un(ir::UnaryOp::Tan); }
  Tensor tan() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Tan, take())); }
  Tensor asin() const& requires is_float_kind { return un(ir::UnaryOp::Asin); }
  Tensor asin() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Asin, take())); }
  Tensor acos() const& requires is_float_kind { return un(ir::UnaryOp::Acos); }
  Tensor acos() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Acos, take())); }
  Tensor atan() const& requires is_float_kind { return un(ir::UnaryOp::Atan); }
  Tensor atan() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Atan, take())); }
  Tensor sinh() const& requires is_float_kind { return un(ir::UnaryOp::Sinh); }
  Tensor sinh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Sinh, take())); }
  Tensor cosh() const& requires is_float_kind { return un(ir::UnaryOp::Cosh); }
  Tensor cosh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Cosh, take())); }
  Tensor tanh() const& requires is_float_kind { return un(ir::UnaryOp::Tanh); }
  Tensor tanh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Tanh, take())); }
  Tensor asinh() const& requires is_float_kind { return un(ir::UnaryOp::Asinh); }
  Tensor asinh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Asinh, take())); }
  Tensor acosh() const& requires is_float_kind { return un(ir::UnaryOp::Acosh); }
  Tensor acosh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Acosh, take())); }
  Tensor atanh() const& requires is_float_kind { return un(ir::UnaryOp::Atanh); }
  Tensor atanh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Atanh, take())); }
  Tensor erf() const& requires is_float_kind { return un(ir::UnaryOp::Erf); }
  Tensor erf() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Erf, take())); }
  /// Half to even.
  Tensor round() const& requires is_float_kind { return un(ir::UnaryOp::Round); }
  Tensor round() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Round, take())); }
  Tensor floor() const& requires is_float_kind { return un(ir::UnaryOp::Floor); }
  Tensor floor() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Floor, take())); }
  Tensor ceil() const& requires is_float_kind { return un(ir::UnaryOp::Ceil); }
  Tensor ceil() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Ceil, take())); }
  Tensor trunc() const& requires is_float_kind { return un(ir::UnaryOp::Trunc); }
  Tensor trunc() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Trunc, take())); }
  Tensor atan2(const Tensor& o) const requires is_float_kind { return bin(ir::BinaryOp::Atan2, o); }
  Tensor<D, Bool> is_nan() const requires is_float_kind {
    return Tensor<D, Bool>(detail::unary(ir::UnaryOp::IsNan, live()));
  }
  Tensor<D, Bool> is_inf() const requires is_float_kind {
    return Tensor<D, Bool>(detail::unary(ir::UnaryOp::IsInf, live()));
  }

  // ---- linear algebra -------------------------------------------------------------------------------------------
  /// Batched matrix product; batch dims broadcast.
  Tensor matmul(const Tensor& o) const requires is_numeric { return Tensor(detail::matmul(live(), o.live())); }
  /// Cross product of 3-vectors along `dim`.
  Tensor cross(const Tensor& o, std::int64_t dim) const requires is_numeric {
    return Tensor(detail::cross(live(), o.live(), dim));
  }

  // ---- comparisons and logic -----------------------------------------------------------------------------------------
  Tensor<D, Bool> equal(const Tensor& o) const { return cmp(ir::BinaryOp::Equal, o); }
  Tensor<D, Bool> not_equal(const Tensor& o) const { return cmp(ir::BinaryOp::NotEqual, o); }
  Tensor<D, Bool> greater(const Tensor& o) const requires is_numeric { return cmp(ir::BinaryOp::Greater, o); }
  Tensor<D, Bool> greater_equal(const Tensor& o) const requires is_numeric {
    return cmp(ir::BinaryOp::GreaterEqual, o);
  }
  Tensor<D, Bool> lower(const Tensor& o) const requires is_numeric { return cmp(ir::BinaryOp::Less, o); }
  Tensor<D, Bool> lower_equal(const Tensor& o) const requires is_numeric { return cmp(ir::BinaryOp::LessEqual, o); }
  Tensor<D, Bool> equal_elem(Scalar s) const { return cmp(ir::BinaryOp::Equal, s); }
  Tensor<D, Bool> not_equal_elem(Scalar s) const { return cmp(ir::BinaryOp::NotEqual, s); }
  Tensor<D, Bool> greater_elem(Scalar s) const requires is_numeric { return cmp(ir::BinaryOp::Greater, s); }
  Tensor<D, Bool> greater_equal_elem(Scalar s) const requires is_numeric { return cmp(ir::BinaryOp::GreaterEqual, s); }
  Tensor<D, Bool> lower_elem(Scalar s) const requires is_numeric { return cmp(ir::BinaryOp::Less, s); }
  Tensor<D, Bool> lower_equal_elem(Scalar s) const requires is_numeric { return cmp(ir::BinaryOp::LessEqual, s); }
  Tensor bool_and(const Tensor& o) const requires is_bool_kind { return bin(ir::BinaryOp::LogicalAnd, o); }
  Tensor bool_or(const Tensor& o) const requires is_bool_kind { return bin(ir::BinaryOp::LogicalOr, o); }
  Tensor bool_xor(const Tensor& o) const requires is_bool_kind { return bin(ir::BinaryOp::LogicalXor, o); }
  Tensor bool_not() const& requires is_bool_kind { return un(ir::UnaryOp::LogicalNot); }
  Tensor bool_not() && requires is_bool_kind { return Tensor(detail::unary(ir::UnaryOp::LogicalNot, take())); }
  /// Whether any / every element is true (non-zero); shape [1].
  Tensor<1, Bool> any() const { return Tensor<1, Bool>(detail::reduce_all(ir::ReduceOp::Any, live())); }
  Tensor<1, Bool> all() const { return Tensor<1, Bool>(detail::reduce_all(ir::ReduceOp::All, live())); }
  Tensor<D, Bool> any_dim(std::int64_t dim) const {
    return Tensor<D, Bool>(detail::reduce_dim(ir::ReduceOp::Any, live(), dim));
  }
  Tensor<D, Bool> all_dim(std::int64_t dim) const {
    return Tensor<D, Bool>(detail::reduce_dim(ir::ReduceOp::All, live(), dim));
  }

  // ---- bitwise (int) -------------------------------------------------------------------------------------------------
  Tensor bitwise_and(const Tensor& o) const requires is_int_kind { return bin(ir::BinaryOp::BitAnd, o); }
  Tensor bitwise_or(const Tensor& o) const requires is_int_kind { return bin(ir::BinaryOp::BitOr, o); }
  Tensor bitwise_xor(const Tensor& o) const requires is_int_kind { return bin(ir::BinaryOp::BitXor, o); }
  Tensor bitwise_left_shift(const Tensor& o) const requires is_int_kind { return bin(ir::BinaryOp::Shl, o); }
  Tensor bitwise_right_shift(const Tensor& o) const requires is_int_kind { return bin(ir::BinaryOp::Shr, o); }
  Tensor bitwise_and_scalar(Scalar s) const requires is_int_kind { return bin(ir::BinaryOp::BitAnd, s); }
  Tensor bitwise_or_scalar(Scalar s) const requires is_int_kind { return bin(ir::BinaryOp::BitOr, s); }
  Tensor bitwise_xor_scalar(Scalar s) const requires is_int_kind { return bin(ir::BinaryOp::BitXor, s); }
  Tensor bitwise_left_shift_scalar(Scalar s) const requires is_int_kind { return bin(ir::BinaryOp::Shl, s); }
  Tensor bitwise_right_shift_scalar(Scalar s) const requires is_int_kind { return bin(ir::BinaryOp::Shr, s); }
  Tensor bitwise_not() const& requires is_int_kind { return un(ir::UnaryOp::BitNot); }
  Tensor bitwise_not() && requires is_int_kind { return Tensor(detail::unary(ir::UnaryOp::BitNot, take())); }

  // ---- reductions -----------------------------------------------------------------------------------------------------
  Tensor<1, K> sum() const requires is_numeric { return all_(ir::ReduceOp::Sum); }
  Tensor<1, K> prod() const requires is_numeric { return all_(ir::ReduceOp::Prod); }
  Tensor<1, K> mean() const requires is_numeric { return all_(ir::ReduceOp::Mean); }
  Tensor<1, K> max() const requires is_numeric { return all_(ir::ReduceOp::Max); }
  Tensor<1, K> min() const requires is_numeric { return all_(ir::ReduceOp::Min); }
  Tensor sum_dim(std::int64_t dim) const requires is_numeric { return red(ir::ReduceOp::Sum, dim); }
  Tensor prod_dim(std::int64_t dim) const requires is_numeric { return red(ir::ReduceOp::Prod, dim); }
  Tensor mean_dim(std::int64_t dim) const requires is_numeric { return red(ir::ReduceOp::Mean, dim); }
  Tensor max_dim(std::int64_t dim) const requires is_numeric { return red(ir::ReduceOp::Max, dim); }
  Tensor min_dim(std::int64_t dim) const requires is_numeric { return red(ir::ReduceOp::Min, dim); }
  Tensor<D, Int> argmax(std::int64_t dim) const requires is_numeric {
    return Tensor<D, Int>(detail::reduce_dim(ir::ReduceOp::ArgMax, live(), dim));
  }
  Tensor<D, Int> argmin(std::int64_t dim) const requires is_numeric {
    return Tensor<D, Int>(detail::reduce_dim(ir::ReduceOp::ArgMin, live(), dim));
  }
  /// Unbiased variance along dim (divides by n - 1).
  Tensor var(std::int64_t dim) const requires is_float_kind { return Tensor(detail::var_dim(live(), dim, 1)); }
  /// Biased variance along dim (divides by n).
  Tensor var_bias(std::int64_t dim) const requires is_float_kind { return Tensor(detail::var_dim(live(), dim, 0)); }
  std::pair<Tensor, Tensor> var_mean(std::int64_t dim) const requires is_float_kind {
    auto [v, m] = detail::var_mean_dim(live(), dim, 1);
    return {Tensor(v), Tensor(m)};
  }
  std::pair<Tensor, Tensor> var_mean_bias(std::int64_t dim) const requires is_float_kind {
    auto [v, m] = detail::var_mean_dim(live(), dim, 0);
    return {Tensor(v), Tensor(m)};
  }
  /// {max values, their indices} along dim (first occurrence on ties).
  std::pair<Tensor, Tensor<D, Int>> max_dim_with_indices(std::int64_t dim) const requires is_numeric {
    auto [v, i] = detail::max_min_dim_with_indices(live(), dim, true);
    return {Tensor(v), Tensor<D, Int>(i)};
  }
  std::pair<Tensor, Tensor<D, Int>> min_dim_with_indices(std::int64_t dim) const requires is_numeric {
    auto [v, i] = detail::max_min_dim_with_indices(live(), dim, false);
    return {Tensor(v), Tensor<D, Int>(i)};
  }

  // ---- cumulative, sort -------------------------------------------------------------------------------------------------
  Tensor cumsum(std::int64_t dim) const requires is_numeric { return cum(ir::CumulativeOp::Sum, dim); }
  Tensor cumprod(std::int64_t dim) const requires is_numeric { return cum(ir::CumulativeOp::Prod, dim); }
  Tensor cummax(std::int64_t dim) const requires is_numeric { return cum(ir::CumulativeOp::Max, dim); }
  Tensor cummin(std::int64_t dim) const requires is_numeric { return cum(ir::CumulativeOp::Min, dim); }
  /// Stable ascending sort along dim.
  Tensor sort(std::int64_t dim) const requires is_numeric { return Tensor(detail::sort(live(), dim, false).first); }
  Tensor sort_descending(std::int64_t dim) const requires is_numeric {
    return Tensor(detail::sort(live(), dim, true).first);
  }
  std::pair<Tensor, Tensor<D, Int>> sort_with_indices(std::int64_t dim) const requires is_numeric {
    auto [v, i] = detail::sort(live(), dim, false);
    return {Tensor(v), Tensor<D, Int>(i)};
  }
  std::pair<Tensor, Tensor<D, Int>> sort_descending_with_indices(std::int64_t dim) const requires is_numeric {
    auto [v, i] = detail::sort(live(), dim, true);
    return {Tensor(v), Tensor<D, Int>(i)};
  }
  Tensor<D, Int> argsort(std::int64_t dim) const requires is_numeric {
    return Tensor<D, Int>(detail::sort(live(), dim, false).second);
  }
  Tensor<D, Int> argsort_descending(std::int64_t dim) const requires is_numeric {
    return Tensor<D, Int>(detail::sort(live(), dim, true).second);
  }
  /// The k largest values along dim, in descending order.
  Tensor topk(std::size_t k, std::int64_t dim) const requires is_numeric {
    return Tensor(detail::topk(live(), k, dim, true).first);
  }
  std::pair<Tensor, Tensor<D, Int>> topk_with_indices(std::size_t k, std::int64_t dim) const requires is_numeric {
    auto [v, i] = detail::topk(live(), k, dim, true);
    return {Tensor(v), Tensor<D, Int>(i)};
  }

  // ---- layout ---------------------------------------------------------------------------------------------------------------
  /// `t.reshape({2, -1})`: one -1 is inferred; 0 keeps the input's size.
  template <std::size_t D2>
  Tensor<D2, K> reshape(const std::int64_t (&dims)[D2]) const {
    return Tensor<D2, K>(detail::reshape(live(), std::span<const std::int64_t>(dims, D2)));
  }
  /// Reshape to exact sizes (no -1; 0 is an empty dim).
  template <std::size_t D2>
  Tensor<D2, K> reshape(const std::array<std::size_t, D2>& dims) const {
    return Tensor<D2, K>(detail::reshape_exact(live(), Shape(dims)));
  }
  /// Flattens dims [start, end] into one.
  template <std::size_t D2>
  Tensor<D2, K> flatten(std::size_t start, std::size_t end) const {
    if (start > end || end >= D)
      throw Error("flatten", "dims [" + std::to_string(start) + ", " + std::to_string(end) +
                                 "] are not a valid range for a tensor of rank " + std::to_string(D));
    const Shape& in = live()->spec.shape;
    std::vector<std::size_t> d;
    for (std::size_t i = 0; i < start; ++i) d.push_back(in[i]);
    std::size_t n = 1;
    for (std::size_t i = start; i <= end; ++i) n *= in[i];
    d.push_back(n);
    for (std::size_t i = end + 1; i < D; ++i) d.push_back(in[i]);
    return Tensor<D2, K>(detail::reshape_exact(live(), Shape(d)));
  }
  /// Output dim i is input dim axes[i] (negative counts from the end).
  Tensor permute(const std::int64_t (&axes)[D]) const {
    return Tensor(detail::permute(live(), std::span<const std::int64_t>(axes, D)));
  }
  Tensor swap_dims(std::int64_t a, std::int64_t b) const { return Tensor(detail::swap_dims(live(), a, b)); }
  /// Swaps the last two dims.
  Tensor transpose() const { return swap_dims(-2, -1); }
  Tensor flip(std::initializer_list<std::int64_t> axes) const {
    return Tensor(detail::flip(live(), std::span<const std::int64_t>(axes.begin(), axes.size())));
  }
  /// Broadcasts to `shape` (-1 keeps a dim; new leading dims allowed).
  template <std::size_t D2>
  Tensor<D2, K> expand(const std::int64_t (&shape)[D2]) const {
    return Tensor<D2, K>(detail::expand(live(), std::span<const std::int64_t>(shape, D2)));
  }
  /// Adds leading dims of size 1 up to rank D2.
  template <std::size_t D2>
  Tensor<D2, K> unsqueeze() const {
    static_assert(D2 >= D, "unsqueeze cannot lower the rank");
    detail::TensorRef r = live();
    for (std::size_t i = D; i < D2; ++i) r = detail::unsqueeze_dim(r, 0);
    return Tensor<D2, K>(r);
  }
  template <std::size_t D2>
  Tensor<D2, K> unsqueeze_dim(std::int64_t dim) const {
    static_assert(D2 == D + 1, "unsqueeze_dim adds exactly one dim");
    return Tensor<D2, K>(detail::unsqueeze_dim(live(), dim));
  }
  /// Removes dim `dim`, which must have size 1.
  template <std::size_t D2>
  Tensor<D2, K> squeeze(std::int64_t dim) const {
    static_assert(D2 + 1 == D, "squeeze removes exactly one dim");
    return Tensor<D2, K>(detail::squeeze_dim(live(), dim));
  }
  /// `t.slice({{0, 2}, Range::all(), {1, -1}})`; missing trailing dims are whole.
  Tensor slice(std::initializer_list<Range> ranges) const {
    return Tensor(detail::slice(live(), std::span<const Range>(ranges.begin(), ranges.size())));
  }
  Tensor slice(std::span<const Range> ranges) const { return Tensor(detail::slice(live(), ranges)); }
  Tensor slice_assign(std::initializer_list<Range> ranges, const Tensor& values) const {
    return Tensor(detail::slice_assign(live(), std::span<const Range>(ranges.begin(), ranges.size()), values.live()));
  }
  Tensor slice_fill(std::initializer_list<Range> ranges, Scalar value) const {
    return Tensor(detail::slice_fill(live(), std::span<const Range>(ranges.begin(), ranges.size()), value));
  }
  Tensor narrow(std::int64_t dim, std::int64_t start, std::size_t length) const {
    return Tensor(detail::narrow(live(), dim, start, length));
  }
  std::vector<Tensor> chunk(std::size_t chunks, std::int64_t dim) const {
    return wrap(detail::chunk(live(), chunks, dim));
  }
  std::vector<Tensor> split(std::size_t split_size, std::int64_t dim) const {
    return wrap(detail::split(live(), split_size, dim));
  }
  std::vector<Tensor> split_with_sizes(const std::vector<std::size_t>& sizes, std::int64_t dim) const {
    return wrap(detail::split_with_sizes(live(), sizes, dim));
  }
  static Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
    return Tensor(detail::cat(detail::refs_of<Tensor>(tensors, "cat"), dim));
  }
  /// Stacks rank-D tensors along a new dim -> rank D + 1.
  template <std::size_t D2>
  static Tensor<D2, K> stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
    static_assert(D2 == D + 1, "stack adds exactly one dim");
    return Tensor<D2, K>(detail::stack(detail::refs_of<Tensor>(tensors, "stack"), dim));
  }
  Tensor repeat_dim(std::int64_t dim, std::size_t times) const {
    return Tensor(detail::repeat_dim(live(), dim, times));
  }
  Tensor repeat(const std::array<std::size_t, D>& sizes) const { return Tensor(detail::repeat(live(), sizes)); }
  /// Sliding windows of `size` with `step` along dim; a new last dim holds each window.
  template <std::size_t D2 = D + 1>
  Tensor<D2, K> unfold(std::int64_t dim, std::size_t size, std::size_t step) const {
    static_assert(D2 == D + 1, "unfold adds exactly one dim");
    return Tensor<D2, K>(detail::unfold(live(), dim, size, step));
  }

  // ---- indexing -------------------------------------------------------------------------------------------------------------
  Tensor gather(std::int64_t dim, const Tensor<D, Int>& indices) const {
    return Tensor(detail::gather(live(), dim, indices.ref()));
  }
  /// Writes values at indices along dim; Add (Burn's default) accumulates.
  Tensor scatter(std::int64_t dim, const Tensor<D, Int>& indices, const Tensor& values,
                 ir::IndexReduce reduce = ir::IndexReduce::Add) const {
    return Tensor(detail::scatter(live(), dim, indices.ref(), values.live(), reduce));
  }
  Tensor scatter_add(std::int64_t dim, const Tensor<D, Int>& indices, const Tensor& values) const {
    return scatter(dim, indices, values, ir::IndexReduce::Add);
  }
  Tensor select(std::int64_t dim, const Tensor<1, Int>& indices) const {
    return Tensor(detail::select(live(), dim, indices.ref()));
  }
  /// Adds (Burn's default) or assigns values' slices at indices along dim.
  Tensor select_assign(std::int64_t dim, const Tensor<1, Int>& indices, const Tensor& values,
                       ir::IndexReduce reduce = ir::IndexReduce::Add) const {
    return Tensor(detail::select_assign(live(), dim, indices.ref(), values.live(), reduce));
  }
  /// Where mask is true take `source`, else self (mask and source broadcast).
  Tensor mask_where(const Tensor<D, Bool>& mask, const Tensor& source) const {
    return Tensor(detail::mask_where(live(), mask.ref(), source.live()));
  }
  Tensor mask_fill(const Tensor<D, Bool>& mask, Scalar value) const& {
    return Tensor(detail::mask_fill(live(), mask.ref(), value));
  }
  /// Consuming form: the result may take this tensor's storage (relu, its backward).
  Tensor mask_fill(const Tensor<D, Bool>& mask, Scalar value) && {
    return Tensor(detail::mask_fill(take(), mask.ref(), value));
  }
  /// [n, D] indices of the non-zero elements.
  Tensor<2, Int> argwhere() const { return Tensor<2, Int>(detail::argwhere(live())); }
  /// One index tensor per dim.
  std::vector<Tensor<1, Int>> nonzero() const {
    std::vector<Tensor<1, Int>> out;
    for (auto& r : detail::nonzero(live())) out.emplace_back(r);
    return out;
  }

  // ---- operators ---------------------------------------------------------------------------------------------------------------
  friend Tensor operator+(const Tensor& a, const Tensor& b) requires is_numeric { return a.add(b); }
  friend Tensor operator-(const Tensor& a, const Tensor& b) requires is_numeric { return a.sub(b); }
  friend Tensor operator*(const Tensor& a, const Tensor& b) requires is_numeric { return a.mul(b); }
  friend Tensor operator/(const Tensor& a, const Tensor& b) requires is_numeric { return a.div(b); }
  friend Tensor operator%(const Tensor& a, const Tensor& b) requires is_numeric { return a.remainder(b); }
  friend Tensor operator+(const Tensor& a, Scalar s) requires is_numeric { return a.add(s); }
  friend Tensor operator-(const Tensor& a, Scalar s) requires is_numeric { return a.sub(s); }
  friend Tensor operator*(const Tensor& a, Scalar s) requires is_numeric { return a.mul(s); }
  friend Tensor operator/(const Tensor& a, Scalar s) requires is_numeric { return a.div(s); }
  friend Tensor operator%(const Tensor& a, Scalar s) requires is_numeric { return a.remainder(s); }
  friend Tensor operator+(Scalar s, const Tensor& a) requires is_numeric { return a.add(s); }
  friend Tensor operator*(Scalar s, const Tensor& a) requires is_numeric { return a.mul(s); }
  friend Tensor operator-(Scalar s, const Tensor& a) requires is_numeric {
    return Tensor(detail::scalar_binary(ir::BinaryOp::Sub, s, a.live("sub")));
  }
  friend Tensor operator/(Scalar s, const Tensor& a) requires is_numeric {
    return Tensor(detail::scalar_binary(ir::BinaryOp::Div, s, a.live("div")));
  }
  friend Tensor operator-(const Tensor& a) requires is_numeric { return a.neg(); }
  // Temporaries are consumed: `(x * 2.0f + 1.0f).exp()` computes in the
  // temporaries' storage instead of allocating a buffer per step, and
  // `a = std::move(a) + b` updates a in place. Using a moved-from tensor
  // again (before assigning it a new value) throws burn::Error.
  friend Tensor operator+(Tensor&& a, const Tensor& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Add, a.take("add"), b.live("add")));
  }
  friend Tensor operator+(const Tensor& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Add, a.live("add"), b.take("add")));
  }
  friend Tensor operator+(Tensor&& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Add, a.take("add"), b.take("add")));
  }
  friend Tensor operator+(Tensor&& a, Scalar s) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Add, a.take("add"), s));
  }
  friend Tensor operator-(Tensor&& a, const Tensor& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Sub, a.take("sub"), b.live("sub")));
  }
  friend Tensor operator-(const Tensor& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Sub, a.live("sub"), b.take("sub")));
  }
  friend Tensor operator-(Tensor&& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Sub, a.take("sub"), b.take("sub")));
  }
  friend Tensor operator-(Tensor&& a, Scalar s) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Sub, a.take("sub"), s));
  }
  friend Tensor operator*(Tensor&& a, const Tensor& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Mul, a.take("mul"), b.live("mul")));
  }
  friend Tensor operator*(const Tensor& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Mul, a.live("mul"), b.take("mul")));
  }
  friend Tensor operator*(Tensor&& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Mul, a.take("mul"), b.take("mul")));
  }
  friend Tensor operator*(Tensor&& a, Scalar s) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Mul, a.take("mul"), s));
  }
  friend Tensor operator/(Tensor&& a, const Tensor& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Div, a.take("div"), b.live("div")));
  }
  friend Tensor operator/(const Tensor& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Div, a.live("div"), b.take("div")));
  }
  friend Tensor operator/(Tensor&& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Div, a.take("div"), b.take("div")));
  }
  friend Tensor operator/(Tensor&& a, Scalar s) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Div, a.take("div"), s));
  }
  friend Tensor operator+(Scalar s, Tensor&& a) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Add, a.take("add"), s));
  }
  friend Tensor operator*(Scalar s, Tensor&& a) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Mul, a.take("mul"), s));
  }
  friend Tensor operator-(Tensor&& a) requires is_numeric { return std::move(a).neg(); }

  friend std::ostream& operator<<(std::ostream& os, const Tensor& t) {
    return os << "Tensor<" << D << "> on " << t.device() << ": " << t.to_data().to_string();
  }

 private:
  // Every use of the handle goes through live() or take(): a moved-from
  // tensor holds none, and one null test here covers every op and accessor.
  // `op` defaults to the calling member's name ("add", "shape", ...); it is
  // only read when the test fails, so the success path builds no string.
  const detail::TensorRef& live(const char* op = __builtin_FUNCTION()) const {
    if (!ref_) [[unlikely]]
      detail::throw_moved_from(op);
    return ref_;
  }
  /// The handle for a consuming op; the tensor is moved-from afterwards.
  detail::TensorRef&& take(const char* op = __builtin_FUNCTION()) {
    if (!ref_) [[unlikely]]
      detail::throw_moved_from(op);
    return std::move(ref_);
  }
  static Tensor like(const Tensor& t, Scalar value, const char* op) {
    const detail::TensorRef& r = t.live(op);
    return full(r->spec.shape, value, {r->device, r->spec.dtype});
  }
  // The helpers below take their caller's name for the same reason.
  Tensor bin(ir::BinaryOp op, const Tensor& o, const char* name = __builtin_FUNCTION()) const {
    return Tensor(detail::binary(op, live(name), o.live(name)));
  }
  Tensor bin(ir::BinaryOp op, Scalar s, const char* name = __builtin_FUNCTION()) const {
    return Tensor(detail::binary_scalar(op, live(name), s));
  }
  Tensor<D, Bool> cmp(ir::BinaryOp op, const Tensor& o, const char* name = __builtin_FUNCTION()) const {
    return Tensor<D, Bool>(detail::binary(op, live(name), o.live(name)));
  }
  Tensor<D, Bool> cmp(ir::BinaryOp op, Scalar s, const char* name = __builtin_FUNCTION()) const {
    return Tensor<D, Bool>(detail::binary_scalar(op, live(name), s));
  }
  Tensor un(ir::UnaryOp op, const char* name = __builtin_FUNCTION()) const {
    return Tensor(detail::unary(op, live(name)));
  }
  Tensor red(ir::ReduceOp op, std::int64_t dim, const char* name = __builtin_FUNCTION()) const {
    return Tensor(detail::reduce_dim(op, live(name), dim));
  }
  Tensor<1, K> all_(ir::ReduceOp op, const char* name = __builtin_FUNCTION()) const {
    return Tensor<1, K>(detail::reduce_all(op, live(name)));
  }
  Tensor cum(ir::CumulativeOp op, std::int64_t dim, const char* name = __builtin_FUNCTION()) const {
    return Tensor(detail::cumulative(op, live(name), dim));
  }
  static std::vector<Tensor> wrap(std::vector<detail::TensorRef> refs) {
    std::vector<Tensor> out;
    out.reserve(refs.size());
    for (auto& r : refs) out.emplace_back(std::move(r));
    return out;
  }

  detail::TensorRef ref_;
};

/// PyTorch's where: `condition ? a : b` elementwise.
template <std::size_t D, class K>
Tensor<D, K> where(const Tensor<D, Bool>& condition, const Tensor<D, K>& a, const Tensor<D, K>& b) {
  return b.mask_where(condition, a);
}

}  // namespace burn
