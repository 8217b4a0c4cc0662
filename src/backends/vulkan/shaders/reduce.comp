#version 450
// Reduction of slot A along one dim (ir::ReduceOp codes as OP). The element-
// wise parameters describe the output (the reduced dim has size 1) with the
// input's strides. p_words: 0 the length L this pass folds, 1 the input's
// stride along the dim, 2 G (workgroups per output), 3 C (elements each of
// them folds), 4 the dim's full length (a mean's divisor).
// TREE: G workgroups per output, workgroup g folding elements [g C, g C + C)
// (each thread a strided share, then a tree in workgroup memory); otherwise
// one thread per output folds all L (short dims). Long dims take several
// passes (reduce.cpp): PARTIAL_OUT writes each workgroup's (value, index) to
// partials [outputs, G], PARTIAL_IN folds such partials instead of A, so no
// thread ever loops more than C / WG times (lavapipe stops a shader after
// 65,535 loop iterations in all). Indices travel with the values, so the
// first NaN / first extreme wins however the dim is split.
// Variants: WIDE_ACC (int mean, summed in 64 bits), ARG (O is the index
// dtype), ANYALL (O is bool).
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;
layout(constant_id = 2) const bool TREE = true;
layout(constant_id = 3) const bool PARTIAL_IN = false;
layout(constant_id = 4) const bool PARTIAL_OUT = false;

#if defined(ANYALL)
#define ACC uint
#elif defined(WIDE_ACC) && defined(A_SIGNED)
#define ACC int64_t
#elif defined(WIDE_ACC)
#define ACC uint64_t
#else
#define ACC A_C
#endif

layout(std430, binding = 1) writeonly buffer Out { O_T o[]; };
layout(std430, binding = 2) readonly buffer In { A_T a[]; };
layout(std430, binding = 3) readonly buffer PartValIn { ACC pv_in[]; };
layout(std430, binding = 4) readonly buffer PartIdxIn { uint pi_in[]; };
layout(std430, binding = 5) writeonly buffer PartValOut { ACC pv_out[]; };
layout(std430, binding = 6) writeonly buffer PartIdxOut { uint pi_out[]; };

#define SUM 0u
#define PROD 1u
#define MEAN 2u
#define MAX 3u
#define MIN 4u
#define ARGMAX 5u
#define ARGMIN 6u
#define ANY 7u
#define ALL 8u
#define EMPTY 0xffffffffu

// A running value and, for the extreme ops, the index it came from (EMPTY
// before the first element).
struct Acc {
  ACC v;
  uint i;
};

Acc identity() {
  if (OP == PROD || OP == ALL) return Acc(ACC(1), EMPTY);
  return Acc(ACC(0), EMPTY);
}

// Element k of the folded run: A's element at `at`, or partial `at`.
Acc element(uint k, int at) {
  if (PARTIAL_IN) return Acc(pv_in[at], pi_in[at]);
#if defined(ANYALL)
  return Acc(A_LOAD(a[at]) != A_C(0) ? 1u : 0u, k);
#else
  return Acc(ACC(A_LOAD(a[at])), k);
#endif
}

Acc combine(Acc x, Acc y) {
  if (OP == SUM || OP == MEAN) return Acc(x.v + y.v, 0u);
  if (OP == PROD) return Acc(x.v * y.v, 0u);
#if defined(ANYALL)
  if (OP == ANY) return Acc(x.v | y.v, 0u);
  if (OP == ALL) return Acc(x.v & y.v, 0u);
#endif
  // Max, min and their args: the first NaN wins, then the extreme value,
  // then the first index.
  if (x.i == EMPTY) return y;
  if (y.i == EMPTY) return x;
#if defined(A_FLOAT)
  const bool xn = isnan(x.v), yn = isnan(y.v);
  if (xn || yn) return (xn && yn) ? (x.i <= y.i ? x : y) : (xn ? x : y);
#endif
  if (x.v == y.v) return x.i <= y.i ? x : y;
  const bool want_max = OP == MAX || OP == ARGMAX;
  return (want_max ? x.v > y.v : x.v < y.v) ? x : y;
}

void finish(int at, Acc r, uint len) {
#if defined(ARG)
  o[at] = O_STORE(O_C(r.i));
#elif defined(ANYALL)
  o[at] = O_STORE(r.v);
#else
  if (OP == MEAN) {
#if defined(A_FLOAT)
    o[at] = O_STORE(r.v / ACC(len));  // an empty dim gives 0 / 0 = NaN
#else
    o[at] = O_STORE(O_C(r.v / ACC(len)));  // truncates toward zero
#endif
  } else {
    o[at] = O_STORE(O_C(r.v));
  }
#endif
}

shared ACC s_v[WG];
shared uint s_i[WG];

void main() {
  const uint len = p_words[0], groups = p_words[2], chunk = p_words[3];
  const int step = PARTIAL_IN ? 1 : int(p_words[1]);
  const uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  const uint out_index = TREE ? wg / groups : flat_id();
  if (out_index >= p_n) return;  // uniform per workgroup in TREE mode
  int off[MAX_OPERANDS];
  operand_offsets(out_index, 2, off);
  // Where element 0 of this output's run is: partials are [outputs, len].
  const int base = PARTIAL_IN ? int(out_index * len) : off[1];
  Acc r = identity();
  if (!TREE) {
    for (uint k = 0; k < len; ++k) r = combine(r, element(k, base + int(k) * step));
    finish(off[0], r, p_words[4]);
    return;
  }
  const uint t = gl_LocalInvocationID.x, g = wg % groups;
  const uint end = min(len, (g + 1u) * chunk);
  for (uint k = g * chunk + t; k < end; k += WG) r = combine(r, element(k, base + int(k) * step));
  s_v[t] = r.v;
  s_i[t] = r.i;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (t < s) {
      const Acc c = combine(Acc(s_v[t], s_i[t]), Acc(s_v[t + s], s_i[t + s]));
      s_v[t] = c.v;
      s_i[t] = c.i;
    }
    barrier();
  }
  if (t != 0) return;
  if (PARTIAL_OUT) {
    pv_out[out_index * groups + g] = s_v[0];
    pi_out[out_index * groups + g] = s_i[0];
  } else {
    finish(off[0], Acc(s_v[0], s_i[0]), p_words[4]);
  }
}
