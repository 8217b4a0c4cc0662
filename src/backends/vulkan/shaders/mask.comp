#version 450
// mask_where: out = mask ? source : x, with the operands (out, x, mask
// (bool), source) broadcast to the output; mask_fill passes its value as a
// one-element source. Elements move as raw bits of ELEM_BITS.
#include "common.glsl"
#include "elementwise.glsl"
#include "elem_bits.glsl"
layout(local_size_x = WG) in;
layout(std430, binding = 1) writeonly buffer Out { ELEM o[]; };
layout(std430, binding = 2) readonly buffer X { ELEM x[]; };
layout(std430, binding = 3) readonly buffer Mask { uint8_t m[]; };
layout(std430, binding = 4) readonly buffer Src { ELEM s[]; };
void main() {
  const uint i = flat_id();
  if (i >= p_n) return;
  int off[MAX_OPERANDS];
  operand_offsets(i, 4, off);
  // Branches, not ?:, so no 8/16-bit value is selected (that needs Int8/Int16).
  if (uint(m[off[2]]) != 0u) o[off[0]] = s[off[3]];
  else o[off[0]] = x[off[1]];
}
