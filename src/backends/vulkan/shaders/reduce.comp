#version 450
// Reduction of slot A along one dim (ir::ReduceOp codes as OP). The element-
// wise parameters describe the output (the reduced dim has size 1) with the
// input's strides; p_words[0] is the dim's length, p_words[1] its stride.
// TREE: one workgroup per output, each thread folds a strided share of the
// dim, then a tree in workgroup memory; otherwise one thread per output folds
// the whole dim (short dims). Variants: WIDE_ACC (int mean, summed in 64
// bits), ARG (O is the index dtype), ANYALL (O is bool).
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;
layout(constant_id = 2) const bool TREE = true;
layout(std430, binding = 1) writeonly buffer Out { O_T o[]; };
layout(std430, binding = 2) readonly buffer In { A_T a[]; };

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

#if defined(ANYALL)
#define ACC uint
#elif defined(WIDE_ACC) && defined(A_SIGNED)
#define ACC int64_t
#elif defined(WIDE_ACC)
#define ACC uint64_t
#else
#define ACC A_C
#endif

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

Acc element(uint k, int at) {
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
  const uint len = p_words[0];
  const int step = int(p_words[1]);
  const uint out_index = TREE ? gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x : flat_id();
  if (out_index >= p_n) return;  // uniform per workgroup in TREE mode
  int off[MAX_OPERANDS];
  operand_offsets(out_index, 2, off);
  Acc r = identity();
  if (!TREE) {
    for (uint k = 0; k < len; ++k) r = combine(r, element(k, off[1] + int(k) * step));
    finish(off[0], r, len);
    return;
  }
  const uint t = gl_LocalInvocationID.x;
  for (uint k = t; k < len; k += WG) r = combine(r, element(k, off[1] + int(k) * step));
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
  if (t == 0) finish(off[0], Acc(s_v[0], s_i[0]), len);
}
