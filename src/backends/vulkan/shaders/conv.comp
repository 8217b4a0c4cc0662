#version 450
// Convolution as an implicit GEMM, tiled like matmul.comp: a workgroup
// computes a 64x64 tile of C[M, N] = A[M, K] * B[K, N] for one group (z),
// staging 64x16 and 16x64 tiles in workgroup memory (B is the im2col matrix,
// formed while loading, never stored), each thread a 4x4 block in registers.
// MODE 0 conv:           A = weight [c_out/g, c_in/g * taps], B = im2col(x) [.., batch * out_vol]
// MODE 1 transposed:     A = weight seen as [c_out/g, c_in/g * taps], B = col2im taps of x
// MODE 2 weight grad:    A = grad [c_out/g, batch * out_vol], B = im2col(x)^T [.., c_in/g * taps]
// Inputs are contiguous from their element offsets (p_x_off, p_w_off,
// p_bias_off); `in` is x's spatial extent, `out` the conv output's (for MODE 1
// the transposed conv's output), `k` the kernel's.
//
// Vectorised loads (A_V4: 32- and 64-bit types), chosen by the host where the
// sizes keep every 4-wide vector inside one row and aligned, and passed in
// p_vec (A_VEC | B_VEC << 2 | OUT_VEC << 3: uniform branches, so each dtype
// compiles one pipeline per MODE):
// A_VEC 1: A's rows along k (MODE 0 weight rows; MODE 2 gradient planes);
//       2: A's columns along m (MODE 1 with a 1-tap kernel).
// B_VEC:   a pointwise conv (1-tap kernel, stride 1, no padding, so B is x
//          itself: rows along n in MODE 0/1, columns along k in MODE 2).
// OUT_VEC: the output written 4 columns at a time.
//
// Split K: lavapipe ends a shader after 65,535 loop iterations in all (about
// 50 per BK step with 2-D taps, up to 87 with 3-D: the im2col decode loops
// over the spatial dims), so conv.cpp runs a long K (MODE 2: batch x output
// positions) as several dispatches over ranges [p_k_begin, p_k_end) of it.
// p_pass says how they meet through `part`, a scratch of the output's shape
// in the compute type: READ_PART adds the sums of the ranges before,
// WRITE_PART stores the sum there instead of the output (the bias is added
// once, at the end).
#include "common.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint MODE = 0;
#define MAX_SP 6
layout(std430, binding = 0) readonly buffer Params {
  uint p_m, p_n, p_k;
  uint p_batch, p_c_in, p_c_out, p_cin_g, p_cout_g;
  uint p_nsp, p_in_vol, p_out_vol, p_k_vol, p_has_bias;
  uint p_x_off, p_w_off, p_bias_off;
  uint p_vec;
  uint p_k_begin, p_k_end, p_pass;
  uint p_in[MAX_SP];
  uint p_out[MAX_SP];
  uint p_kext[MAX_SP];
  uint p_stride[MAX_SP];
  uint p_padding[MAX_SP];
  uint p_dilation[MAX_SP];
};
layout(std430, binding = 1) writeonly buffer Out { A_T o[]; };
layout(std430, binding = 2) readonly buffer X { A_T x[]; };
layout(std430, binding = 3) readonly buffer W { A_T w[]; };  // MODE 2: the output gradient
layout(std430, binding = 4) readonly buffer Bias { A_T bias[]; };
layout(std430, binding = 5) buffer Part { A_C part[]; };
#define READ_PART 1u
#define WRITE_PART 2u
#ifdef A_V4
layout(std430, binding = 1) writeonly buffer Out4 { A_V4 o4[]; };
layout(std430, binding = 2) readonly buffer X4 { A_V4 x4[]; };
layout(std430, binding = 3) readonly buffer W4 { A_V4 w4[]; };
#endif

#define BM 64
#define BN 64
#define BK 16
#define TM 4
#define TN 4

shared A_C sa[BK][BM];
shared A_C sb[BK][BN];

// Row-major multi-index of `at` over `ext`.
void unflatten(uint at, uint ext[MAX_SP], out uint idx[MAX_SP]) {
  for (int d = int(p_nsp) - 1; d >= 0; --d) {
    idx[d] = at % ext[d];
    at /= ext[d];
  }
}

// The flat offset in x's plane that output position `o` reads through tap
// `t` (conv and weight grad), or -1 in the padding.
int conv_tap(uint o[MAX_SP], uint t[MAX_SP]) {
  int at = 0;
  for (uint d = 0; d < p_nsp; ++d) {
    const int pos = int(o[d] * p_stride[d] + t[d] * p_dilation[d]) - int(p_padding[d]);
    if (pos < 0 || pos >= int(p_in[d])) return -1;
    at = at * int(p_in[d]) + pos;
  }
  return at;
}

// The flat offset of the input position that reaches output position `y`
// through tap `t` in a transposed conv, or -1 when none does.
int transposed_tap(uint y[MAX_SP], uint t[MAX_SP]) {
  int at = 0;
  for (uint d = 0; d < p_nsp; ++d) {
    const int q = int(y[d] + p_padding[d]) - int(t[d] * p_dilation[d]);
    const int s = int(p_stride[d]);
    if (q < 0 || q % s != 0 || q / s >= int(p_in[d])) return -1;
    at = at * int(p_in[d]) + q / s;
  }
  return at;
}

void main() {
  const uint M = p_m, N = p_n, K = p_k;
  const uint A_VEC = p_vec & 3u;
  const bool B_VEC = (p_vec & 4u) != 0u, OUT_VEC = (p_vec & 8u) != 0u;
  const uint g = gl_WorkGroupID.z;
  const uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  const uint t = gl_LocalInvocationID.x;
  const uint tr = t / (BN / TN), tc = t % (BN / TN);

  // This thread always loads column `bc` of the B tile: decode it once.
  const uint bc = t % BN, gcol = col0 + bc;
  uint cpos[MAX_SP];  // MODE 0/1: output position; MODE 2: kernel tap
  uint cfirst = 0u;   // MODE 0/1: batch entry; MODE 2: input channel in the group
  if (gcol < N) {
    if (MODE == 2u) {
      cfirst = gcol / p_k_vol;
      unflatten(gcol % p_k_vol, p_kext, cpos);
    } else {
      cfirst = gcol / p_out_vol;
      unflatten(gcol % p_out_vol, p_out, cpos);
    }
  }

  A_C acc[TM][TN];
  for (uint i = 0; i < TM; ++i)
    for (uint j = 0; j < TN; ++j) acc[i][j] = A_C(0);

  const uint KE = p_k_end;  // this dispatch's range of K ends here
  for (uint k0 = p_k_begin; k0 < KE; k0 += BK) {
#ifdef A_V4
    if (A_VEC == 1u) {
      for (uint e = t; e < BM * BK / 4; e += WG) {
        const uint r = e / (BK / 4), kk = (e % (BK / 4)) * 4, gr = row0 + r, gk = k0 + kk;
        A_V4 v = A_V4(0);
        if (gr < M && gk < KE) {
          const uint co = g * p_cout_g + gr;
          const uint at = MODE == 0u ? co * K + gk : ((gk / p_out_vol) * p_c_out + co) * p_out_vol + gk % p_out_vol;
          v = w4[(p_w_off + at) / 4];
        }
        sa[kk][r] = A_LOAD(v.x);
        sa[kk + 1][r] = A_LOAD(v.y);
        sa[kk + 2][r] = A_LOAD(v.z);
        sa[kk + 3][r] = A_LOAD(v.w);
      }
    } else if (A_VEC == 2u) {
      for (uint e = t; e < BM * BK / 4; e += WG) {
        const uint kk = e / (BM / 4), r = (e % (BM / 4)) * 4, gr = row0 + r, gk = k0 + kk;
        A_V4 v = A_V4(0);
        if (gr < M && gk < KE) v = w4[(p_w_off + (g * p_cin_g + gk) * p_cout_g + gr) / 4];
        sa[kk][r] = A_LOAD(v.x);
        sa[kk][r + 1] = A_LOAD(v.y);
        sa[kk][r + 2] = A_LOAD(v.z);
        sa[kk][r + 3] = A_LOAD(v.w);
      }
    } else
#endif
    for (uint e = t; e < BM * BK; e += WG) {
      const uint r = e / BK, kk = e % BK, gr = row0 + r, gk = k0 + kk;
      A_C v = A_C(0);
      if (gr < M && gk < KE) {
        const uint co = g * p_cout_g + gr;
        if (MODE == 0u) {
          v = A_LOAD(w[p_w_off + co * K + gk]);
        } else if (MODE == 1u) {
          const uint ci = gk / p_k_vol, tap = gk % p_k_vol;
          v = A_LOAD(w[p_w_off + ((g * p_cin_g + ci) * p_cout_g + gr) * p_k_vol + tap]);
        } else {
          const uint n = gk / p_out_vol, op = gk % p_out_vol;
          v = A_LOAD(w[p_w_off + (n * p_c_out + co) * p_out_vol + op]);
        }
      }
      sa[kk][r] = v;
    }
#ifdef A_V4
    if (B_VEC && MODE != 2u) {
      // Pointwise: B[ci, (n, p)] = x[n, g * cin_g + ci, p], 4 positions of one image per vector.
      for (uint e = t; e < BK * BN / 4; e += WG) {
        const uint kk = e / (BN / 4), c = (e % (BN / 4)) * 4, gk = k0 + kk, gc = col0 + c;
        A_V4 v = A_V4(0);
        if (gk < KE && gc < N)
          v = x4[(p_x_off + ((gc / p_out_vol) * p_c_in + g * p_cin_g + gk) * p_in_vol + gc % p_out_vol) / 4];
        sb[kk][c] = A_LOAD(v.x);
        sb[kk][c + 1] = A_LOAD(v.y);
        sb[kk][c + 2] = A_LOAD(v.z);
        sb[kk][c + 3] = A_LOAD(v.w);
      }
    } else if (B_VEC) {
      // Pointwise weight grad: B[(n, p), ci] = x[n, g * cin_g + ci, p], 4 positions per vector.
      for (uint e = t; e < BK * BN / 4; e += WG) {
        const uint c = e / (BK / 4), kk = (e % (BK / 4)) * 4, gk = k0 + kk, gc = col0 + c;
        A_V4 v = A_V4(0);
        if (gk < KE && gc < N)
          v = x4[(p_x_off + ((gk / p_out_vol) * p_c_in + g * p_cin_g + gc) * p_in_vol + gk % p_out_vol) / 4];
        sb[kk][c] = A_LOAD(v.x);
        sb[kk + 1][c] = A_LOAD(v.y);
        sb[kk + 2][c] = A_LOAD(v.z);
        sb[kk + 3][c] = A_LOAD(v.w);
      }
    } else
#endif
    for (uint e = t; e < BK * BN; e += WG) {
      const uint kk = e / BN, gk = k0 + kk;  // e % BN == bc
      A_C v = A_C(0);
      if (gcol < N && gk < KE) {
        uint tap[MAX_SP];
        int at;
        uint n, ci;
        if (MODE == 2u) {
          uint op[MAX_SP];
          n = gk / p_out_vol;
          ci = cfirst;
          unflatten(gk % p_out_vol, p_out, op);
          at = conv_tap(op, cpos);
        } else {
          n = cfirst;
          ci = gk / p_k_vol;
          unflatten(gk % p_k_vol, p_kext, tap);
          at = MODE == 0u ? conv_tap(cpos, tap) : transposed_tap(cpos, tap);
        }
        if (at >= 0) v = A_LOAD(x[p_x_off + (n * p_c_in + g * p_cin_g + ci) * p_in_vol + uint(at)]);
      }
      sb[kk][bc] = v;
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
    const uint co = g * p_cout_g + gr;
    if (p_pass != 0u) {
      for (uint j = 0; j < TN; ++j) {
        const uint gc = col0 + tc * TN + j;
        if (gc >= N) continue;
        const uint at = MODE == 2u ? co * N + gc : ((gc / p_out_vol) * p_c_out + co) * p_out_vol + gc % p_out_vol;
        if ((p_pass & READ_PART) != 0u) acc[i][j] += part[at];
        if ((p_pass & WRITE_PART) != 0u) part[at] = acc[i][j];
      }
      if ((p_pass & WRITE_PART) != 0u) continue;
    }
    const A_C b = (MODE != 2u && p_has_bias != 0u) ? A_LOAD(bias[p_bias_off + co]) : A_C(0);
#ifdef A_V4
    if (OUT_VEC) {
      // Four columns of one row (and, in MODE 0/1, of one image).
      const uint gc = col0 + tc * TN;
      if (gc >= N) continue;
      const uint at = MODE == 2u ? co * N + gc : ((gc / p_out_vol) * p_c_out + co) * p_out_vol + gc % p_out_vol;
      o4[at / 4] = A_V4(A_STORE(acc[i][0] + b), A_STORE(acc[i][1] + b), A_STORE(acc[i][2] + b),
                        A_STORE(acc[i][3] + b));
      continue;
    }
#endif
    for (uint j = 0; j < TN; ++j) {
      const uint gc = col0 + tc * TN + j;
      if (gc >= N) continue;
      if (MODE == 2u) {
        o[co * N + gc] = A_STORE(acc[i][j]);
      } else {
        const uint n = gc / p_out_vol, op = gc % p_out_vol;
        o[(n * p_c_out + co) * p_out_vol + op] = A_STORE(acc[i][j] + b);
      }
    }
  }
}
