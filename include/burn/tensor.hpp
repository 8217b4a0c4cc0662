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
std::vector<TensorRef> refs_of(std::span<const T> tensors) {
  std::vector<TensorRef> refs;
  refs.reserve(tensors.size());
  for (const auto& t : tensors) refs.push_back(t.ref());
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
  static Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), {t.device(), t.dtype()}); }
  static Tensor ones_like(const Tensor& t) { return ones(t.shape(), {t.device(), t.dtype()}); }
  static Tensor full_like(const Tensor& t, Scalar v) { return full(t.shape(), v, {t.device(), t.dtype()}); }
  /// [start, end) with step 1 (1-D).
  static Tensor arange(std::int64_t start, std::int64_t end, const TensorCreationOptions& o)
    requires(D == 1 && is_numeric)
  {
    return Tensor(detail::arange(start, end, 1, o, kind_of<K>()));
  }
  static Tensor arange_step(std::int64_t start, std::int64_t end, std::int64_t step, const TensorCreationOptions& o)
    requires(D == 1 && is_numeric)
  {
    return Tensor(detail::arange(start, end, step, o, kind_of<K>()));
  }
  /// `steps` evenly spaced values from start to end inclusive.
  static Tensor linspace(double start, double end, std::size_t steps, const TensorCreationOptions& o)
    requires(D == 1 && is_float_kind)
  {
    return Tensor(detail::linspace(start, end, steps, o));
  }
  /// The n x n identity matrix.
  static Tensor eye(std::size_t n, const TensorCreationOptions& o)
    requires(D == 2 && is_numeric)
  {
    return Tensor(detail::eye(n, o, kind_of<K>()));
  }
  /// Random values; seeded by Device::seed, reproducible for one seed.
  static Tensor random(const Shape& shape, const Distribution& dist, const TensorCreationOptions& o) {
    return Tensor(detail::random(shape, dist, o, kind_of<K>()));
  }
  static Tensor from_data(TensorData data, const TensorCreationOptions& o) {
    return Tensor(detail::from_data(std::move(data), o, kind_of<K>()));
  }
  static Tensor from_floats(typename detail::nested_list<double, D>::type values, const TensorCreationOptions& o)
    requires is_float_kind
  {
    return from_data(detail::nested_to_data<double, D>(values), o);
  }
  static Tensor from_ints(typename detail::nested_list<std::int64_t, D>::type values, const TensorCreationOptions& o)
    requires is_int_kind
  {
    return from_data(detail::nested_to_data<std::int64_t, D>(values), o);
  }
  static Tensor from_bools(typename detail::nested_list<bool, D>::type values, const TensorCreationOptions& o)
    requires is_bool_kind
  {
    return from_data(detail::nested_to_data<bool, D>(values), o);
  }

  // ---- properties ---------------------------------------------------------------------------------
  const Shape& shape() const noexcept { return ref_->spec.shape; }
  std::array<std::size_t, D> dims() const noexcept {
    std::array<std::size_t, D> d{};
    for (std::size_t i = 0; i < D; ++i) d[i] = shape().dims()[i];
    return d;
  }
  std::size_t num_elements() const noexcept { return shape().num_elements(); }
  DType dtype() const noexcept { return ref_->spec.dtype; }
  const Device& device() const noexcept { return ref_->device; }
  const detail::TensorRef& ref() const noexcept { return ref_; }

  TensorData to_data() const { return detail::to_data(ref_); }
  TensorData into_data() const { return to_data(); }
  /// The single element as T; throws unless the tensor has one element.
  template <class T>
  T into_scalar() const {
    TensorData d = to_data();
    if (d.num_elements() != 1)
      throw Error("into_scalar", "tensor of shape " + shape().to_string() + " does not hold exactly one element");
    return d.convert<T>().template to_vec<T>()[0];
  }

  Tensor to_device(const Device& device) const { return Tensor(detail::to_device(ref_, device)); }
  /// Converts to another dtype of the same kind (use to_int()/to_float()/to_bool() to change kind).
  Tensor cast(DType dtype) const {
    detail::check_cast_kind(dtype, kind_of<K>());
    return Tensor(detail::cast(ref_, dtype));
  }
  Tensor cast(FloatDType dtype) const requires is_float_kind { return cast(to_dtype(dtype)); }
  Tensor cast(IntDType dtype) const requires is_int_kind { return cast(to_dtype(dtype)); }
  Tensor<D, Float> to_float() const { return Tensor<D, Float>(detail::to_kind(ref_, TensorKind::Float)); }
  Tensor<D, Int> to_int() const { return Tensor<D, Int>(detail::to_kind(ref_, TensorKind::Int)); }
  Tensor<D, Bool> to_bool() const { return Tensor<D, Bool>(detail::to_kind(ref_, TensorKind::Bool)); }

  // ---- autodiff context ----------------------------------------------------------------------------------
  bool is_autodiff() const noexcept { return device().is_autodiff(); }
#if BURN_HAS_AUTODIFF
  Tensor autodiff() const { return Tensor(detail::with_context(ref_, device().autodiff())); }
#endif
  Tensor without_autodiff() const { return Tensor(detail::with_context(ref_, device().without_autodiff())); }

  // ---- gradients (float tensors on an autodiff device) -----------------------------------------------
  /// Marks this tensor as a leaf whose gradient backward() collects.
  Tensor require_grad() const requires is_float_kind { return Tensor(detail::require_grad(ref_, true)); }
  Tensor set_require_grad(bool require) const requires is_float_kind {
    return Tensor(detail::require_grad(ref_, require));
  }
  bool is_require_grad() const noexcept { return detail::is_require_grad(ref_); }
  /// The same values without any autodiff graph.
  Tensor detach() const { return Tensor(detail::detach(ref_)); }
  /// Backward pass from this tensor; a non-scalar output is seeded with ones.
  Gradients backward() const requires is_float_kind { return detail::backward(ref_); }
  /// This leaf's gradient in `grads` (nullopt if none reached it).
  std::optional<Tensor> grad(const Gradients& grads) const requires is_float_kind {
    auto g = detail::grad(ref_, grads);
    return g ? std::optional<Tensor>(Tensor(*g)) : std::nullopt;
  }
  /// Removes and returns this leaf's gradient.
  std::optional<Tensor> grad_remove(Gradients& grads) const requires is_float_kind {
    auto g = detail::grad_remove(ref_, grads);
    return g ? std::optional<Tensor>(Tensor(*g)) : std::nullopt;
  }

  // ---- arithmetic ------------------------------------------------------------------------------------------
  Tensor add(const Tensor& o) const& requires is_numeric { return bin(ir::BinaryOp::Add, o); }
  Tensor add(const Tensor& o) && requires is_numeric { return Tensor(detail::binary(ir::BinaryOp::Add, std::move(ref_), o.ref_)); }
  Tensor sub(const Tensor& o) const& requires is_numeric { return bin(ir::BinaryOp::Sub, o); }
  Tensor sub(const Tensor& o) && requires is_numeric { return Tensor(detail::binary(ir::BinaryOp::Sub, std::move(ref_), o.ref_)); }
  Tensor mul(const Tensor& o) const& requires is_numeric { return bin(ir::BinaryOp::Mul, o); }
  Tensor mul(const Tensor& o) && requires is_numeric { return Tensor(detail::binary(ir::BinaryOp::Mul, std::move(ref_), o.ref_)); }
  Tensor div(const Tensor& o) const& requires is_numeric { return bin(ir::BinaryOp::Div, o); }
  Tensor div(const Tensor& o) && requires is_numeric { return Tensor(detail::binary(ir::BinaryOp::Div, std::move(ref_), o.ref_)); }
  /// Remainder with the divisor's sign (Python's %, torch.remainder).
  Tensor remainder(const Tensor& o) const requires is_numeric { return bin(ir::BinaryOp::Rem, o); }
  Tensor add(Scalar s) const& requires is_numeric { return bin(ir::BinaryOp::Add, s); }
  Tensor add(Scalar s) && requires is_numeric { return Tensor(detail::binary_scalar(ir::BinaryOp::Add, std::move(ref_), s)); }
  Tensor sub(Scalar s) const& requires is_numeric { return bin(ir::BinaryOp::Sub, s); }
  Tensor sub(Scalar s) && requires is_numeric { return Tensor(detail::binary_scalar(ir::BinaryOp::Sub, std::move(ref_), s)); }
  Tensor mul(Scalar s) const& requires is_numeric { return bin(ir::BinaryOp::Mul, s); }
  Tensor mul(Scalar s) && requires is_numeric { return Tensor(detail::binary_scalar(ir::BinaryOp::Mul, std::move(ref_), s)); }
  Tensor div(Scalar s) const& requires is_numeric { return bin(ir::BinaryOp::Div, s); }
  Tensor div(Scalar s) && requires is_numeric { return Tensor(detail::binary_scalar(ir::BinaryOp::Div, std::move(ref_), s)); }
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
  Tensor neg() && requires is_numeric { return Tensor(detail::unary(ir::UnaryOp::Neg, std::move(ref_))); }
  Tensor recip() const& requires is_float_kind { return un(ir::UnaryOp::Recip); }
  Tensor recip() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Recip, std::move(ref_))); }
  Tensor abs() const& requires is_numeric { return un(ir::UnaryOp::Abs); }
  Tensor abs() && requires is_numeric { return Tensor(detail::unary(ir::UnaryOp::Abs, std::move(ref_))); }
  Tensor sign() const& requires is_numeric { return un(ir::UnaryOp::Sign); }
  Tensor sign() && requires is_numeric { return Tensor(detail::unary(ir::UnaryOp::Sign, std::move(ref_))); }
  Tensor clamp(Scalar min, Scalar max) const requires is_numeric { return Tensor(detail::clamp(ref_, min, max)); }
  Tensor clamp_min(Scalar min) const requires is_numeric { return Tensor(detail::clamp(ref_, min, std::nullopt)); }
  Tensor clamp_max(Scalar max) const requires is_numeric { return Tensor(detail::clamp(ref_, std::nullopt, max)); }
  /// Elementwise maximum / minimum of two tensors.
  Tensor max_pair(const Tensor& o) const requires is_numeric { return bin(ir::BinaryOp::Max, o); }
  Tensor min_pair(const Tensor& o) const requires is_numeric { return bin(ir::BinaryOp::Min, o); }

  // ---- unary math (float) ------------------------------------------------------------------------------------
  Tensor exp() const& requires is_float_kind { return un(ir::UnaryOp::Exp); }
  Tensor exp() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Exp, std::move(ref_))); }
  Tensor log() const& requires is_float_kind { return un(ir::UnaryOp::Log); }
  Tensor log() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Log, std::move(ref_))); }
  Tensor log1p() const& requires is_float_kind { return un(ir::UnaryOp::Log1p); }
  Tensor log1p() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Log1p, std::move(ref_))); }
  Tensor expm1() const& requires is_float_kind { return un(ir::UnaryOp::Expm1); }
  Tensor expm1() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Expm1, std::move(ref_))); }
  Tensor sqrt() const& requires is_float_kind { return un(ir::UnaryOp::Sqrt); }
  Tensor sqrt() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Sqrt, std::move(ref_))); }
  Tensor rsqrt() const& requires is_float_kind { return un(ir::UnaryOp::Rsqrt); }
  Tensor rsqrt() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Rsqrt, std::move(ref_))); }
  Tensor sin() const& requires is_float_kind { return un(ir::UnaryOp::Sin); }
  Tensor sin() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Sin, std::move(ref_))); }
  Tensor cos() const& requires is_float_kind { return un(ir::UnaryOp::Cos); }
  Tensor cos() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Cos, std::move(ref_))); }
  Tensor tan() const& requires is_float_kind { return un(ir::UnaryOp::Tan); }
  Tensor tan() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Tan, std::move(ref_))); }
  Tensor asin() const& requires is_float_kind { return un(ir::UnaryOp::Asin); }
  Tensor asin() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Asin, std::move(ref_))); }
  Tensor acos() const& requires is_float_kind { return un(ir::UnaryOp::Acos); }
  Tensor acos() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Acos, std::move(ref_))); }
  Tensor atan() const& requires is_float_kind { return un(ir::UnaryOp::Atan); }
  Tensor atan() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Atan, std::move(ref_))); }
  Tensor sinh() const& requires is_float_kind { return un(ir::UnaryOp::Sinh); }
  Tensor sinh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Sinh, std::move(ref_))); }
  Tensor cosh() const& requires is_float_kind { return un(ir::UnaryOp::Cosh); }
  Tensor cosh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Cosh, std::move(ref_))); }
  Tensor tanh() const& requires is_float_kind { return un(ir::UnaryOp::Tanh); }
  Tensor tanh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Tanh, std::move(ref_))); }
  Tensor asinh() const& requires is_float_kind { return un(ir::UnaryOp::Asinh); }
  Tensor asinh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Asinh, std::move(ref_))); }
  Tensor acosh() const& requires is_float_kind { return un(ir::UnaryOp::Acosh); }
  Tensor acosh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Acosh, std::move(ref_))); }
  Tensor atanh() const& requires is_float_kind { return un(ir::UnaryOp::Atanh); }
  Tensor atanh() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Atanh, std::move(ref_))); }
  Tensor erf() const& requires is_float_kind { return un(ir::UnaryOp::Erf); }
  Tensor erf() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Erf, std::move(ref_))); }
  /// Half to even.
  Tensor round() const& requires is_float_kind { return un(ir::UnaryOp::Round); }
  Tensor round() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Round, std::move(ref_))); }
  Tensor floor() const& requires is_float_kind { return un(ir::UnaryOp::Floor); }
  Tensor floor() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Floor, std::move(ref_))); }
  Tensor ceil() const& requires is_float_kind { return un(ir::UnaryOp::Ceil); }
  Tensor ceil() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Ceil, std::move(ref_))); }
  Tensor trunc() const& requires is_float_kind { return un(ir::UnaryOp::Trunc); }
  Tensor trunc() && requires is_float_kind { return Tensor(detail::unary(ir::UnaryOp::Trunc, std::move(ref_))); }
  Tensor atan2(const Tensor& o) const requires is_float_kind { return bin(ir::BinaryOp::Atan2, o); }
  Tensor<D, Bool> is_nan() const requires is_float_kind { return Tensor<D, Bool>(detail::unary(ir::UnaryOp::IsNan, ref_)); }
  Tensor<D, Bool> is_inf() const requires is_float_kind { return Tensor<D, Bool>(detail::unary(ir::UnaryOp::IsInf, ref_)); }

  // ---- linear algebra -------------------------------------------------------------------------------------------
  /// Batched matrix product; batch dims broadcast.
  Tensor matmul(const Tensor& o) const requires is_numeric { return Tensor(detail::matmul(ref_, o.ref_)); }
  /// Cross product of 3-vectors along `dim`.
  Tensor cross(const Tensor& o, std::int64_t dim) const requires is_numeric {
    return Tensor(detail::cross(ref_, o.ref_, dim));
  }

  // ---- comparisons and logic -----------------------------------------------------------------------------------------
  Tensor<D, Bool> equal(const Tensor& o) const { return cmp(ir::BinaryOp::Equal, o); }
  Tensor<D, Bool> not_equal(const Tensor& o) const { return cmp(ir::BinaryOp::NotEqual, o); }
  Tensor<D, Bool> greater(const Tensor& o) const requires is_numeric { return cmp(ir::BinaryOp::Greater, o); }
  Tensor<D, Bool> greater_equal(const Tensor& o) const requires is_numeric { return cmp(ir::BinaryOp::GreaterEqual, o); }
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
  Tensor bool_not() && requires is_bool_kind { return Tensor(detail::unary(ir::UnaryOp::LogicalNot, std::move(ref_))); }
  /// Whether any / every element is true (non-zero); shape [1].
  Tensor<1, Bool> any() const { return Tensor<1, Bool>(detail::reduce_all(ir::ReduceOp::Any, ref_)); }
  Tensor<1, Bool> all() const { return Tensor<1, Bool>(detail::reduce_all(ir::ReduceOp::All, ref_)); }
  Tensor<D, Bool> any_dim(std::int64_t dim) const { return Tensor<D, Bool>(detail::reduce_dim(ir::ReduceOp::Any, ref_, dim)); }
  Tensor<D, Bool> all_dim(std::int64_t dim) const { return Tensor<D, Bool>(detail::reduce_dim(ir::ReduceOp::All, ref_, dim)); }

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
  Tensor bitwise_not() && requires is_int_kind { return Tensor(detail::unary(ir::UnaryOp::BitNot, std::move(ref_))); }

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
    return Tensor<D, Int>(detail::reduce_dim(ir::ReduceOp::ArgMax, ref_, dim));
  }
  Tensor<D, Int> argmin(std::int64_t dim) const requires is_numeric {
    return Tensor<D, Int>(detail::reduce_dim(ir::ReduceOp::ArgMin, ref_, dim));
  }
  /// Unbiased variance along dim (divides by n - 1).
  Tensor var(std::int64_t dim) const requires is_float_kind { return Tensor(detail::var_dim(ref_, dim, 1)); }
  /// Biased variance along dim (divides by n).
  Tensor var_bias(std::int64_t dim) const requires is_float_kind { return Tensor(detail::var_dim(ref_, dim, 0)); }
  std::pair<Tensor, Tensor> var_mean(std::int64_t dim) const requires is_float_kind {
    auto [v, m] = detail::var_mean_dim(ref_, dim, 1);
    return {Tensor(v), Tensor(m)};
  }
  std::pair<Tensor, Tensor> var_mean_bias(std::int64_t dim) const requires is_float_kind {
    auto [v, m] = detail::var_mean_dim(ref_, dim, 0);
    return {Tensor(v), Tensor(m)};
  }
  /// {max values, their indices} along dim (first occurrence on ties).
  std::pair<Tensor, Tensor<D, Int>> max_dim_with_indices(std::int64_t dim) const requires is_numeric {
    auto [v, i] = detail::max_min_dim_with_indices(ref_, dim, true);
    return {Tensor(v), Tensor<D, Int>(i)};
  }
  std::pair<Tensor, Tensor<D, Int>> min_dim_with_indices(std::int64_t dim) const requires is_numeric {
    auto [v, i] = detail::max_min_dim_with_indices(ref_, dim, false);
    return {Tensor(v), Tensor<D, Int>(i)};
  }

  // ---- cumulative, sort -------------------------------------------------------------------------------------------------
  Tensor cumsum(std::int64_t dim) const requires is_numeric { return cum(ir::CumulativeOp::Sum, dim); }
  Tensor cumprod(std::int64_t dim) const requires is_numeric { return cum(ir::CumulativeOp::Prod, dim); }
  Tensor cummax(std::int64_t dim) const requires is_numeric { return cum(ir::CumulativeOp::Max, dim); }
  Tensor cummin(std::int64_t dim) const requires is_numeric { return cum(ir::CumulativeOp::Min, dim); }
  /// Stable ascending sort along dim.
  Tensor sort(std::int64_t dim) const requires is_numeric { return Tensor(detail::sort(ref_, dim, false).first); }
  Tensor sort_descending(std::int64_t dim) const requires is_numeric { return Tensor(detail::sort(ref_, dim, true).first); }
  std::pair<Tensor, Tensor<D, Int>> sort_with_indices(std::int64_t dim) const requires is_numeric {
    auto [v, i] = detail::sort(ref_, dim, false);
    return {Tensor(v), Tensor<D, Int>(i)};
  }
  std::pair<Tensor, Tensor<D, Int>> sort_descending_with_indices(std::int64_t dim) const requires is_numeric {
    auto [v, i] = detail::sort(ref_, dim, true);
    return {Tensor(v), Tensor<D, Int>(i)};
  }
  Tensor<D, Int> argsort(std::int64_t dim) const requires is_numeric { return Tensor<D, Int>(detail::sort(ref_, dim, false).second); }
  Tensor<D, Int> argsort_descending(std::int64_t dim) const requires is_numeric {
    return Tensor<D, Int>(detail::sort(ref_, dim, true).second);
  }
  /// The k largest values along dim, in descending order.
  Tensor topk(std::size_t k, std::int64_t dim) const requires is_numeric { return Tensor(detail::topk(ref_, k, dim, true).first); }
  std::pair<Tensor, Tensor<D, Int>> topk_with_indices(std::size_t k, std::int64_t dim) const requires is_numeric {
    auto [v, i] = detail::topk(ref_, k, dim, true);
    return {Tensor(v), Tensor<D, Int>(i)};
  }

  // ---- layout ---------------------------------------------------------------------------------------------------------------
  /// `t.reshape({2, -1})`: one -1 is inferred; 0 keeps the input's size.
  template <std::size_t D2>
  Tensor<D2, K> reshape(const std::int64_t (&dims)[D2]) const {
    return Tensor<D2, K>(detail::reshape(ref_, std::span<const std::int64_t>(dims, D2)));
  }
  /// Reshape to exact sizes (no -1; 0 is an empty dim).
  template <std::size_t D2>
  Tensor<D2, K> reshape(const std::array<std::size_t, D2>& dims) const {
    return Tensor<D2, K>(detail::reshape_exact(ref_, Shape(dims)));
  }
  /// Flattens dims [start, end] into one.
  template <std::size_t D2>
  Tensor<D2, K> flatten(std::size_t start, std::size_t end) const {
    if (start > end || end >= D)
      throw Error("flatten", "dims [" + std::to_string(start) + ", " + std::to_string(end) +
                                 "] are not a valid range for a tensor of rank " + std::to_string(D));
    std::vector<std::size_t> d;
    for (std::size_t i = 0; i < start; ++i) d.push_back(shape()[i]);
    std::size_t n = 1;
    for (std::size_t i = start; i <= end; ++i) n *= shape()[i];
    d.push_back(n);
    for (std::size_t i = end + 1; i < D; ++i) d.push_back(shape()[i]);
    return Tensor<D2, K>(detail::reshape_exact(ref_, Shape(std::move(d))));
  }
  /// Output dim i is input dim axes[i] (negative counts from the end).
  Tensor permute(const std::int64_t (&axes)[D]) const { return Tensor(detail::permute(ref_, std::span<const std::int64_t>(axes, D))); }
  Tensor swap_dims(std::int64_t a, std::int64_t b) const { return Tensor(detail::swap_dims(ref_, a, b)); }
  /// Swaps the last two dims.
  Tensor transpose() const { return swap_dims(-2, -1); }
  Tensor flip(std::initializer_list<std::int64_t> axes) const {
    return Tensor(detail::flip(ref_, std::span<const std::int64_t>(axes.begin(), axes.size())));
  }
  /// Broadcasts to `shape` (-1 keeps a dim; new leading dims allowed).
  template <std::size_t D2>
  Tensor<D2, K> expand(const std::int64_t (&shape)[D2]) const {
    return Tensor<D2, K>(detail::expand(ref_, std::span<const std::int64_t>(shape, D2)));
  }
  /// Adds leading dims of size 1 up to rank D2.
  template <std::size_t D2>
  Tensor<D2, K> unsqueeze() const {
    static_assert(D2 >= D, "unsqueeze cannot lower the rank");
    detail::TensorRef r = ref_;
    for (std::size_t i = D; i < D2; ++i) r = detail::unsqueeze_dim(r, 0);
    return Tensor<D2, K>(r);
  }
  template <std::size_t D2>
  Tensor<D2, K> unsqueeze_dim(std::int64_t dim) const {
    static_assert(D2 == D + 1, "unsqueeze_dim adds exactly one dim");
    return Tensor<D2, K>(detail::unsqueeze_dim(ref_, dim));
  }
  /// Removes dim `dim`, which must have size 1.
  template <std::size_t D2>
  Tensor<D2, K> squeeze(std::int64_t dim) const {
    static_assert(D2 + 1 == D, "squeeze removes exactly one dim");
    return Tensor<D2, K>(detail::squeeze_dim(ref_, dim));
  }
  /// `t.slice({{0, 2}, Range::all(), {1, -1}})`; missing trailing dims are whole.
  Tensor slice(std::initializer_list<Range> ranges) const {
    return Tensor(detail::slice(ref_, std::span<const Range>(ranges.begin(), ranges.size())));
  }
  Tensor slice(std::span<const Range> ranges) const { return Tensor(detail::slice(ref_, ranges)); }
  Tensor slice_assign(std::initializer_list<Range> ranges, const Tensor& values) const {
    return Tensor(detail::slice_assign(ref_, std::span<const Range>(ranges.begin(), ranges.size()), values.ref_));
  }
  Tensor slice_fill(std::initializer_list<Range> ranges, Scalar value) const {
    return Tensor(detail::slice_fill(ref_, std::span<const Range>(ranges.begin(), ranges.size()), value));
  }
  Tensor narrow(std::int64_t dim, std::int64_t start, std::size_t length) const {
    return Tensor(detail::narrow(ref_, dim, start, length));
  }
  std::vector<Tensor> chunk(std::size_t chunks, std::int64_t dim) const { return wrap(detail::chunk(ref_, chunks, dim)); }
  std::vector<Tensor> split(std::size_t split_size, std::int64_t dim) const {
    return wrap(detail::split(ref_, split_size, dim));
  }
  std::vector<Tensor> split_with_sizes(const std::vector<std::size_t>& sizes, std::int64_t dim) const {
    return wrap(detail::split_with_sizes(ref_, sizes, dim));
  }
  static Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
    return Tensor(detail::cat(detail::refs_of<Tensor>(tensors), dim));
  }
  /// Stacks rank-D tensors along a new dim -> rank D + 1.
  template <std::size_t D2>
  static Tensor<D2, K> stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
    static_assert(D2 == D + 1, "stack adds exactly one dim");
    return Tensor<D2, K>(detail::stack(detail::refs_of<Tensor>(tensors), dim));
  }
  Tensor repeat_dim(std::int64_t dim, std::size_t times) const { return Tensor(detail::repeat_dim(ref_, dim, times)); }
  Tensor repeat(const std::array<std::size_t, D>& sizes) const { return Tensor(detail::repeat(ref_, sizes)); }
  /// Sliding windows of `size` with `step` along dim; a new last dim holds each window.
  template <std::size_t D2 = D + 1>
  Tensor<D2, K> unfold(std::int64_t dim, std::size_t size, std::size_t step) const {
    static_assert(D2 == D + 1, "unfold adds exactly one dim");
    return Tensor<D2, K>(detail::unfold(ref_, dim, size, step));
  }

  // ---- indexing -------------------------------------------------------------------------------------------------------------
  Tensor gather(std::int64_t dim, const Tensor<D, Int>& indices) const { return Tensor(detail::gather(ref_, dim, indices.ref())); }
  /// Writes values at indices along dim; Add (Burn's default) accumulates.
  Tensor scatter(std::int64_t dim, const Tensor<D, Int>& indices, const Tensor& values,
                 ir::IndexReduce reduce = ir::IndexReduce::Add) const {
    return Tensor(detail::scatter(ref_, dim, indices.ref(), values.ref_, reduce));
  }
  Tensor scatter_add(std::int64_t dim, const Tensor<D, Int>& indices, const Tensor& values) const {
    return scatter(dim, indices, values, ir::IndexReduce::Add);
  }
  Tensor select(std::int64_t dim, const Tensor<1, Int>& indices) const { return Tensor(detail::select(ref_, dim, indices.ref())); }
  /// Adds (Burn's default) or assigns values' slices at indices along dim.
  Tensor select_assign(std::int64_t dim, const Tensor<1, Int>& indices, const Tensor& values,
                       ir::IndexReduce reduce = ir::IndexReduce::Add) const {
    return Tensor(detail::select_assign(ref_, dim, indices.ref(), values.ref_, reduce));
  }
  /// Where mask is true take `source`, else self (mask and source broadcast).
  Tensor mask_where(const Tensor<D, Bool>& mask, const Tensor& source) const {
    return Tensor(detail::mask_where(ref_, mask.ref(), source.ref_));
  }
  Tensor mask_fill(const Tensor<D, Bool>& mask, Scalar value) const& { return Tensor(detail::mask_fill(ref_, mask.ref(), value)); }
  /// Consuming form: the result may take this tensor's storage (relu, its backward).
  Tensor mask_fill(const Tensor<D, Bool>& mask, Scalar value) && {
    return Tensor(detail::mask_fill(std::move(ref_), mask.ref(), value));
  }
  /// [n, D] indices of the non-zero elements.
  Tensor<2, Int> argwhere() const { return Tensor<2, Int>(detail::argwhere(ref_)); }
  /// One index tensor per dim.
  std::vector<Tensor<1, Int>> nonzero() const {
    std::vector<Tensor<1, Int>> out;
    for (auto& r : detail::nonzero(ref_)) out.emplace_back(r);
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
    return Tensor(detail::scalar_binary(ir::BinaryOp::Sub, s, a.ref_));
  }
  friend Tensor operator/(Scalar s, const Tensor& a) requires is_numeric {
    return Tensor(detail::scalar_binary(ir::BinaryOp::Div, s, a.ref_));
  }
  friend Tensor operator-(const Tensor& a) requires is_numeric { return a.neg(); }
  // Temporaries are consumed: `(x * 2.0f + 1.0f).exp()` computes in the
  // temporaries' storage instead of allocating a buffer per step, and
  // `a = std::move(a) + b` updates a in place. A moved-from tensor must not
  // be used again (as any moved-from handle).
  friend Tensor operator+(Tensor&& a, const Tensor& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Add, std::move(a.ref_), b.ref_));
  }
  friend Tensor operator+(const Tensor& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Add, a.ref_, std::move(b.ref_)));
  }
  friend Tensor operator+(Tensor&& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Add, std::move(a.ref_), std::move(b.ref_)));
  }
  friend Tensor operator+(Tensor&& a, Scalar s) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Add, std::move(a.ref_), s));
  }
  friend Tensor operator-(Tensor&& a, const Tensor& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Sub, std::move(a.ref_), b.ref_));
  }
  friend Tensor operator-(const Tensor& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Sub, a.ref_, std::move(b.ref_)));
  }
  friend Tensor operator-(Tensor&& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Sub, std::move(a.ref_), std::move(b.ref_)));
  }
  friend Tensor operator-(Tensor&& a, Scalar s) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Sub, std::move(a.ref_), s));
  }
  friend Tensor operator*(Tensor&& a, const Tensor& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Mul, std::move(a.ref_), b.ref_));
  }
  friend Tensor operator*(const Tensor& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Mul, a.ref_, std::move(b.ref_)));
  }
  friend Tensor operator*(Tensor&& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Mul, std::move(a.ref_), std::move(b.ref_)));
  }
  friend Tensor operator*(Tensor&& a, Scalar s) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Mul, std::move(a.ref_), s));
  }
  friend Tensor operator/(Tensor&& a, const Tensor& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Div, std::move(a.ref_), b.ref_));
  }
  friend Tensor operator/(const Tensor& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Div, a.ref_, std::move(b.ref_)));
  }
  friend Tensor operator/(Tensor&& a, Tensor&& b) requires is_numeric {
    return Tensor(detail::binary(ir::BinaryOp::Div, std::move(a.ref_), std::move(b.ref_)));
  }
  friend Tensor operator/(Tensor&& a, Scalar s) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Div, std::move(a.ref_), s));
  }
  friend Tensor operator+(Scalar s, Tensor&& a) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Add, std::move(a.ref_), s));
  }
  friend Tensor operator*(Scalar s, Tensor&& a) requires is_numeric {
    return Tensor(detail::binary_scalar(ir::BinaryOp::Mul, std::move(a.ref_), s));
  }
  friend Tensor operator-(Tensor&& a) requires is_numeric { return std::move(a).neg(); }

  friend std::ostream& operator<<(std::ostream& os, const Tensor& t) {
    return os << "Tensor<" << D << "> on " << t.device() << ": " << t.to_data().to_string();
  }

 private:
  Tensor bin(ir::BinaryOp op, const Tensor& o) const { return Tensor(detail::binary(op, ref_, o.ref_)); }
  Tensor bin(ir::BinaryOp op, Scalar s) const { return Tensor(detail::binary_scalar(op, ref_, s)); }
  Tensor<D, Bool> cmp(ir::BinaryOp op, const Tensor& o) const { return Tensor<D, Bool>(detail::binary(op, ref_, o.ref_)); }
  Tensor<D, Bool> cmp(ir::BinaryOp op, Scalar s) const { return Tensor<D, Bool>(detail::binary_scalar(op, ref_, s)); }
  Tensor un(ir::UnaryOp op) const { return Tensor(detail::unary(op, ref_)); }
  Tensor red(ir::ReduceOp op, std::int64_t dim) const { return Tensor(detail::reduce_dim(op, ref_, dim)); }
  Tensor<1, K> all_(ir::ReduceOp op) const { return Tensor<1, K>(detail::reduce_all(op, ref_)); }
  Tensor cum(ir::CumulativeOp op, std::int64_t dim) const { return Tensor(detail::cumulative(op, ref_, dim)); }
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
