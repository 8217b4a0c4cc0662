#version 450
// Cast A -> O with the CPU backends' rules: float -> int truncates toward
// zero, saturates out of range and maps NaN to 0; -> bool is != 0; half
// types go through f32; ints wrap (truncate or extend) like static_cast.
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;
layout(std430, binding = 1) writeonly buffer Out { O_T o[]; };
layout(std430, binding = 2) readonly buffer In { A_T a[]; };
void main() {
  const uint i = flat_id();
  if (i >= p_n) return;
  int off[MAX_OPERANDS];
  operand_offsets(i, 2, off);
  const A_C v = A_LOAD(a[off[1]]);
#if defined(O_BOOL)
  o[off[0]] = O_STORE(v != A_C(0) ? 1u : 0u);
#elif defined(O_INT) && defined(A_FLOAT)
  if (isnan(v)) o[off[0]] = O_STORE(O_C(0));
  else if (v <= A_C(O_LO)) o[off[0]] = O_STORE(O_C(O_MIN));
  else if (v >= A_C(O_HI)) o[off[0]] = O_STORE(O_C(O_MAX));
  else o[off[0]] = O_STORE(O_C(v));
#else
  o[off[0]] = O_STORE(O_C(v));
#endif
}
