// The chain generator: random shapes, dtypes, views and ops, every op valid
// for its operands (no int division by zero, no negative shift counts), so a
// run on a correct device never throws.
#include <algorithm>
#include <array>
#include <numeric>
#include <random>
#include <span>

#include "fuzz_program.hpp"

namespace burn::fusion_test {
namespace {

using ir::BinaryOp;
using ir::UnaryOp;

constexpr std::array kDTypes{DType::F32, DType::F64, DType::F16, DType::BF16,
                             DType::I32, DType::I64, DType::U8,  DType::Bool};

constexpr std::array kFloatUnary{UnaryOp::Neg,   UnaryOp::Abs,   UnaryOp::Sign,  UnaryOp::Recip, UnaryOp::Exp,
                                 UnaryOp::Log,   UnaryOp::Log1p, UnaryOp::Expm1, UnaryOp::Sqrt,  UnaryOp::Rsqrt,
                                 UnaryOp::Sin,   UnaryOp::Cos,   UnaryOp::Tan,   UnaryOp::Asin,  UnaryOp::Acos,
                                 UnaryOp::Atan,  UnaryOp::Sinh,  UnaryOp::Cosh,  UnaryOp::Tanh,  UnaryOp::Asinh,
                                 UnaryOp::Acosh, UnaryOp::Atanh, UnaryOp::Erf,   UnaryOp::Round, UnaryOp::Floor,
                                 UnaryOp::Ceil,  UnaryOp::Trunc, UnaryOp::IsNan, UnaryOp::IsInf};
constexpr std::array kIntUnary{UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Sign, UnaryOp::BitNot};

constexpr std::array kFloatBinary{BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div,  BinaryOp::Rem,
                                  BinaryOp::Pow, BinaryOp::Max, BinaryOp::Min, BinaryOp::Atan2};
constexpr std::array kIntBinary{BinaryOp::Add,    BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div,    BinaryOp::Rem,
                                BinaryOp::Pow,    BinaryOp::Max, BinaryOp::Min, BinaryOp::BitAnd, BinaryOp::BitOr,
                                BinaryOp::BitXor, BinaryOp::Shl, BinaryOp::Shr};
constexpr std::array kBoolBinary{BinaryOp::LogicalAnd, BinaryOp::LogicalOr, BinaryOp::LogicalXor};
constexpr std::array kCompare{BinaryOp::Equal,        BinaryOp::NotEqual, BinaryOp::Greater,
                              BinaryOp::GreaterEqual, BinaryOp::Less,     BinaryOp::LessEqual};

template <class T, std::size_t N>
T pick(std::mt19937& rng, const std::array<T, N>& items) {
  return items[std::uniform_int_distribution<std::size_t>(0, N - 1)(rng)];
}

std::size_t uniform(std::mt19937& rng, std::size_t lo, std::size_t hi) {
  return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
}

bool is_compare(BinaryOp op) { return op >= BinaryOp::Equal; }

bool chance(std::mt19937& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

std::int64_t bit_width(DType d) { return static_cast<std::int64_t>(dtype_size(d) * 8); }

/// A right-hand scalar for `op` on `dtype` that keeps the op defined.
Scalar pick_scalar(std::mt19937& rng, BinaryOp op, DType dtype) {
  if (is_bool(dtype)) return Scalar(chance(rng, 0.5));
  if (is_float(dtype)) {
    if (op == BinaryOp::Pow) return Scalar(pick(rng, std::array{2.0, 0.5, -1.0, 3.0, 1.5, 0.0}));
    return Scalar(pick(rng, std::array{0.5, -1.25, 2.0, 3.75, -0.75, 1e-3, 100.0, 0.0, -3.0}));
  }
  const bool is_unsigned = is_unsigned_int(dtype);
  switch (op) {
    case BinaryOp::Div:
    case BinaryOp::Rem:
      return is_unsigned ? Scalar(pick(rng, std::array<std::int64_t, 4>{1, 2, 3, 7}))
                         : Scalar(pick(rng, std::array<std::int64_t, 6>{-3, -2, -1, 2, 3, 7}));
    case BinaryOp::Pow: return Scalar(pick(rng, std::array<std::int64_t, 4>{0, 1, 2, 3}));
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      // Counts past the width are defined (the result is 0 or the sign).
      return Scalar(static_cast<std::int64_t>(uniform(rng, 0, static_cast<std::size_t>(bit_width(dtype) + 2))));
    default:
      return is_unsigned ? Scalar(pick(rng, std::array<std::int64_t, 5>{0, 1, 3, 9, 200}))
                         : Scalar(pick(rng, std::array<std::int64_t, 6>{-7, -1, 0, 2, 5, 13}));
  }
}

/// Clamp bounds: `which` 0 sets both, 1 only min, 2 only max (the bounds
/// present are part of the op's structure, their values are not).
std::pair<std::optional<Scalar>, std::optional<Scalar>> pick_clamp(std::mt19937& rng, DType dtype, std::size_t which) {
  std::optional<Scalar> lo, hi;
  if (is_float(dtype)) {
    if (which != 2) lo = Scalar(pick(rng, std::array{-1.0, -0.5, 0.0}));
    if (which != 1) hi = Scalar(pick(rng, std::array{0.5, 1.0, 2.5}));
  } else if (is_unsigned_int(dtype)) {
    if (which != 2) lo = Scalar(pick(rng, std::array<std::int64_t, 2>{0, 2}));
    if (which != 1) hi = Scalar(pick(rng, std::array<std::int64_t, 2>{5, 20}));
  } else {
    if (which != 2) lo = Scalar(pick(rng, std::array<std::int64_t, 3>{-5, -1, 0}));
    if (which != 1) hi = Scalar(pick(rng, std::array<std::int64_t, 3>{0, 3, 10}));
  }
  return {lo, hi};
}

Scalar pick_fill(std::mt19937& rng, DType dtype) {
  if (is_bool(dtype)) return Scalar(chance(rng, 0.5));
  if (is_float(dtype)) return Scalar(pick(rng, std::array{-2.5, 0.0, 7.0, 1e30}));
  return Scalar(pick(rng, std::array<std::int64_t, 3>{0, 1, 42}));
}

Shape broadcast(const Shape& a, const Shape& b) {
  Shape out = a;
  for (std::size_t i = 0; i < a.rank(); ++i) out[i] = a[i] == 1 ? b[i] : a[i];
  return out;
}

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(static_cast<std::mt19937::result_type>(seed)) { p_.seed = seed; }

  Program build() {
    choose_shape();
    cur_ = leaf(random_dtype(), full_or_masked(0.7));
    const std::size_t n = uniform(rng_, 2, 12);
    for (std::size_t i = 0; i < n; ++i) {
      next_step();
      if (i + 1 < n) {
        Step& s = p_.steps[cur_.index];
        s.keep = chance(rng_, 0.12);
        // A matmul's result is always read: the epilogue fuser (matmul with
        // post-ops) agrees with flex within rounding only, which
        // epilogue_test.cpp checks; this test compares bits.
        s.read = s.kind == OpKind::Matmul || chance(rng_, 0.08);
        if (chance(rng_, 0.06)) dead_step();
      }
    }
    return std::move(p_);
  }

 private:
  // Mostly small shapes (fast, many edge cases), some past flex's parallel
  // grain size (threaded paths), a few empty.
  void choose_shape() {
    const std::size_t rank = uniform(rng_, 1, 4);
    const bool big = chance(rng_, 0.1);
    const std::size_t cap = big ? 200'000 : 4'096;
    Shape s;
    s.dims().resize(rank);
    std::size_t total = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      std::size_t d = chance(rng_, 0.2) ? 1 : pick(rng_, std::array<std::size_t, 9>{2, 3, 4, 5, 7, 8, 13, 16, 33});
      if (big) d = pick(rng_, std::array<std::size_t, 5>{1, 7, 64, 129, 1000});
      while (d > 1 && total * d > cap) d /= 2;
      s[i] = d;
      total *= d;
    }
    if (chance(rng_, 0.04)) s[uniform(rng_, 0, rank - 1)] = 0;
    p_.full = s;
  }

  DType random_dtype() { return pick(rng_, kDTypes); }

  /// The full shape, or (with probability 1 - p_full) some dims set to 1.
  Shape full_or_masked(double p_full) {
    Shape s = p_.full;
    if (chance(rng_, p_full)) return s;
    for (std::size_t i = 0; i < s.rank(); ++i)
      if (chance(rng_, 0.5)) s[i] = 1;
    return s;
  }

  const Shape& shape_of(Ref r) const { return r.leaf ? p_.leaves[r.index].shape : p_.steps[r.index].shape; }
  DType dtype_of_ref(Ref r) const { return r.leaf ? p_.leaves[r.index].dtype : p_.steps[r.index].dtype; }

  Ref leaf(DType dtype, const Shape& shape) {
    Leaf l;
    l.shape = shape;
    l.dtype = dtype;
    l.base = shape;
    l.data_seed = rng_();
    const std::size_t rank = shape.rank();
    switch (uniform(rng_, 0, 6)) {
      case 0: {  // a permuted view of a base laid out in another order
        l.view = ViewKind::Permute;
        l.axes.resize(rank);
        std::iota(l.axes.begin(), l.axes.end(), 0);
        std::shuffle(l.axes.begin(), l.axes.end(), rng_);
        for (std::size_t i = 0; i < rank; ++i) l.base[static_cast<std::size_t>(l.axes[i])] = shape[i];
        break;
      }
      case 1: {  // a strided (possibly reversed) slice of a larger base
        l.view = ViewKind::Slice;
        for (std::size_t i = 0; i < rank; ++i) {
          const auto count = static_cast<std::int64_t>(shape[i]);
          const auto start = static_cast<std::int64_t>(uniform(rng_, 0, 2));
          std::int64_t step = pick(rng_, std::array<std::int64_t, 5>{1, 2, 3, -1, -2});
          if (count == 0) step = 1;
          const std::int64_t span = count == 0 ? 0 : (count - 1) * std::abs(step) + 1;
          l.ranges.emplace_back(start, start + span, step);
          l.base[i] = static_cast<std::size_t>(start + span) + uniform(rng_, 0, 2);
        }
        break;
      }
      case 2: {  // a broadcast view: some dims have stride 0
        std::vector<std::size_t> wide;
        for (std::size_t i = 0; i < rank; ++i)
          if (shape[i] > 1) wide.push_back(i);
        if (wide.empty()) break;
        l.view = ViewKind::Expand;
        for (std::size_t i : wide)
          if (chance(rng_, 0.6)) l.base[i] = 1;
        l.base[wide[uniform(rng_, 0, wide.size() - 1)]] = 1;
        break;
      }
      case 3: {  // reversed dims: negative strides
        l.view = ViewKind::Flip;
        for (std::size_t i = 0; i < rank; ++i)
          if (chance(rng_, 0.5)) l.axes.push_back(static_cast<std::int64_t>(i));
        if (l.axes.empty()) l.axes.push_back(static_cast<std::int64_t>(uniform(rng_, 0, rank - 1)));
        break;
      }
      default: break;  // plain contiguous data
    }
    p_.leaves.push_back(std::move(l));
    return {true, p_.leaves.size() - 1};
  }

  /// An earlier value of `dtype` (any is broadcast-compatible) or a new leaf.
  Ref operand(DType dtype) {
    std::vector<Ref> same;
    for (std::size_t i = 0; i < p_.steps.size(); ++i)
      if (p_.steps[i].dtype == dtype) same.push_back({false, i});
    if (!same.empty() && chance(rng_, 0.35)) return same[uniform(rng_, 0, same.size() - 1)];
    return leaf(dtype, full_or_masked(0.5));
  }

  Ref emit(Step s, bool helper = false) {
    s.helper = helper;
    p_.steps.push_back(std::move(s));
    return {false, p_.steps.size() - 1};
  }

  Ref scalar_step(Ref a, BinaryOp op, Scalar v, bool helper) {
    Step s;
    s.kind = OpKind::BinaryScalar;
    s.args = {a};
    s.binary = op;
    s.scalar = v;
    s.dtype = dtype_of_ref(a);
    s.shape = shape_of(a);
    return emit(std::move(s), helper);
  }

  /// Makes an int right-hand tensor valid for `op`: divisors in [1, 5],
  /// exponents in [0, 3], shift counts in [0, width + 2].
  Ref make_valid_rhs(Ref b, BinaryOp op, DType dtype) {
    if (!is_int(dtype)) return b;
    switch (op) {
      case BinaryOp::Div:
      case BinaryOp::Rem:
        // rem takes the divisor's sign, so x rem 5 is in [0, 4] for every x.
        return scalar_step(scalar_step(b, BinaryOp::Rem, Scalar(std::int64_t{5}), true), BinaryOp::Add,
                           Scalar(std::int64_t{1}), true);
      case BinaryOp::Pow: return scalar_step(b, BinaryOp::Rem, Scalar(std::int64_t{4}), true);
      case BinaryOp::Shl:
      case BinaryOp::Shr: return scalar_step(b, BinaryOp::Rem, Scalar(bit_width(dtype) + 3), true);
      default: return b;
    }
  }

  BinaryOp binary_op(DType d) {
    if (is_bool(d)) return pick(rng_, kBoolBinary);
    return is_float(d) ? pick(rng_, kFloatBinary) : pick(rng_, kIntBinary);
  }
  BinaryOp compare_op(DType d) {
    return is_bool(d) ? pick(rng_, std::array{BinaryOp::Equal, BinaryOp::NotEqual}) : pick(rng_, kCompare);
  }
  UnaryOp unary_op(DType d, bool same_dtype) {
    if (is_bool(d)) return UnaryOp::LogicalNot;
    if (is_int(d)) return pick(rng_, kIntUnary);
    for (;;) {
      const UnaryOp u = pick(rng_, kFloatUnary);
      if (!same_dtype || (u != UnaryOp::IsNan && u != UnaryOp::IsInf)) return u;
    }
  }

  void next_step() {
    const DType d = dtype_of_ref(cur_);
    const Shape shape = shape_of(cur_);  // a copy: new leaves and steps reallocate
    const std::size_t r = uniform(rng_, 0, 99);
    Step s;
    s.dtype = d;
    s.shape = shape;
    if (r < 20) {
      s.kind = OpKind::Unary;
      s.unary = unary_op(d, false);
      s.args = {cur_};
      if (s.unary == UnaryOp::IsNan || s.unary == UnaryOp::IsInf) s.dtype = DType::Bool;
    } else if (r < 40) {
      s.kind = OpKind::Binary;
      s.binary = binary_op(d);
      Ref b = make_valid_rhs(operand(d), s.binary, d);
      s.args = chance(rng_, 0.8) || is_int(d) ? std::vector<Ref>{cur_, b} : std::vector<Ref>{b, cur_};
      s.shape = broadcast(shape, shape_of(b));
    } else if (r < 56) {
      s.kind = OpKind::BinaryScalar;
      s.binary = binary_op(d);
      s.scalar = pick_scalar(rng_, s.binary, d);
      s.args = {cur_};
    } else if (r < 59 && is_float(d)) {
      s.kind = OpKind::ScalarLhs;
      s.binary = pick(rng_, std::array{BinaryOp::Sub, BinaryOp::Div, BinaryOp::Pow});
      s.scalar = pick_scalar(rng_, BinaryOp::Add, d);
      s.args = {cur_};
    } else if (r < 66 && !is_bool(d)) {
      s.kind = OpKind::Clamp;
      std::tie(s.lo, s.hi) = pick_clamp(rng_, d, uniform(rng_, 0, 2));
      s.args = {cur_};
    } else if (r < 76) {
      s.kind = OpKind::Cast;
      s.cast_to = random_dtype();
      s.dtype = s.cast_to;
      s.args = {cur_};
    } else if (r < 86) {
      s.kind = OpKind::BinaryScalar;
      s.binary = compare_op(d);
      s.dtype = DType::Bool;
      if (chance(rng_, 0.5)) {
        s.kind = OpKind::Binary;
        const Ref b = operand(d);
        s.args = {cur_, b};
        s.shape = broadcast(shape, shape_of(b));
      } else {
        s.scalar = pick_scalar(rng_, BinaryOp::Add, d);
        s.args = {cur_};
      }
    } else if (r < 95) {
      mask_step();
      return;
    } else {
      if (!non_fusable_step(s)) {  // not possible for this value: cast instead
        s = Step{};
        s.kind = OpKind::Cast;
        s.cast_to = random_dtype();
        s.dtype = s.cast_to;
        s.shape = shape;
        s.args = {cur_};
      }
    }
    cur_ = emit(std::move(s));
  }

  // A result nobody uses: its handle is dropped at once, so a lazy device
  // need not compute it at all.
  void dead_step() {
    Step s;
    s.kind = OpKind::Unary;
    s.dtype = dtype_of_ref(cur_);
    s.shape = shape_of(cur_);
    s.unary = unary_op(s.dtype, true);
    s.args = {cur_};
    emit(std::move(s));
  }

  // mask_where / mask_fill, with the current value as the mask when it is a
  // bool tensor, else as the tensor masked by a comparison of itself.
  void mask_step() {
    Ref mask, target;
    if (dtype_of_ref(cur_) == DType::Bool) {
      mask = cur_;
      target = operand(random_dtype());
    } else {
      Step c;
      c.kind = OpKind::BinaryScalar;
      c.binary = compare_op(dtype_of_ref(cur_));
      c.scalar = pick_scalar(rng_, BinaryOp::Add, dtype_of_ref(cur_));
      c.args = {cur_};
      c.dtype = DType::Bool;
      c.shape = shape_of(cur_);
      target = cur_;
      mask = emit(std::move(c));
    }
    const DType d = dtype_of_ref(target);
    Step s;
    s.dtype = d;
    s.shape = broadcast(shape_of(target), shape_of(mask));
    if (chance(rng_, 0.5)) {
      s.kind = OpKind::MaskWhere;
      const Ref source = operand(d);
      s.args = {target, mask, source};
      s.shape = broadcast(s.shape, shape_of(source));
    } else {
      s.kind = OpKind::MaskFill;
      s.scalar = pick_fill(rng_, d);
      s.args = {target, mask};
    }
    cur_ = emit(std::move(s));
  }

  bool non_fusable_step(Step& s) {
    const DType d = dtype_of_ref(cur_);
    const Shape shape = shape_of(cur_);  // a copy: new leaves and steps reallocate
    const std::size_t rank = shape.rank();
    s.args = {cur_};
    switch (uniform(rng_, 0, 3)) {
      case 0: {
        if (is_bool(d)) return false;
        s.kind = OpKind::ReduceDim;
        // Usually the last dim, which the row-reduce fuser takes (float).
        s.dim = chance(rng_, 0.6) ? rank - 1 : uniform(rng_, 0, rank - 1);
        // Over an empty dim only a sum is defined for every dtype (max, min
        // and an int mean are errors, a float mean NaN).
        const ir::ReduceOp ops[] = {ir::ReduceOp::Sum, ir::ReduceOp::Mean, ir::ReduceOp::Max, ir::ReduceOp::Min};
        const bool empty = shape[s.dim] == 0;
        s.reduce = ops[uniform(rng_, 0, empty ? (is_float(d) ? 1 : 0) : 3)];
        s.shape[s.dim] = 1;
        return true;
      }
      case 1: s.kind = OpKind::ReshapeRoundTrip; return true;
      case 2: {
        if (rank < 2 || is_bool(d)) return false;
        s.kind = OpKind::Matmul;
        // [..., m, k] x [1, ..., k, n] with n the full last dim.
        Shape w(std::vector<std::size_t>(rank, 1));
        w[rank - 2] = shape[rank - 1];
        w[rank - 1] = p_.full[rank - 1];
        s.args.push_back(leaf(d, w));
        s.shape[rank - 1] = p_.full[rank - 1];
        return true;
      }
      default: {
        if (rank < 2) return false;
        s.kind = OpKind::TransposeSandwich;
        s.dim = uniform(rng_, 0, rank - 2);
        s.dim2 = uniform(rng_, s.dim + 1, rank - 1);
        s.unary = unary_op(d, true);
        return true;
      }
    }
  }

  std::mt19937 rng_;
  Program p_;
  Ref cur_;
};

}  // namespace

Program generate(std::uint64_t seed) { return Generator(seed).build(); }

Program with_new_scalars(const Program& program, std::uint64_t seed) {
  std::mt19937 rng(static_cast<std::mt19937::result_type>(seed));
  Program out = program;
  for (Step& s : out.steps) {
    if (s.helper) continue;
    const DType in = s.args.empty()   ? s.dtype
                     : s.args[0].leaf ? out.leaves[s.args[0].index].dtype
                                      : out.steps[s.args[0].index].dtype;
    switch (s.kind) {
      case OpKind::BinaryScalar:
        // Comparisons drew their scalar like an add (any value is valid).
        s.scalar = pick_scalar(rng, is_compare(s.binary) ? BinaryOp::Add : s.binary, in);
        break;
      case OpKind::ScalarLhs: s.scalar = pick_scalar(rng, BinaryOp::Add, in); break;
      case OpKind::Clamp: std::tie(s.lo, s.hi) = pick_clamp(rng, in, s.lo && s.hi ? 0 : s.lo ? 1 : 2); break;
      case OpKind::MaskFill: s.scalar = pick_fill(rng, in); break;
      default: break;
    }
  }
  return out;
}

}  // namespace burn::fusion_test
