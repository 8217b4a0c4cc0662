#version 450
// Pooling over the spatial dims of a contiguous [N, C, *spatial] input, one
// thread per output element (planes x output positions), with PyTorch's
// window rules (MODE 0 max, 1 average, 2 adaptive average; the averages
// exist for float slots only). Max: the window is clipped to the input, its
// first position is the initial index, and a value wins when greater than
// the current maximum or NaN; positions are flat indices into the plane.
//
// Long windows: lavapipe ends a shader after 65,535 loop iterations in all
// (about nsp + 2 per window position here), so pool.cpp walks a window
// longer than one pass's share in several dispatches. Each covers window
// positions [p_w_begin, p_w_begin + p_w_count) in row-major order, and
// p_flags says how they meet: READ_PART starts from the running value (and
// index) the passes before left in pv / pidx, WRITE_PART leaves them there
// instead of finishing. The positions are visited in the same order as in
// one pass, so ties and NaNs resolve the same way.
#include "common.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint MODE = 0;
#define MAX_SP 6
layout(std430, binding = 0) readonly buffer Params {
  uint p_total;    // planes * out_vol
  uint p_nsp;      // spatial dims
  uint p_in_vol;
  uint p_out_vol;
  uint p_flags;    // 1: write indices, 2: count_include_pad, READ_PART, WRITE_PART
  uint p_x_off;    // the input's element offset (a contiguous view may start inside its buffer)
  uint p_w_begin;  // this pass's first window position
  uint p_w_count;  // and how many it visits at most
  uint p_in[MAX_SP];
  uint p_out[MAX_SP];
  uint p_kernel[MAX_SP];
  uint p_stride[MAX_SP];
  uint p_padding[MAX_SP];
  uint p_dilation[MAX_SP];
};
layout(std430, binding = 1) writeonly buffer Out { A_T o[]; };
layout(std430, binding = 2) writeonly buffer Idx { int oi[]; };
layout(std430, binding = 3) readonly buffer In { A_T a[]; };
layout(std430, binding = 4) buffer PartV { A_C pv[]; };
layout(std430, binding = 5) buffer PartI { uint pidx[]; };
#define READ_PART 4u
#define WRITE_PART 8u

void main() {
  const uint i = flat_id();
  if (i >= p_total) return;
  const uint plane = i / p_out_vol;
  uint rest = i % p_out_vol;
  const uint n = p_nsp;
  // The window per dim: positions lo, lo + step, ... below hi.
  int lo[MAX_SP], hi[MAX_SP], step[MAX_SP];
  uint q[MAX_SP];
  for (int d = int(n) - 1; d >= 0; --d) {
    q[d] = rest % p_out[d];
    rest /= p_out[d];
  }
  uint padded = 1u, real = 1u;
  for (uint d = 0; d < n; ++d) {
    const int in_d = int(p_in[d]);
    if (MODE == 0u) {
      const int dil = int(p_dilation[d]);
      int start = int(q[d] * p_stride[d]) - int(p_padding[d]);
      const int end = min(start + int(p_kernel[d] - 1u) * dil + 1, in_d);
      if (start < 0) start += ((-start + dil - 1) / dil) * dil;  // the first tap inside
      lo[d] = start;
      hi[d] = max(end, start);
      step[d] = dil;
    } else if (MODE == 1u) {
      const int pad = int(p_padding[d]);
      int start = int(q[d] * p_stride[d]) - pad;
      int end = min(start + int(p_kernel[d]), in_d + pad);
      padded *= uint(end - start);
      start = max(start, 0);
      end = min(end, in_d);
      real *= end > start ? uint(end - start) : 0u;
      lo[d] = start;
      hi[d] = max(end, start);
      step[d] = 1;
    } else {
      const uint out_d = p_out[d];
      lo[d] = int(q[d] * p_in[d] / out_d);
      hi[d] = int(((q[d] + 1u) * p_in[d] + out_d - 1u) / out_d);
      real *= uint(hi[d] - lo[d]);
      step[d] = 1;
    }
  }
  // Window positions per dim, and in all.
  uint count = 1u, cnt[MAX_SP];
  uint first = 0u;
  for (uint d = 0; d < n; ++d) {
    first = first * p_in[d] + uint(lo[d]);
    cnt[d] = lo[d] < hi[d] ? uint(hi[d] - lo[d] + step[d] - 1) / uint(step[d]) : 0u;
    count *= cnt[d];
  }
  const uint base = plane * p_in_vol;
#if defined(A_FLOAT)
  A_C best = MODE == 0u ? -A_C(uintBitsToFloat(0x7f800000u)) : A_C(0);
#else
  A_C best = A_C(A_MIN);
#endif
  uint best_at = first;
  if ((p_flags & READ_PART) != 0u) {
    best = pv[i];
    if (MODE == 0u) best_at = pidx[i];
  }
  const uint w0 = p_w_begin, w1 = min(count, w0 + p_w_count);
  if (w0 < w1) {
    // Position w0 of the window, then on in row-major order.
    int pos[MAX_SP];
    uint rem = w0;
    for (int d = int(n) - 1; d >= 0; --d) {
      pos[d] = lo[d] + int(rem % cnt[d]) * step[d];
      rem /= cnt[d];
    }
    for (uint w = w0; w < w1; ++w) {
      uint at = 0u;
      for (uint d = 0; d < n; ++d) at = at * p_in[d] + uint(pos[d]);
      const A_C v = A_LOAD(a[p_x_off + base + at]);
      if (MODE == 0u) {
#if defined(A_FLOAT)
        const bool wins = v > best || isnan(v);
#else
        const bool wins = v > best;
#endif
        if (wins) {
          best = v;
          best_at = at;
        }
      } else {
        best += v;
      }
      bool more = false;
      for (int d = int(n) - 1; d >= 0 && !more; --d) {
        pos[d] += step[d];
        more = pos[d] < hi[d];
        if (!more) pos[d] = lo[d];
      }
    }
  }
  if ((p_flags & WRITE_PART) != 0u) {
    pv[i] = best;
    if (MODE == 0u) pidx[i] = best_at;
    return;
  }
  if (MODE == 0u) {
    o[i] = A_STORE(best);
    if ((p_flags & 1u) != 0u) oi[i] = int(best_at);
    return;
  }
  // Averages: PyTorch's divisor; a window without input elements gives 0.
  const uint divisor = real == 0u ? 0u : (MODE == 1u && (p_flags & 2u) != 0u) ? padded : real;
  o[i] = A_STORE(divisor == 0u ? A_C(0) : best / A_C(divisor));
}
