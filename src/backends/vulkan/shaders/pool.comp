#version 450
// Pooling over the spatial dims of a contiguous [N, C, *spatial] input, one
// thread per output element (planes x output positions), with PyTorch's
// window rules (MODE 0 max, 1 average, 2 adaptive average; the averages
// exist for float slots only). Max: the window is clipped to the input, its
// first position is the initial index, and a value wins when greater than
// the current maximum or NaN; positions are flat indices into the plane.
#include "common.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint MODE = 0;
#define MAX_SP 6
layout(std430, binding = 0) readonly buffer Params {
  uint p_total;    // planes * out_vol
  uint p_nsp;      // spatial dims
  uint p_in_vol;
  uint p_out_vol;
  uint p_flags;    // 1: write indices, 2: count_include_pad
  uint p_x_off;    // the input's element offset (a contiguous view may start inside its buffer)
  uint p_unused[2];
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
  bool empty = false;
  uint first = 0u;
  for (uint d = 0; d < n; ++d) {
    first = first * p_in[d] + uint(lo[d]);
    empty = empty || lo[d] >= hi[d];
  }
  const uint base = plane * p_in_vol;
#if defined(A_FLOAT)
  A_C best = MODE == 0u ? -A_C(uintBitsToFloat(0x7f800000u)) : A_C(0);
#else
  A_C best = A_C(A_MIN);
#endif
  uint best_at = first;
  if (!empty) {
    int pos[MAX_SP];
    for (uint d = 0; d < n; ++d) pos[d] = lo[d];
    for (bool more = true; more;) {
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
      more = false;
      for (int d = int(n) - 1; d >= 0 && !more; --d) {
        pos[d] += step[d];
        more = pos[d] < hi[d];
        if (!more) pos[d] = lo[d];
      }
    }
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
