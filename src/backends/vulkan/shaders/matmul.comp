#version 450
// Batched matmul [.., m, k] x [.., k, n], tiled: each workgroup computes a
// 64x64 output tile, staging 64x16 and 16x64 input tiles in workgroup memory;
// each thread accumulates a 4x4 block in registers. Operands may have any
// strides; batch offsets come from the element-wise block (output batch
// shape, broadcast strides). Half types and f32 accumulate in f32, f64 in
// f64, ints in their compute type (wrapping).
//
// Vectorised loads: where an operand's tile rows are contiguous, 4-aligned
// and never cross the matrix edge mid-vector (the host checks strides,
// offsets, sizes and the binding's alignment), a thread stages one 4-wide
// vector (A_V4, defined for 32- and 64-bit types) per load instead of four
// scalars. The choice is a uniform branch on p_words[7], not a specialisation
// constant, so each dtype compiles one pipeline (lavapipe compiles slowly).
// LHS_VEC / RHS_VEC: 0 scalar; 1 contiguous along k (lhs) / n (rhs); 2 along
// m (lhs) / k (rhs). OUT_VEC: output rows stored 4 columns at a time.
//
// Split K: lavapipe ends a shader after 65,535 loop iterations in all (about
// 15 per BK step here), so matmul.cpp runs a long K as several dispatches,
// each over one range of it (operand offsets shifted to the range, K its
// length). Bits 5 and 6 of p_words[7] say how a dispatch meets the others
// through `part`, a dense [batch, m, n] scratch in the compute type:
// READ_PART adds the sums of the ranges before, WRITE_PART stores the sum
// there instead of the output.
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
layout(std430, binding = 1) writeonly buffer Out { A_T o[]; };
layout(std430, binding = 2) readonly buffer Lhs { A_T a[]; };
layout(std430, binding = 3) readonly buffer Rhs { A_T b[]; };
layout(std430, binding = 4) buffer Part { A_C part[]; };
#define READ_PART 32u
#define WRITE_PART 64u
#ifdef A_V4
// The same buffers seen as vectors (descriptor aliasing).
layout(std430, binding = 1) writeonly buffer Out4 { A_V4 o4[]; };
layout(std430, binding = 2) readonly buffer Lhs4 { A_V4 a4[]; };
layout(std430, binding = 3) readonly buffer Rhs4 { A_V4 b4[]; };
#endif


#define BM 64
#define BN 64
#define BK 16
#define TM 4
#define TN 4

shared A_C sa[BK][BM];  // k-major, so the inner loop reads rows of the tile
shared A_C sb[BK][BN];

void main() {
  // p_words: m, n, k, then strides: lhs row, lhs col, rhs row, rhs col, then
  // the vector paths (LHS_VEC | RHS_VEC << 2 | OUT_VEC << 4) and the split-K pass.
  const uint M = p_words[0], N = p_words[1], K = p_words[2];
  const uint LHS_VEC = p_words[7] & 3u, RHS_VEC = (p_words[7] >> 2) & 3u;
  const bool OUT_VEC = ((p_words[7] >> 4) & 1u) != 0u;
  const uint PASS = p_words[7] & (READ_PART | WRITE_PART);
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
#ifdef A_V4
    if (LHS_VEC == 1u) {
      // Rows along k: 4 consecutive k of one row per vector (K % 4 == 0).
      for (uint e = t; e < BM * BK / 4; e += WG) {
        const uint r = e / (BK / 4), kk = (e % (BK / 4)) * 4, gr = row0 + r, gk = k0 + kk;
        A_V4 v = A_V4(0);
        if (gr < M && gk < K) v = a4[(off[1] + int(gr) * a_r + int(gk)) / 4];
        sa[kk][r] = A_LOAD(v.x);
        sa[kk + 1][r] = A_LOAD(v.y);
        sa[kk + 2][r] = A_LOAD(v.z);
        sa[kk + 3][r] = A_LOAD(v.w);
      }
    } else if (LHS_VEC == 2u) {
      // Columns along m (a transposed lhs): 4 consecutive rows per vector (M % 4 == 0).
      for (uint e = t; e < BM * BK / 4; e += WG) {
        const uint kk = e / (BM / 4), r = (e % (BM / 4)) * 4, gr = row0 + r, gk = k0 + kk;
        A_V4 v = A_V4(0);
        if (gr < M && gk < K) v = a4[(off[1] + int(gr) + int(gk) * a_c) / 4];
        sa[kk][r] = A_LOAD(v.x);
        sa[kk][r + 1] = A_LOAD(v.y);
        sa[kk][r + 2] = A_LOAD(v.z);
        sa[kk][r + 3] = A_LOAD(v.w);
      }
    } else
#endif
    {
      for (uint e = t; e < BM * BK; e += WG) {
        const uint r = e / BK, kk = e % BK, gr = row0 + r, gk = k0 + kk;
        sa[kk][r] = (gr < M && gk < K) ? A_LOAD(a[off[1] + int(gr) * a_r + int(gk) * a_c]) : A_C(0);
      }
    }
#ifdef A_V4
    if (RHS_VEC == 1u) {
      // Rows along n: 4 consecutive columns per vector (N % 4 == 0).
      for (uint e = t; e < BK * BN / 4; e += WG) {
        const uint kk = e / (BN / 4), c = (e % (BN / 4)) * 4, gk = k0 + kk, gc = col0 + c;
        A_V4 v = A_V4(0);
        if (gk < K && gc < N) v = b4[(off[2] + int(gk) * b_r + int(gc)) / 4];
        sb[kk][c] = A_LOAD(v.x);
        sb[kk][c + 1] = A_LOAD(v.y);
        sb[kk][c + 2] = A_LOAD(v.z);
        sb[kk][c + 3] = A_LOAD(v.w);
      }
    } else if (RHS_VEC == 2u) {
      // Columns along k (a transposed rhs): 4 consecutive k per vector (K % 4 == 0).
      for (uint e = t; e < BK * BN / 4; e += WG) {
        const uint c = e / (BK / 4), kk = (e % (BK / 4)) * 4, gk = k0 + kk, gc = col0 + c;
        A_V4 v = A_V4(0);
        if (gk < K && gc < N) v = b4[(off[2] + int(gk) + int(gc) * b_c) / 4];
        sb[kk][c] = A_LOAD(v.x);
        sb[kk + 1][c] = A_LOAD(v.y);
        sb[kk + 2][c] = A_LOAD(v.z);
        sb[kk + 3][c] = A_LOAD(v.w);
      }
    } else
#endif
    {
      for (uint e = t; e < BK * BN; e += WG) {
        const uint kk = e / BN, c = e % BN, gk = k0 + kk, gc = col0 + c;
        sb[kk][c] = (gk < K && gc < N) ? A_LOAD(b[off[2] + int(gk) * b_r + int(gc) * b_c]) : A_C(0);
      }
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
    if (PASS != 0u) {
      for (uint j = 0; j < TN; ++j) {
        const uint gc = col0 + tc * TN + j, at = (gl_WorkGroupID.z * M + gr) * N + gc;
        if (gc >= N) continue;
        if ((PASS & READ_PART) != 0u) acc[i][j] += part[at];
        if ((PASS & WRITE_PART) != 0u) part[at] = acc[i][j];
      }
      if ((PASS & WRITE_PART) != 0u) continue;
    }
#ifdef A_V4
    if (OUT_VEC) {
      const uint gc = col0 + tc * TN;  // TN == 4
      if (gc < N)
        o4[(off[0] + int(gr * N + gc)) / 4] =
            A_V4(A_STORE(acc[i][0]), A_STORE(acc[i][1]), A_STORE(acc[i][2]), A_STORE(acc[i][3]));
      continue;
    }
#endif
    for (uint j = 0; j < TN; ++j) {
      const uint gc = col0 + tc * TN + j;
      if (gc < N) o[off[0] + int(gr * N + gc)] = A_STORE(acc[i][j]);
    }
  }
}
