#version 450
// Convolution as an implicit GEMM, tiled like matmul.comp: a workgroup
// computes a 64x64 tile of C[M, N] = A[M, K] * B[K, N] for one group (z),
// staging 64x16 and 16x64 tiles in workgroup memory (B is the im2col matrix,
// formed while loading, never stored), each thread a 4x4 block in registers.
// MODE 0 conv:           A = weight [c_out/g, c_in/g * taps], B = im2col(x) [.., batch * out_vol]
// MODE 1 transposed:     A = weight seen as [c_out/g, c_in/g * taps], B = col2im taps of x
// MODE 2 weight grad:    A = grad [c_out/g, batch * out_vol], B = im2col(x)^T [.., c_in/g * taps]
// Inputs are contiguous; `in` is x's spatial extent, `out` the conv output's
// (for MODE 1 the transposed conv's output), `k` the kernel's.
#include "common.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint MODE = 0;
#define MAX_SP 6
layout(std430, binding = 0) readonly buffer Params {
  uint p_m, p_n, p_k;
  uint p_batch, p_c_in, p_c_out, p_cin_g, p_cout_g;
  uint p_nsp, p_in_vol, p_out_vol, p_k_vol, p_has_bias;
  uint p_unused[3];
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

  for (uint k0 = 0; k0 < K; k0 += BK) {
    for (uint e = t; e < BM * BK; e += WG) {
      const uint r = e / BK, kk = e % BK, gr = row0 + r, gk = k0 + kk;
      A_C v = A_C(0);
      if (gr < M && gk < K) {
        const uint co = g * p_cout_g + gr;
        if (MODE == 0u) {
          v = A_LOAD(w[co * K + gk]);
        } else if (MODE == 1u) {
          const uint ci = gk / p_k_vol, tap = gk % p_k_vol;
          v = A_LOAD(w[((g * p_cin_g + ci) * p_cout_g + gr) * p_k_vol + tap]);
        } else {
          const uint n = gk / p_out_vol, op = gk % p_out_vol;
          v = A_LOAD(w[(n * p_c_out + co) * p_out_vol + op]);
        }
      }
      sa[kk][r] = v;
    }
    for (uint e = t; e < BK * BN; e += WG) {
      const uint kk = e / BN, gk = k0 + kk;  // e % BN == bc
      A_C v = A_C(0);
      if (gcol < N && gk < K) {
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
        if (at >= 0) v = A_LOAD(x[(n * p_c_in + g * p_cin_g + ci) * p_in_vol + uint(at)]);
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
    const A_C b = (MODE != 2u && p_has_bias != 0u) ? A_LOAD(bias[co]) : A_C(0);
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
