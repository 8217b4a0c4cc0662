// Elementwise ops: every UnaryOp and BinaryOp (tensor-tensor with
// broadcasting, and tensor-scalar), clamp and cast, on contiguous inputs,
// views and empty tensors. Value ranges keep each op inside its domain and
// int results inside the dtype, so the contract (not overflow) is compared.
#include "harness.hpp"

namespace burn::differential {
namespace {

using ir::BinaryOp;
using ir::UnaryOp;

struct Layout {
  Shape shape;
  View view;
};

const std::vector<Layout>& unary_layouts() {
  static const std::vector<Layout> l{{{4, 5, 6}, View::Contiguous},
                                     {{67}, View::Contiguous},
                                     {{6, 7}, View::Permuted},
                                     {{3, 4, 5}, View::Strided},
                                     {{4, 5, 6}, View::Expanded},
                                     {{5, 6}, View::Flipped},
                                     {{2, 0, 3}, View::Contiguous},
                                     {{0, 4}, View::Strided},
                                     // Large enough for flex to split the work across threads.
                                     {kLarge, View::Contiguous},
                                     {kLarge, View::Permuted}};
  return l;
}

// Operand layouts of binary ops: equal shapes, broadcasting both ways, views
// on either side, empty tensors and a length that leaves a SIMD tail.
const std::vector<std::pair<Layout, Layout>>& binary_layouts() {
  static const std::vector<std::pair<Layout, Layout>> l{
      {{{4, 5, 6}, View::Contiguous}, {{4, 5, 6}, View::Contiguous}},
      {{{4, 1, 6}, View::Contiguous}, {{1, 5, 6}, View::Contiguous}},
      {{{6, 7}, View::Permuted}, {{6, 7}, View::Strided}},
      {{{3, 4, 5}, View::Expanded}, {{3, 4, 5}, View::Flipped}},
      {{{5, 1}, View::Flipped}, {{5, 7}, View::Permuted}},
      {{{67}, View::Contiguous}, {{67}, View::Strided}},
      {{{0, 3}, View::Contiguous}, {{1, 3}, View::Contiguous}},
      {{{2, 0, 4}, View::Strided}, {{2, 1, 4}, View::Expanded}},
      {{{2, 1, 3, 1, 4}, View::Contiguous}, {{1, 5, 1, 2, 1}, View::Flipped}},  // both sides broadcast, rank 5
      {{kLarge, View::Contiguous}, {kLarge, View::Permuted}},
      {{{131, 1}, View::Flipped}, {kLarge, View::Contiguous}}};
  return l;
}

const std::vector<Layout>& scalar_layouts() {
  static const std::vector<Layout> l{{{4, 5, 6}, View::Contiguous},
                                     {{6, 7}, View::Permuted},
                                     {{3, 4, 5}, View::Strided},
                                     {{0, 5}, View::Contiguous},
                                     {kLarge, View::Strided}};
  return l;
}

Entry unary(UnaryOp op, std::vector<DType> dtypes, Dist dist) {
  CaseMaker make = [op, dist](DType dt, Rng& rng) {
    std::vector<Case> out;
    for (const auto& l : unary_layouts())
      out.push_back({layout_label(l.shape, l.view), ir::Unary{op}, {random_input(l.shape, dt, dist, l.view, rng)}});
    return out;
  };
  return {std::string(ir::unary_name(op)), ir::Unary{op}, std::move(dtypes), std::move(make)};
}

using DistFor = std::function<Dist(DType)>;
using ScalarFor = std::function<Scalar(DType)>;

Entry binary(BinaryOp op, std::vector<DType> dtypes, DistFor lhs, DistFor rhs, ScalarFor scalar) {
  CaseMaker make = [op, lhs, rhs, scalar](DType dt, Rng& rng) {
    std::vector<Case> out;
    for (const auto& [a, b] : binary_layouts())
      out.push_back(
          {layout_label(a.shape, a.view) + " with " + layout_label(b.shape, b.view),
           ir::Binary{op, std::nullopt},
           {random_input(a.shape, dt, lhs(dt), a.view, rng), random_input(b.shape, dt, rhs(dt), b.view, rng)}});
    const Scalar s = scalar(dt);
    for (const auto& l : scalar_layouts())
      out.push_back({layout_label(l.shape, l.view) + " with scalar " + s.to_string(),
                     ir::Binary{op, s},
                     {random_input(l.shape, dt, lhs(dt), l.view, rng)}});
    return out;
  };
  return {std::string(ir::binary_name(op)), ir::Binary{op, std::nullopt}, std::move(dtypes), std::move(make)};
}

DistFor same(Dist d) {
  return [d](DType) { return d; };
}
/// Floats from `f`; ints from `i` (unsigned ints clip its lower end at 0).
DistFor by_kind(Dist f, Dist i) {
  return [f, i](DType dt) { return is_float(dt) ? f : i; };
}
ScalarFor scalar_of(double f, std::int64_t i, bool b = true) {
  return [f, i, b](DType dt) { return scalar_for(dt, f, i, b); };
}

std::vector<DType> without_bool(const std::vector<DType>& d) {
  std::vector<DType> out;
  for (DType t : d)
    if (!is_bool(t)) out.push_back(t);
  return out;
}

std::vector<Entry> unary_entries() {
  const auto& F = float_dtypes();
  const auto& N = numeric_dtypes();
  const Dist around = Dist::range(-5, 5).on_grid(0.5);  // zeros and exact halves included
  const Dist rounding = Dist::range(-4, 4).on_grid(0.25);
  return {
      unary(UnaryOp::Neg, N, around),
      unary(UnaryOp::Abs, N, around),
      unary(UnaryOp::Sign, N, around),
      unary(UnaryOp::Recip, F, Dist::range(-3, 3).without_zero()),
      unary(UnaryOp::Exp, F, Dist::range(-5, 5)),
      unary(UnaryOp::Log, F, Dist::range(0.05, 20)),
      unary(UnaryOp::Log1p, F, Dist::range(-0.9, 10)),
      unary(UnaryOp::Expm1, F, Dist::range(-3, 3)),
      unary(UnaryOp::Sqrt, F, Dist::range(0, 20)),
      unary(UnaryOp::Rsqrt, F, Dist::range(0.05, 20)),
      unary(UnaryOp::Sin, F, Dist::range(-6, 6)),
      unary(UnaryOp::Cos, F, Dist::range(-6, 6)),
      unary(UnaryOp::Tan, F, Dist::range(-1.4, 1.4)),
      unary(UnaryOp::Asin, F, Dist::range(-1, 1)),
      unary(UnaryOp::Acos, F, Dist::range(-1, 1)),
      unary(UnaryOp::Atan, F, Dist::range(-6, 6)),
      unary(UnaryOp::Sinh, F, Dist::range(-4, 4)),
      unary(UnaryOp::Cosh, F, Dist::range(-4, 4)),
      unary(UnaryOp::Tanh, F, Dist::range(-4, 4)),
      unary(UnaryOp::Asinh, F, Dist::range(-6, 6)),
      unary(UnaryOp::Acosh, F, Dist::range(1, 10)),
      unary(UnaryOp::Atanh, F, Dist::range(-0.95, 0.95)),
      unary(UnaryOp::Erf, F, Dist::range(-3, 3)),
      unary(UnaryOp::Round, F, rounding),  // exact .5 values: half to even
      unary(UnaryOp::Floor, F, rounding),
      unary(UnaryOp::Ceil, F, rounding),
      unary(UnaryOp::Trunc, F, rounding),
      unary(UnaryOp::IsNan, F, Dist::range(-2, 2).with_non_finite()),
      unary(UnaryOp::IsInf, F, Dist::range(-2, 2).with_non_finite()),
      unary(UnaryOp::LogicalNot, {DType::Bool}, Dist{}),
      unary(UnaryOp::BitNot, int_dtypes(), Dist::range(-100, 100)),
  };
}

std::vector<Entry> binary_entries() {
  const auto& F = float_dtypes();
  const auto& N = numeric_dtypes();
  const auto& I = int_dtypes();
  const std::vector<DType> B{DType::Bool};
  const Dist small_grid = Dist::range(-3, 3).on_grid(1);  // equal values occur often
  // Unsigned differences stay non-negative: wrapping around is not what is compared.
  const DistFor minuend = [](DType dt) { return is_unsigned_int(dt) ? Dist::range(20, 40) : Dist::range(-20, 20); };
  const DistFor divisor = by_kind(Dist::range(-3, 3).without_zero(), Dist::range(-6, 6).without_zero());
  return {
      binary(BinaryOp::Add, N, same(Dist::range(-20, 20)), same(Dist::range(-20, 20)), scalar_of(1.25, 3)),
      binary(BinaryOp::Sub, N, minuend, same(Dist::range(-20, 20)), scalar_of(0.75, 2)),
      binary(BinaryOp::Mul, N, same(Dist::range(-10, 10)), same(Dist::range(-10, 10)), scalar_of(-1.5, 3)),
      binary(BinaryOp::Div, N, same(Dist::range(-20, 20)), divisor, scalar_of(1.75, 3)),
      binary(BinaryOp::Rem, N, same(Dist::range(-20, 20)), divisor, scalar_of(1.5, 4)),
      binary(BinaryOp::Pow, N, by_kind(Dist::range(0.1, 3), Dist::range(-3, 3)),
             by_kind(Dist::range(-2, 2), Dist::range(0, 4)), scalar_of(1.5, 2)),
      binary(BinaryOp::Max, N, same(Dist::range(-10, 10).on_grid(0.5)), same(Dist::range(-10, 10).on_grid(0.5)),
             scalar_of(0.5, 1)),
      binary(BinaryOp::Min, N, same(Dist::range(-10, 10).on_grid(0.5)), same(Dist::range(-10, 10).on_grid(0.5)),
             scalar_of(0.5, 1)),
      binary(BinaryOp::Atan2, F, same(Dist::range(-3, 3)), same(Dist::range(-3, 3)), scalar_of(0.5, 0)),
      binary(BinaryOp::BitAnd, I, same(Dist::range(-100, 100)), same(Dist::range(-100, 100)), scalar_of(0, 6)),
      binary(BinaryOp::BitOr, I, same(Dist::range(-100, 100)), same(Dist::range(-100, 100)), scalar_of(0, 6)),
      binary(BinaryOp::BitXor, I, same(Dist::range(-100, 100)), same(Dist::range(-100, 100)), scalar_of(0, 6)),
      binary(BinaryOp::Shl, I, same(Dist::range(0, 3)), same(Dist::range(0, 4)), scalar_of(0, 2)),
      binary(BinaryOp::Shr, I, same(Dist::range(-100, 100)), same(Dist::range(0, 6)), scalar_of(0, 2)),
      binary(BinaryOp::LogicalAnd, B, same(Dist{}), same(Dist{}), scalar_of(0, 0, true)),
      binary(BinaryOp::LogicalOr, B, same(Dist{}), same(Dist{}), scalar_of(0, 0, false)),
      binary(BinaryOp::LogicalXor, B, same(Dist{}), same(Dist{}), scalar_of(0, 0, true)),
      binary(BinaryOp::Equal, all_dtypes(), same(small_grid), same(small_grid), scalar_of(1.0, 1, true)),
      binary(BinaryOp::NotEqual, all_dtypes(), same(small_grid), same(small_grid), scalar_of(1.0, 1, false)),
      binary(BinaryOp::Greater, N, same(small_grid), same(small_grid), scalar_of(1.0, 1)),
      binary(BinaryOp::GreaterEqual, N, same(small_grid), same(small_grid), scalar_of(1.0, 1)),
      binary(BinaryOp::Less, N, same(small_grid), same(small_grid), scalar_of(-1.0, 1)),
      binary(BinaryOp::LessEqual, N, same(small_grid), same(small_grid), scalar_of(-1.0, 1)),
  };
}

std::vector<Case> clamp_cases(DType dt, Rng& rng) {
  const Dist d = is_float(dt) ? Dist::range(-5, 5).on_grid(0.25) : Dist::range(-5, 10);
  const Scalar lo = is_float(dt) ? Scalar(-1.5) : Scalar(std::int64_t{is_unsigned_int(dt) ? 2 : -2});
  const Scalar hi = is_float(dt) ? Scalar(2.25) : Scalar(std::int64_t{is_unsigned_int(dt) ? 7 : 3});
  std::vector<Case> out;
  for (const auto& l : unary_layouts())
    out.push_back(
        {layout_label(l.shape, l.view) + " [lo, hi]", ir::Clamp{lo, hi}, {random_input(l.shape, dt, d, l.view, rng)}});
  out.push_back(
      {"[4, 5, 6] min only", ir::Clamp{lo, std::nullopt}, {random_input({4, 5, 6}, dt, d, View::Contiguous, rng)}});
  out.push_back(
      {"[6, 7] permuted max only", ir::Clamp{std::nullopt, hi}, {random_input({6, 7}, dt, d, View::Permuted, rng)}});
  return out;
}

/// Values every (source, target) pair represents: no negative values when
/// either side is unsigned, zeros and exact halves when the target is Bool.
Dist cast_dist(DType from, DType to) {
  if (is_bool(to)) return Dist::range(-2, 2).on_grid(0.5);
  if (is_unsigned_int(from) || is_unsigned_int(to)) return Dist::range(0, 100);
  return Dist::range(-100, 100);
}

std::vector<Case> cast_cases(DType from, Rng& rng) {
  std::vector<Case> out;
  for (DType to : all_dtypes()) {
    const Dist d = cast_dist(from, to);
    const std::string target = " to " + std::string(dtype_name(to));
    out.push_back({"[4, 5, 6]" + target, ir::Cast{to}, {random_input({4, 5, 6}, from, d, View::Contiguous, rng)}});
    out.push_back({"[6, 7] permuted" + target, ir::Cast{to}, {random_input({6, 7}, from, d, View::Permuted, rng)}});
    out.push_back({"[0, 3]" + target, ir::Cast{to}, {random_input({0, 3}, from, d, View::Contiguous, rng)}});
    out.push_back({layout_label(kLarge, View::Permuted) + target,
                   ir::Cast{to},
                   {random_input(kLarge, from, d, View::Permuted, rng)}});
  }
  return out;
}

}  // namespace

std::vector<Entry> elementwise_entries() {
  std::vector<Entry> out = unary_entries();
  auto b = binary_entries();
  out.insert(out.end(), std::make_move_iterator(b.begin()), std::make_move_iterator(b.end()));
  out.push_back({"clamp", ir::Clamp{}, without_bool(all_dtypes()), clamp_cases});
  out.push_back({"cast", ir::Cast{}, all_dtypes(), cast_cases});
  return out;
}

}  // namespace burn::differential
