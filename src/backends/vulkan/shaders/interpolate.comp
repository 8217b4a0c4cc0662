#version 450
// 2-D resize of a contiguous [N, C, H, W] input, one thread per output
// element, with PyTorch's source-coordinate rules (MODE 0 nearest, 1
// bilinear, 2 bicubic with A = -0.75 and clamped taps). Source coordinates
// are exact fractions num / den computed in integers, so the taps chosen do
// not depend on float rounding; only the weights are floats.
#include "common.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint MODE = 0;
layout(std430, binding = 0) readonly buffer Params {
  uint p_total;
  uint p_h_in, p_w_in, p_h_out, p_w_out;
  uint p_align;  // align_corners
  uint p_x_off;  // the input's element offset
};
layout(std430, binding = 1) writeonly buffer Out { A_T o[]; };
layout(std430, binding = 2) readonly buffer In { A_T a[]; };

// floor(num / den) for den > 0.
int floor_div(int num, int den) { return num >= 0 ? num / den : -((-num + den - 1) / den); }

// The source coordinate of `dst` along an axis as floor and fraction.
void source(uint dst, uint in_n, uint out_n, bool cubic, out int base, out A_C frac) {
  int num, den;
  if (p_align != 0u) {
    num = out_n > 1u ? int(dst * (in_n - 1u)) : 0;
    den = out_n > 1u ? int(out_n - 1u) : 1;
  } else {
    // (dst + 0.5) * in / out - 0.5 = ((2 dst + 1) in - out) / (2 out)
    num = int((2u * dst + 1u) * in_n) - int(out_n);
    den = int(2u * out_n);
    if (!cubic && num < 0) num = 0;  // bilinear clamps the left border
  }
  base = floor_div(num, den);
  frac = A_C(num - base * den) / A_C(den);
}

A_C at(uint plane, int h, int w) { return A_LOAD(a[p_x_off + plane * p_h_in * p_w_in + uint(h) * p_w_in + uint(w)]); }

// Keys' cubic convolution weights for the taps at t + 1, t, 1 - t, 2 - t.
void cubic_weights(A_C t, out A_C w[4]) {
  const A_C A = A_C(-0.75);
  const A_C x0 = t + A_C(1), x1 = t, x2 = A_C(1) - t, x3 = A_C(2) - t;
  w[0] = ((A * x0 - A_C(5) * A) * x0 + A_C(8) * A) * x0 - A_C(4) * A;
  w[1] = ((A + A_C(2)) * x1 - (A + A_C(3))) * x1 * x1 + A_C(1);
  w[2] = ((A + A_C(2)) * x2 - (A + A_C(3))) * x2 * x2 + A_C(1);
  w[3] = ((A * x3 - A_C(5) * A) * x3 + A_C(8) * A) * x3 - A_C(4) * A;
}

void main() {
  const uint i = flat_id();
  if (i >= p_total) return;
  const uint ow = i % p_w_out, oh = (i / p_w_out) % p_h_out, plane = i / (p_w_out * p_h_out);
  const int hmax = int(p_h_in) - 1, wmax = int(p_w_in) - 1;
  A_C v = A_C(0);
  if (MODE == 0u) {
    v = at(plane, min(int(oh * p_h_in / p_h_out), hmax), min(int(ow * p_w_in / p_w_out), wmax));
  } else if (MODE == 1u) {
    int h0, w0;
    A_C fh, fw;
    source(oh, p_h_in, p_h_out, false, h0, fh);
    source(ow, p_w_in, p_w_out, false, w0, fw);
    // Past the last row the tap is clamped and the fraction measured from it.
    if (h0 > hmax) { fh += A_C(h0 - hmax); h0 = hmax; }
    if (w0 > wmax) { fw += A_C(w0 - wmax); w0 = wmax; }
    const int h1 = min(h0 + 1, hmax), w1 = min(w0 + 1, wmax);
    v = (A_C(1) - fh) * ((A_C(1) - fw) * at(plane, h0, w0) + fw * at(plane, h0, w1)) +
        fh * ((A_C(1) - fw) * at(plane, h1, w0) + fw * at(plane, h1, w1));
  } else {
    int h0, w0;
    A_C fh, fw, wh[4], ww[4];
    source(oh, p_h_in, p_h_out, true, h0, fh);
    source(ow, p_w_in, p_w_out, true, w0, fw);
    cubic_weights(fh, wh);
    cubic_weights(fw, ww);
    for (int r = 0; r < 4; ++r) {
      const int h = clamp(h0 - 1 + r, 0, hmax);
      A_C row = A_C(0);
      for (int c = 0; c < 4; ++c) row += ww[c] * at(plane, h, clamp(w0 - 1 + c, 0, wmax));
      v += wh[r] * row;
    }
  }
  o[i] = A_STORE(v);
}
