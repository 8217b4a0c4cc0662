// Unary, binary (broadcast, strided, scalar) and clamp on vulkan:0 against
// the reference device, on random inputs.
#include "vk_test.hpp"

#include <cmath>
#include <limits>

namespace {

using burn::DType;
using burn::Range;
using burn::Shape;
using namespace burn::vktest;
namespace ir = burn::ir;
namespace detail = burn::detail;
using ir::BinaryOp;
using ir::UnaryOp;

const std::vector<DType> kFloats = {DType::F32, DType::F16, DType::BF16, DType::F64};
const std::vector<DType> kInts = {DType::I64, DType::I32, DType::I16, DType::I8,
                                  DType::U64, DType::U32, DType::U16, DType::U8};

struct Domain {
  UnaryOp op;
  double lo, hi;
};
// Each op on inputs where it is defined and well conditioned.
const std::vector<Domain> kFloatUnary = {
    {UnaryOp::Neg, -3, 3},     {UnaryOp::Abs, -3, 3},       {UnaryOp::Sign, -3, 3},     {UnaryOp::Recip, 0.5, 3},
    {UnaryOp::Exp, -3, 3},     {UnaryOp::Log, 0.1, 5},      {UnaryOp::Log1p, -0.5, 3},  {UnaryOp::Expm1, -2, 2},
    {UnaryOp::Sqrt, 0, 5},     {UnaryOp::Rsqrt, 0.2, 5},    {UnaryOp::Sin, -3, 3},      {UnaryOp::Cos, -3, 3},
    {UnaryOp::Tan, -1.2, 1.2}, {UnaryOp::Asin, -0.9, 0.9},  {UnaryOp::Acos, -0.9, 0.9}, {UnaryOp::Atan, -4, 4},
    {UnaryOp::Sinh, -3, 3},    {UnaryOp::Cosh, -3, 3},      {UnaryOp::Tanh, -20, 20},   {UnaryOp::Asinh, -4, 4},
    {UnaryOp::Acosh, 1.1, 5},  {UnaryOp::Atanh, -0.9, 0.9}, {UnaryOp::Erf, -3, 3},      {UnaryOp::Round, -5, 5},
    {UnaryOp::Floor, -5, 5},   {UnaryOp::Ceil, -5, 5},      {UnaryOp::Trunc, -5, 5},
};
TEST(VulkanUnary, FloatOps) {
  for (DType t : kFloats) {
    for (const Domain& d : kFloatUnary) {
      const std::string what = std::string(ir::unary_name(d.op)) + " " + name_of(t);
      agree(what, [&](const auto& in) { return burn::detail::unary(d.op, in[0]); },
            {rand(Shape{7, 33}, t, d.lo, d.hi)});
      // The same on a flipped, sliced view (strided input).
      agree(what + " strided",
            [&](const auto& in) {
              const Range r[] = {Range(1, 7, 2), Range::all()};
              const std::int64_t axes[] = {1};
              return burn::detail::unary(d.op, burn::detail::flip(burn::detail::slice(in[0], r), axes));
            },
            {rand(Shape{7, 33}, t, d.lo, d.hi)});
    }
  }
}

TEST(VulkanUnary, SpecialValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {nan, inf, -inf, 0.0, -0.0, 1e-8, -1e-8, 2.5, -2.5, 0.5, 1.0, -1.0, -0.5};
  for (DType t : kFloats) {
    const auto x = values(v, Shape{13}, t, ref());
    for (UnaryOp op :
         {UnaryOp::IsNan, UnaryOp::IsInf, UnaryOp::Round, UnaryOp::Sign, UnaryOp::Abs, UnaryOp::Floor, UnaryOp::Sqrt})
      agree(std::string(ir::unary_name(op)) + " " + name_of(t),
            [&](const auto& in) { return burn::detail::unary(op, in[0]); }, {x});
    for (UnaryOp op :
         {UnaryOp::Exp, UnaryOp::Tanh, UnaryOp::Log1p, UnaryOp::Expm1, UnaryOp::Erf, UnaryOp::Sqrt, UnaryOp::Log,
          UnaryOp::Asin, UnaryOp::Acos, UnaryOp::Asinh, UnaryOp::Acosh, UnaryOp::Atanh, UnaryOp::Rsqrt, UnaryOp::Recip})
      agree(std::string(ir::unary_name(op)) + " special " + name_of(t),
            [&](const auto& in) { return burn::detail::unary(op, in[0]); }, {x});
  }
}

TEST(VulkanUnary, IntAndBoolOps) {
  for (DType t : kInts) {
    const bool is_signed = burn::is_signed_int(t);
    const auto x = rand(Shape{5, 13}, t, is_signed ? -120 : 0, is_signed ? 120 : 250);
    for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Sign, UnaryOp::BitNot})
      agree(std::string(ir::unary_name(op)) + " " + name_of(t),
            [&](const auto& in) { return burn::detail::unary(op, in[0]); }, {x});
  }
  // The minimum of a signed type wraps to itself under neg and abs.
  const auto mins = values({-128, 127, 0, -1}, Shape{4}, DType::I8, ref());
  for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Abs})
    agree("i8 extremes", [&](const auto& in) { return burn::detail::unary(op, in[0]); }, {mins});
  agree("logical not", [](const auto& in) { return burn::detail::unary(UnaryOp::LogicalNot, in[0]); },
        {rand_bool(Shape{40})});
}

TEST(VulkanBinary, FloatOpsBroadcastAndScalar) {
  for (DType t : kFloats) {
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Rem, BinaryOp::Pow,
                        BinaryOp::Max, BinaryOp::Min, BinaryOp::Atan2}) {
      const std::string what = std::string(ir::binary_name(op)) + " " + name_of(t);
      const double lo = op == BinaryOp::Pow ? 0.1 : -3;
      // [3, 1, 4] with [1, 5, 4] -> [3, 5, 4].
      agree(what, [&](const auto& in) { return burn::detail::binary(op, in[0], in[1]); },
            {rand(Shape{3, 1, 4}, t, lo, 3), rand(Shape{1, 5, 4}, t, 0.5, 3)});
      agree(what + " scalar", [&](const auto& in) { return burn::detail::binary_scalar(op, in[0], 1.7); },
            {rand(Shape{4, 6}, t, lo, 3)});
    }
    // Negative bases with integer and fractional exponents.
    agree("pow negative base " + name_of(t),
          [](const auto& in) { return burn::detail::binary(BinaryOp::Pow, in[0], in[1]); },
          {values({-2, -2, -0.5, 0, 0, -3, 2}, Shape{7}, t, ref()),
           values({3, 2, 0.5, -1, 0, 0, -2}, Shape{7}, t, ref())});
  }
}

TEST(VulkanBinary, StridedOperands) {
  // A permuted lhs, a stepped slice rhs and an expanded (stride 0) operand.
  for (DType t : {DType::F32, DType::I32, DType::F16}) {
    agree("permute x slice " + name_of(t),
          [](const auto& in) {
            const std::int64_t axes[] = {1, 0, 2};
            const Range r[] = {Range(0, 8, 2), Range::all(), Range::all()};
            return burn::detail::binary(BinaryOp::Mul, burn::detail::permute(in[0], axes),
                                        burn::detail::slice(in[1], r));
          },
          {rand(Shape{5, 4, 3}, t, -9, 9), rand(Shape{8, 5, 3}, t, -9, 9)});
    agree("expand x flip " + name_of(t),
          [](const auto& in) {
            const std::int64_t shape[] = {6, 4};
            const std::int64_t axes[] = {0, 1};
            return burn::detail::binary(BinaryOp::Sub, burn::detail::expand(in[0], shape),
                                        burn::detail::flip(in[1], axes));
          },
          {rand(Shape{1, 4}, t, -9, 9), rand(Shape{6, 4}, t, -9, 9)});
  }
}

TEST(VulkanBinary, Comparisons) {
  for (DType t : {DType::F32, DType::F64, DType::BF16, DType::I64, DType::I8, DType::U16, DType::Bool}) {
    for (BinaryOp op : {BinaryOp::Equal, BinaryOp::NotEqual, BinaryOp::Greater, BinaryOp::GreaterEqual, BinaryOp::Less,
                        BinaryOp::LessEqual}) {
      if (t == DType::Bool && op != BinaryOp::Equal && op != BinaryOp::NotEqual) continue;
      const auto a = t == DType::Bool ? rand_bool(Shape{4, 8}) : rand(Shape{4, 8}, t, 0, 4);
      const auto b = t == DType::Bool ? rand_bool(Shape{1, 8}) : rand(Shape{1, 8}, t, 0, 4);
      agree(std::string(ir::binary_name(op)) + " " + name_of(t),
            [&](const auto& in) { return burn::detail::binary(op, in[0], in[1]); }, {a, b});
      if (t != DType::Bool)
        agree(std::string(ir::binary_name(op)) + " scalar " + name_of(t),
              [&](const auto& in) { return burn::detail::binary_scalar(op, in[0], 2); }, {a});
    }
  }
}

TEST(VulkanBinary, IntOps) {
  for (DType t : kInts) {
    const bool s = burn::is_signed_int(t);
    const auto a = rand(Shape{6, 11}, t, s ? -100 : 0, 100);
    // Divisors without zero, with both signs for signed types.
    auto b = rand(Shape{6, 11}, t, 1, 9);
    if (s) b = burn::detail::binary(BinaryOp::Mul, b, rand(Shape{1, 11}, t, 0, 2) /* 0 or 1 */);
    if (s)
      b = burn::detail::binary_scalar(BinaryOp::Add, burn::detail::binary_scalar(BinaryOp::Mul, b, 2),
                                      -9);  // odd: never 0
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Rem, BinaryOp::Max,
                        BinaryOp::Min, BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor})
      agree(std::string(ir::binary_name(op)) + " " + name_of(t),
            [&](const auto& in) { return burn::detail::binary(op, in[0], in[1]); }, {a, b});
    const auto small = rand(Shape{6, 11}, t, s ? -4 : 0, 5);
    const auto exps = rand(Shape{6, 11}, t, 0, 6);
    agree("pow " + name_of(t), [](const auto& in) { return burn::detail::binary(BinaryOp::Pow, in[0], in[1]); },
          {small, exps});
    // Shift counts up to past the width.
    const auto counts = rand(Shape{6, 11}, t, 0, 70);
    for (BinaryOp op : {BinaryOp::Shl, BinaryOp::Shr})
      agree(std::string(ir::binary_name(op)) + " " + name_of(t),
            [&](const auto& in) { return burn::detail::binary(op, in[0], in[1]); }, {a, counts});
    agree("add scalar " + name_of(t),
          [](const auto& in) { return burn::detail::binary_scalar(BinaryOp::Add, in[0], 250); }, {a});
    agree("mul float scalar " + name_of(t),
          [](const auto& in) { return burn::detail::binary_scalar(BinaryOp::Mul, in[0], 2.9); }, {a});
  }
  // Signed edge cases: min / -1, remainder signs, negative exponents.
  const auto a = values({-128, -7, 7, -7, 7, 2, -1, 1, 0}, Shape{9}, DType::I8, ref());
  const auto b = values({-1, 2, -2, -2, 3, -1, -3, -5, 3}, Shape{9}, DType::I8, ref());
  for (BinaryOp op : {BinaryOp::Div, BinaryOp::Rem, BinaryOp::Pow, BinaryOp::Mul})
    agree(std::string(ir::binary_name(op)) + " i8 edges",
          [&](const auto& in) { return burn::detail::binary(op, in[0], in[1]); }, {a, b});
}

TEST(VulkanBinary, BoolOps) {
  for (BinaryOp op : {BinaryOp::LogicalAnd, BinaryOp::LogicalOr, BinaryOp::LogicalXor})
    agree(std::string(ir::binary_name(op)), [&](const auto& in) { return burn::detail::binary(op, in[0], in[1]); },
          {rand_bool(Shape{3, 17}), rand_bool(Shape{3, 17})});
}

TEST(VulkanClamp, AllNumericDtypes) {
  for (DType t :
       {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I8, DType::U8, DType::U64}) {
    const auto x = rand(Shape{5, 9}, t, 0, 100);
    agree("clamp " + name_of(t), [](const auto& in) { return burn::detail::clamp(in[0], 20, 70.5); }, {x});
    agree("clamp_min " + name_of(t), [](const auto& in) { return burn::detail::clamp(in[0], 50, std::nullopt); }, {x});
    agree("clamp_max " + name_of(t), [](const auto& in) { return burn::detail::clamp(in[0], std::nullopt, 30); }, {x});
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  agree("clamp keeps NaN", [](const auto& in) { return burn::detail::clamp(in[0], 0, 1); },
        {values({nan, -1, 2, 0.5}, Shape{4}, DType::F32, ref())});
}

}  // namespace
