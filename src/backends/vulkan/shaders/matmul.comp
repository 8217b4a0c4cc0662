#version 450
// Batched matmul [.., m, k] x [.., k, n], tiled: each workgroup computes a
// 64x64 output tile, staging 64x16 and 16x64 input tiles in workgroup memory;
// each thread accumulates a 4x4 block in registers. Operands may have any
// strides; batch offsets come from the element-wise block (output batch
// shape, broadcast strides). Half types and f32 accumulate in f32, f64 in
// f64, ints in their compute type (wrapping).
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
layout(std430, binding = 1) writeonly buffer Out { A_T o[]; };
layout(std430, binding = 2) readonly buffer Lhs { A_T a[]; };
layout(std430, binding = 3) readonly buffer Rhs { A_T b[]; };

#define BM 64
#define BN 64
#define BK 16
#define TM 4
#define TN 4

shared A_C sa[BK][BM];  // k-major, so the inner loop reads rows of the tile
shared A_C sb[BK][BN];

void main() {
  // p_words: m, n, k, then strides: lhs row, lhs col, rhs row, rhs col.
  const uint M = p_words[0], N = p_words[1], K = p_words[2];
  const int a_r = int(p_words[3]), a_c = int(p_words[4]), b_r = int(p_words[5]), b_c = int(p_words[6]);
  int off[MAX_OPERANDS];
  operand_offsets(gl_WorkGroupID.z, 3, off);
  const uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  const uint t = gl_LocalInvocationID.x;
  const uint tr = t / (BN / TN), tc = t % (BN / TN);

  A_C acc[TM][TN];
  for (uint i = 0; i < TM; ++i)
    for (uint j = 0; j < TN; ++j) acc[i][j] = A_C(0);

  for (uint k0 = 0; k0 < K; k0 += BK) {
    for (uint e = t; e < BM * BK; e += WG) {
      const uint r = e / BK, kk = e % BK, gr = row0 + r, gk = k0 + kk;
      sa[kk][r] = (gr < M && gk < K) ? A_LOAD(a[off[1] + int(gr) * a_r + int(gk) * a_c]) : A_C(0);
    }
    for (uint e = t; e < BK * BN; e += WG) {
      const uint kk = e / BN, c = e % BN, gk = k0 + kk, gc = col0 + c;
      sb[kk][c] = (gk < K && gc < N) ? A_LOAD(b[off[2] + int(gk) * b_r + int(gc) * b_c]) : A_C(0);
    }
    barrier();
    for (uint kk = 0; kk < BK; ++kk) {
      A_C av[TM], bv[TN];
      for (uint i = 0; i < TM; ++i) av[i] = sa[kk][tr * TM + i];
      for (uint j = 0; j < TN; ++j) bv[j] = sb[kk][tc * TN + j];
      for (uint i = 0; i < TM; ++i)
        for (uint j = 0; j < TN; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }
  for (uint i = 0; i < TM; ++i) {
    const uint gr = row0 + tr * TM + i;
    if (gr >= M) continue;
    for (uint j = 0; j < TN; ++j) {
      const uint gc = col0 + tc * TN + j;
      if (gc < N) o[off[0] + int(gr * N + gc)] = A_STORE(acc[i][j]);
    }
  }
}
