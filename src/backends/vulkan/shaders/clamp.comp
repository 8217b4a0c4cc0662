#version 450
// Clamp of slot A to [lo, hi] (bit 0 of OP: has lo, bit 1: has hi); the
// bounds are A's compute type in p_words (lo at 0, hi at 2). NaN stays NaN.
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;
layout(std430, binding = 1) writeonly buffer Out { A_T o[]; };
layout(std430, binding = 2) readonly buffer In { A_T a[]; };

A_C bound(uint w) {
#if defined(A_FLOAT) && defined(A_WIDE)
  return word_f64(w);
#elif defined(A_FLOAT)
  return word_f32(w);
#elif defined(A_WIDE) && defined(A_SIGNED)
  return word_i64(w);
#elif defined(A_WIDE)
  return word_u64(w);
#else
  return A_C(p_words[w]);
#endif
}

void main() {
  const uint i = flat_id();
  if (i >= p_n) return;
  int off[MAX_OPERANDS];
  operand_offsets(i, 2, off);
  A_C v = A_LOAD(a[off[1]]);
  if ((OP & 1u) != 0u && v < bound(0)) v = bound(0);
  if ((OP & 2u) != 0u && v > bound(2)) v = bound(2);
  o[off[0]] = A_STORE(v);
}
