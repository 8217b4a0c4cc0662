#version 450
// Inclusive scan of slot A along one dim (ir::CumulativeOp codes as OP). The
// element-wise parameters describe the lines (the dim has size 1): operand 0
// the output's line starts, 1 the input's; p_words: 0 the dim's length,
// 1 input step, 2 output step, 3 block length B, 4 blocks per line G.
// LONG: a workgroup scans a block of a line in chunks of WG * ITEMS elements
// (each thread scans ITEMS in registers, then a Hillis-Steele scan of the
// thread totals in workgroup memory), carrying the running value across
// chunks; otherwise a thread per line (short dims). A line up to B long is
// one block (G = 1). Longer lines take G workgroups each, in two passes
// around a scan of the block totals (scan.cpp): MODE TOTALS writes block g's
// total to c[line * G + g], then MODE SCAN scans block g starting from
// c[line * G + g - 1] (by then the inclusive scan of the totals).
// Blocks bound every thread's loops (lavapipe ends a shader after 65,535 loop
// iterations in all). Max/min keep a NaN once seen; ints wrap.
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;
layout(constant_id = 2) const bool LONG = true;
layout(constant_id = 3) const uint MODE = 0;
layout(std430, binding = 1) writeonly buffer Out { A_T o[]; };
layout(std430, binding = 2) readonly buffer In { A_T a[]; };
// Block totals (TOTALS writes them, SCAN reads their inclusive scan), in
// the compute type so half and small int types lose nothing in between.
layout(std430, binding = 3) buffer Carry { A_C c[]; };

#define SCAN 0u
#define TOTALS 1u

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
  const uint len = p_words[0], block = p_words[3], blocks = p_words[4];
  const int in_step = int(p_words[1]), out_step = int(p_words[2]);
  const uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  const uint line = LONG ? wg / blocks : flat_id();
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
  const uint t = gl_LocalInvocationID.x, g = wg % blocks;
  const uint first = g * block, end = min(len, first + block);
  A_C carry = MODE == SCAN && g > 0u ? c[line * blocks + g - 1u] : identity();
  for (uint c0 = first; c0 < end; c0 += WG * ITEMS) {
    // This thread's ITEMS consecutive elements, scanned in registers.
    A_C items[ITEMS];
    A_C run = identity();
    for (uint k = 0; k < ITEMS; ++k) {
      const uint p = c0 + t * ITEMS + k;
      run = combine(run, p < end ? A_LOAD(a[off[1] + int(p) * in_step]) : identity());
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
    if (MODE == SCAN) {
      const A_C before = combine(carry, t > 0 ? s_total[t - 1] : identity());
      for (uint k = 0; k < ITEMS; ++k) {
        const uint p = c0 + t * ITEMS + k;
        if (p < end) o[off[0] + int(p) * out_step] = A_STORE(combine(before, items[k]));
      }
    }
    carry = combine(carry, s_total[WG - 1]);
    barrier();  // s_total is rewritten by the next chunk
  }
  if (MODE == TOTALS && t == 0u) c[line * blocks + g] = carry;
}
