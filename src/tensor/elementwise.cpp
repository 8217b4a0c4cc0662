// Elementwise ops, clamp, matmul and the cross product.
#include <array>

#include <burn/detail/ops.hpp>

#include "tensor/normalize.hpp"

namespace burn::detail {

TensorRef unary(ir::UnaryOp op, const TensorRef& t) { return execute1(ir::Unary{op}, {t}); }

TensorRef binary(ir::BinaryOp op, const TensorRef& a, const TensorRef& b) {
  return execute1(ir::Binary{op, std::nullopt}, {a, b});
}

TensorRef binary_scalar(ir::BinaryOp op, const TensorRef& a, Scalar b) { return execute1(ir::Binary{op, b}, {a}); }

// The consuming forms hand dispatch a span over locals that own the
// operands, so a moved-in handle is the only one left. The borrowed operand
// is copied first: if both name the same tensor, the copy keeps it shared.
TensorRef unary(ir::UnaryOp op, TensorRef&& t) {
  const TensorRef owned = std::move(t);
  return execute1(ir::Unary{op}, std::span<const TensorRef>(&owned, 1));
}

TensorRef binary(ir::BinaryOp op, TensorRef&& a, const TensorRef& b) {
  TensorRef rhs = b;
  const std::array<TensorRef, 2> owned{std::move(a), std::move(rhs)};
  return execute1(ir::Binary{op, std::nullopt}, owned);
}

TensorRef binary(ir::BinaryOp op, const TensorRef& a, TensorRef&& b) {
  TensorRef lhs = a;
  const std::array<TensorRef, 2> owned{std::move(lhs), std::move(b)};
  return execute1(ir::Binary{op, std::nullopt}, owned);
}

TensorRef binary(ir::BinaryOp op, TensorRef&& a, TensorRef&& b) {
  const std::array<TensorRef, 2> owned{std::move(a), std::move(b)};
  return execute1(ir::Binary{op, std::nullopt}, owned);
}

TensorRef binary_scalar(ir::BinaryOp op, TensorRef&& a, Scalar b) {
  const TensorRef owned = std::move(a);
  return execute1(ir::Binary{op, b}, std::span<const TensorRef>(&owned, 1));
}

TensorRef scalar_binary(ir::BinaryOp op, Scalar a, const TensorRef& t) {
  // The IR only has `tensor op scalar`; a broadcastable constant on the left
  // keeps the op's own semantics (int division, remainder sign, pow rules).
  return binary(op, scalar_like(t, a), t);
}

TensorRef clamp(const TensorRef& t, std::optional<Scalar> min, std::optional<Scalar> max) {
  return execute1(ir::Clamp{min, max}, {t});
}

TensorRef matmul(const TensorRef& a, const TensorRef& b) { return execute1(ir::Matmul{}, {a, b}); }

TensorRef cross(const TensorRef& a, const TensorRef& b, std::int64_t dim) {
  if (rank_of(a) != rank_of(b))
    throw Error("cross", fmt::format("ranks {} and {} differ (shapes {} and {})", rank_of(a), rank_of(b),
                                     shape_of(a).to_string(), shape_of(b).to_string()));
  const std::size_t d = normalize_dim("cross", dim, rank_of(a));
  if (shape_of(a)[d] != 3 || shape_of(b)[d] != 3)
    throw Error("cross", fmt::format("dim {} must have size 3 in both tensors, got shapes {} and {}", dim,
                                     shape_of(a).to_string(), shape_of(b).to_string()));
  const auto sd = static_cast<std::int64_t>(d);
  std::array<TensorRef, 3> x, y;
  for (std::size_t i = 0; i < 3; ++i) {
    x[i] = narrow(a, sd, static_cast<std::int64_t>(i), 1);
    y[i] = narrow(b, sd, static_cast<std::int64_t>(i), 1);
  }
  auto term = [&](std::size_t i, std::size_t j) {
    return binary(ir::BinaryOp::Sub, binary(ir::BinaryOp::Mul, x[i], y[j]), binary(ir::BinaryOp::Mul, x[j], y[i]));
  };
  const std::array<TensorRef, 3> parts{term(1, 2), term(2, 0), term(0, 1)};
  return cat(parts, sd);
}

}  // namespace burn::detail
