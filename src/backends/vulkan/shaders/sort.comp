#version 450
// Stable sort of lines along one dim, in workgroup memory: a bitonic network
// over (key, position) pairs, the position breaking ties so equal keys keep
// their order. NaN sorts as the largest value. A workgroup sorts one chunk of
// CHUNK (a power of two, <= SORT_MAX) elements of one line; longer lines are
// sorted in chunks of SORT_MAX and then merged (merge.comp).
// Operands over the lines' shape (the dim has size 1): values out, positions
// out (i32), input. p_words: 0 line length, 1 input step, 2 values step,
// 3 positions step, 4 CHUNK, 5 chunks per line, 6 descending, 7 lines.
#include "common.glsl"
#include "elementwise.glsl"
#include "sort_order.glsl"
layout(local_size_x = WG) in;
layout(std430, binding = 1) writeonly buffer Vals { A_T vo[]; };
layout(std430, binding = 2) writeonly buffer Pos { int po[]; };
layout(std430, binding = 3) readonly buffer In { A_T a[]; };

// The chunk limit (a power of two), sized by the host to the adapter's
// workgroup memory: 2048, or less where 64-bit keys would not fit.
layout(constant_id = 2) const uint SORT_MAX = 2048;
#define PAD 0xffffffffu
shared A_C sk[SORT_MAX];
shared uint sp[SORT_MAX];

// Whether entry (kx, px) goes before entry (ky, py) (padding goes last).
bool before(A_C kx, uint px, A_C ky, uint py) {
  if (px == PAD) return false;
  if (py == PAD) return true;
  if (key_before(kx, ky)) return true;
  if (key_before(ky, kx)) return false;
  return px < py;
}

void main() {
  const uint len = p_words[0], chunk = p_words[4], chunks = p_words[5];
  const uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= p_words[7] * chunks) return;  // uniform per workgroup
  const uint line = wg / chunks, first = (wg % chunks) * chunk;
  int off[MAX_OPERANDS];
  operand_offsets(line, 3, off);
  const uint t = gl_LocalInvocationID.x;
  for (uint e = t; e < chunk; e += WG) {
    const uint p = first + e;
    sp[e] = p < len ? p : PAD;
    sk[e] = p < len ? A_LOAD(a[off[2] + int(p) * int(p_words[1])]) : A_C(0);
  }
  barrier();
  // Each step compares chunk / 2 pairs (e, e | j), e with bit j clear: a
  // thread walks pairs, not entries, so no lane idles on the upper halves.
  for (uint k = 2; k <= chunk; k <<= 1) {
    for (uint j = k >> 1; j > 0; j >>= 1) {
      for (uint q = t; q < chunk / 2u; q += WG) {
        const uint e = ((q & ~(j - 1u)) << 1) | (q & (j - 1u)), l = e | j;
        const A_C ke = sk[e], kl = sk[l];
        const uint pe = sp[e], pl = sp[l];
        // Ascending where bit k of e is clear, descending where it is set.
        if ((e & k) == 0u ? before(kl, pl, ke, pe) : before(ke, pe, kl, pl)) {
          sk[e] = kl;
          sk[l] = ke;
          sp[e] = pl;
          sp[l] = pe;
        }
      }
      barrier();
    }
  }
  for (uint e = t; e < chunk; e += WG) {
    const uint p = first + e;
    if (p < len) {
      vo[off[0] + int(p) * int(p_words[2])] = A_STORE(sk[e]);
      po[off[1] + int(p) * int(p_words[3])] = int(sp[e]);
    }
  }
}
