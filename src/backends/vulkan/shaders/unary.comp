#version 450
// Unary ops on slot A (ir::UnaryOp codes as OP); O is A's type, or bool for
// the float predicates (PRED variants). Floats compute in f32, f64 in f64
// (transcendentals in software, double_math.glsl); ints in 32 or 64 bits and
// wrap when stored.
#include "common.glsl"
#include "elementwise.glsl"
#include "float_math.glsl"
#if defined(A_FLOAT) && defined(A_WIDE)
#include "double_math.glsl"
#endif
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;
layout(std430, binding = 1) writeonly buffer Out { O_T o[]; };
layout(std430, binding = 2) readonly buffer In { A_T a[]; };

// ir::UnaryOp, in its order.
#define NEG 0u
#define ABS 1u
#define SIGN 2u
#define RECIP 3u
#define EXP 4u
#define LOG 5u
#define LOG1P 6u
#define EXPM1 7u
#define SQRT 8u
#define RSQRT 9u
#define SIN 10u
#define COS 11u
#define TAN 12u
#define ASIN 13u
#define ACOS 14u
#define ATAN 15u
#define SINH 16u
#define COSH 17u
#define TANH 18u
#define ASINH 19u
#define ACOSH 20u
#define ATANH 21u
#define ERF 22u
#define ROUND 23u
#define FLOOR 24u
#define CEIL 25u
#define TRUNC 26u
#define ISNAN 27u
#define ISINF 28u
#define LOGICAL_NOT 29u
#define BIT_NOT 30u

// sqrt of a negative is NaN in C, undefined in GLSL.
#if defined(A_WIDE)
#define A_SQRT(x) (x < A_C(0) ? A_C(0) / A_C(0) : sqrt(x))
#else
#define A_SQRT(x) f_sqrt(x)
#endif

A_C apply(A_C x) {
#if defined(A_FLOAT)
  switch (OP) {
    case NEG: return -x;
    case ABS: return abs(x);
    case SIGN: return x > A_C(0) ? A_C(1) : x < A_C(0) ? A_C(-1) : x;  // keeps NaN and the zero's sign
    case RECIP: return A_C(1) / x;
    case SQRT: return A_SQRT(x);
    case RSQRT: return A_C(1) / A_SQRT(x);
#if defined(A_WIDE)
    case ROUND: return d_round_even(x);
#else
    case ROUND: return roundEven(x);
#endif
    case FLOOR: return floor(x);
    case CEIL: return ceil(x);
    case TRUNC: return trunc(x);
#if !defined(A_WIDE)
    case EXP: return f_exp(x);
    case LOG: return f_log(x);
    case LOG1P: return f_log1p(x);
    case EXPM1: return f_expm1(x);
    case SIN: return sin(x);
    case COS: return cos(x);
    case TAN: return tan(x);
    case ASIN: return f_asin(x);
    case ACOS: return f_acos(x);
    case ATAN: return atan(x);
    case SINH: return sinh(x);
    case COSH: return cosh(x);
    case TANH: return f_tanh(x);
    case ASINH: return f_asinh(x);
    case ACOSH: return f_acosh(x);
    case ATANH: return f_atanh(x);
    case ERF: return f_erf(x);
#else
    case EXP: return d_exp(x);
    case LOG: return d_log(x);
    case LOG1P: return d_log1p(x);
    case EXPM1: return d_expm1(x);
    case SIN: return d_sin(x);
    case COS: return d_cos(x);
    case TAN: return d_tan(x);
    case ASIN: return d_asin(x);
    case ACOS: return d_acos(x);
    case ATAN: return d_atan(x);
    case SINH: return d_sinh(x);
    case COSH: return d_cosh(x);
    case TANH: return d_tanh(x);
    case ASINH: return d_asinh(x);
    case ACOSH: return d_acosh(x);
    case ATANH: return d_atanh(x);
    case ERF: return d_erf(x);
#endif
  }
#elif defined(A_INT)
  switch (OP) {
    case NEG: return A_C(0) - x;  // wraps: the minimum stays itself
#if defined(A_SIGNED)
    case ABS: return x < A_C(0) ? A_C(0) - x : x;
    case SIGN: return x > A_C(0) ? A_C(1) : x < A_C(0) ? A_C(-1) : A_C(0);
#else
    case ABS: return x;
    case SIGN: return x > A_C(0) ? A_C(1) : A_C(0);
#endif
    case BIT_NOT: return ~x;
  }
#else
  if (OP == LOGICAL_NOT) return x == 0u ? 1u : 0u;
#endif
  return x;
}

void main() {
  const uint i = flat_id();
  if (i >= p_n) return;
  int off[MAX_OPERANDS];
  operand_offsets(i, 2, off);
  const A_C x = A_LOAD(a[off[1]]);
#if defined(PRED)
  o[off[0]] = O_STORE(OP == ISNAN ? (isnan(x) ? 1u : 0u) : (isinf(x) ? 1u : 0u));
#else
  o[off[0]] = O_STORE(apply(x));
#endif
}
