#version 450
// Binary ops on slot A (ir::BinaryOp codes in OP's low byte; bit 8 set when
// the right-hand side is the scalar in p_words). O is A's type, or bool for
// comparisons (CMP variants). Integer division by zero and friends set a bit
// in the error word, raised at the next sync (stream.hpp).
#include "common.glsl"
#include "elementwise.glsl"
#include "float_math.glsl"
#if defined(A_FLOAT) && defined(A_WIDE)
#include "double_math.glsl"
#endif
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;
const uint OPC = OP & 255u;
const bool SCALAR_RHS = (OP & 256u) != 0u;
layout(std430, binding = 1) writeonly buffer Out { O_T o[]; };
layout(std430, binding = 2) readonly buffer Lhs { A_T a[]; };
layout(std430, binding = 3) readonly buffer Rhs { A_T b[]; };
layout(std430, binding = 7) buffer Errors { uint err_bits; };

// ir::BinaryOp, in its order.
#define ADD 0u
#define SUB 1u
#define MUL 2u
#define DIV 3u
#define REM 4u
#define POW 5u
#define MAX 6u
#define MIN 7u
#define ATAN2 8u
#define BIT_AND 9u
#define BIT_OR 10u
#define BIT_XOR 11u
#define SHL 12u
#define SHR 13u
#define LOGICAL_AND 14u
#define LOGICAL_OR 15u
#define LOGICAL_XOR 16u
#define EQ 17u
#define NE 18u
#define GT 19u
#define GE 20u
#define LT 21u
#define LE 22u

// Error bits (DeviceErrorBit in stream.hpp).
#define ERR_DIV 1u
#define ERR_REM 2u
#define ERR_POW 4u
#define ERR_SHIFT 8u

A_C scalar_rhs() {
#if defined(A_FLOAT) && defined(A_WIDE)
  return word_f64(0);
#elif defined(A_FLOAT)
  return word_f32(0);
#elif defined(A_WIDE) && defined(A_SIGNED)
  return word_i64(0);
#elif defined(A_WIDE)
  return word_u64(0);
#else
  return A_C(p_words[0]);
#endif
}

#if defined(A_INT)
A_C int_pow(A_C base, A_C e) {
#if defined(A_SIGNED)
  if (e < A_C(0)) {
    if (base == A_C(0)) { atomicOr(err_bits, ERR_POW); return A_C(0); }
    if (base == A_C(1)) return A_C(1);
    if (base == A_C(-1)) return (e & A_C(1)) != A_C(0) ? A_C(-1) : A_C(1);
    return A_C(0);
  }
#endif
  A_C result = A_C(1);
  for (; e != A_C(0); e >>= 1) {  // e >= 0 here: the shift ends the loop
    if ((e & A_C(1)) != A_C(0)) result *= base;
    base *= base;
  }
  return result;
}
#endif

A_C apply(A_C x, A_C y) {
#if defined(A_FLOAT)
  switch (OPC) {
    case ADD: return x + y;
    case SUB: return x - y;
    case MUL: return x * y;
    case DIV: return x / y;
    case REM: return x - y * floor(x / y);  // takes the divisor's sign
    case MAX: return isnan(x) || isnan(y) ? x + y : max(x, y);
    case MIN: return isnan(x) || isnan(y) ? x + y : min(x, y);
#if !defined(A_WIDE)
    case POW: return f_pow(x, y);
    case ATAN2: return f_atan2(x, y);
#else
    case POW: return d_pow(x, y);
    case ATAN2: return d_atan2(x, y);
#endif
  }
#elif defined(A_INT)
  switch (OPC) {
    case ADD: return x + y;
    case SUB: return x - y;
    case MUL: return x * y;
    case DIV:
      if (y == A_C(0)) { atomicOr(err_bits, ERR_DIV); return A_C(0); }
#if defined(A_SIGNED)
      if (y == A_C(-1)) return A_C(0) - x;  // the minimum / -1 wraps
#endif
      return x / y;  // truncates toward zero
    case REM: {
      if (y == A_C(0)) { atomicOr(err_bits, ERR_REM); return A_C(0); }
#if defined(A_SIGNED)
      if (y == A_C(-1)) return A_C(0);
      A_C r = x - (x / y) * y;
      if (r != A_C(0) && ((r < A_C(0)) != (y < A_C(0)))) r += y;
      return r;
#else
      return x - (x / y) * y;
#endif
    }
    case POW: return int_pow(x, y);
    case MAX: return max(x, y);
    case MIN: return min(x, y);
    case BIT_AND: return x & y;
    case BIT_OR: return x | y;
    case BIT_XOR: return x ^ y;
    case SHL:
    case SHR: {
#if defined(A_SIGNED)
      if (y < A_C(0)) { atomicOr(err_bits, ERR_SHIFT); return A_C(0); }
#endif
      if (y >= A_C(A_BITS)) {
#if defined(A_SIGNED)
        if (OPC == SHR && x < A_C(0)) return A_C(-1);
#endif
        return A_C(0);
      }
      return OPC == SHL ? x << y : x >> y;  // >> is arithmetic on signed types
    }
  }
#else
  switch (OPC) {
    case LOGICAL_AND: return (x != 0u && y != 0u) ? 1u : 0u;
    case LOGICAL_OR: return (x != 0u || y != 0u) ? 1u : 0u;
    case LOGICAL_XOR: return ((x != 0u) != (y != 0u)) ? 1u : 0u;
  }
#endif
  return x;
}

bool compare(A_C x, A_C y) {
  switch (OPC) {
    case EQ: return x == y;
    case NE: return x != y;
    case GT: return x > y;
    case GE: return x >= y;
    case LT: return x < y;
    case LE: return x <= y;
  }
  return false;
}

void main() {
  const uint i = flat_id();
  if (i >= p_n) return;
  int off[MAX_OPERANDS];
  operand_offsets(i, SCALAR_RHS ? 2 : 3, off);
  const A_C x = A_LOAD(a[off[1]]);
  const A_C y = SCALAR_RHS ? scalar_rhs() : A_LOAD(b[off[2]]);
#if defined(CMP)
  o[off[0]] = O_STORE(compare(x, y) ? 1u : 0u);
#else
  o[off[0]] = O_STORE(apply(x, y));
#endif
}
