#version 450
// Inclusive scan of slot A along one dim (ir::CumulativeOp codes as OP). The
// element-wise parameters describe the lines (the dim has size 1): operand 0
// the output's line starts, 1 the input's; p_words: 0 the dim's length,
// 1 input step, 2 output step. LONG: a workgroup per line, scanning chunks of
// WG * ITEMS elements (each thread scans ITEMS in registers, then a
// Hillis-Steele scan of the thread totals in workgroup memory) and carrying
// the running value across chunks; otherwise a thread per line (short dims).
// Max/min keep a NaN once seen; ints wrap.
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;
layout(constant_id = 2) const bool LONG = true;
layout(std430, binding = 1) writeonly buffer Out { A_T o[]; };
layout(std430, binding = 2) readonly buffer In { A_T a[]; };

#define SUM 0u
#define PROD 1u
#define MAX 2u
#define MIN 3u
#define ITEMS 4u

A_C identity() {
  if (OP == SUM) return A_C(0);
  if (OP == PROD) return A_C(1);
#if defined(A_FLOAT)
  const A_C inf = A_C(uintBitsToFloat(0x7f800000u));
  return OP == MAX ? -inf : inf;
#else
  return OP == MAX ? A_C(A_MIN) : A_C(A_MAX);
#endif
}

// x comes before y in the line.
A_C combine(A_C x, A_C y) {
  if (OP == SUM) return x + y;
  if (OP == PROD) return x * y;
#if defined(A_FLOAT)
  if (isnan(x)) return x;
  if (isnan(y)) return y;
#endif
  return OP == MAX ? max(x, y) : min(x, y);
}

shared A_C s_total[WG];

void main() {
  const uint len = p_words[0];
  const int in_step = int(p_words[1]), out_step = int(p_words[2]);
  const uint line = LONG ? gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x : flat_id();
  if (line >= p_n) return;  // uniform per workgroup when LONG
  int off[MAX_OPERANDS];
  operand_offsets(line, 2, off);
  if (!LONG) {
    A_C acc = identity();
    for (uint k = 0; k < len; ++k) {
      acc = combine(acc, A_LOAD(a[off[1] + int(k) * in_step]));
      o[off[0] + int(k) * out_step] = A_STORE(acc);
    }
    return;
  }
  const uint t = gl_LocalInvocationID.x;
  A_C carry = identity();
  for (uint c0 = 0; c0 < len; c0 += WG * ITEMS) {
    // This thread's ITEMS consecutive elements, scanned in registers.
    A_C items[ITEMS];
    A_C run = identity();
    for (uint k = 0; k < ITEMS; ++k) {
      const uint p = c0 + t * ITEMS + k;
      run = combine(run, p < len ? A_LOAD(a[off[1] + int(p) * in_step]) : identity());
      items[k] = run;
    }
    s_total[t] = run;
    barrier();
    for (uint d = 1; d < WG; d <<= 1) {
      const A_C v = t >= d ? combine(s_total[t - d], s_total[t]) : s_total[t];
      barrier();
      s_total[t] = v;
      barrier();
    }
    const A_C before = combine(carry, t > 0 ? s_total[t - 1] : identity());
    for (uint k = 0; k < ITEMS; ++k) {
      const uint p = c0 + t * ITEMS + k;
      if (p < len) o[off[0] + int(p) * out_step] = A_STORE(combine(before, items[k]));
    }
    carry = combine(carry, s_total[WG - 1]);
    barrier();  // s_total is rewritten by the next chunk
  }
}
