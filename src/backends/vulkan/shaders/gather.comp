#version 450
// gather and select: out[o] = x[o with `dim` replaced by idx[o]]. Operands
// over the output's shape: out, idx (i32, already bounds-checked; select
// broadcasts its 1-D indices), x with the dim's stride zeroed. p_words[0]:
// x's stride along dim, p_words[1]: the dim's size (indices are clamped into
// it so a shader never reads outside the tensor).
#include "common.glsl"
#include "elementwise.glsl"
#include "elem_bits.glsl"
layout(local_size_x = WG) in;
layout(std430, binding = 1) writeonly buffer Out { ELEM o[]; };
layout(std430, binding = 2) readonly buffer Idx { int idx[]; };
layout(std430, binding = 3) readonly buffer X { ELEM x[]; };
void main() {
  const uint i = flat_id();
  if (i >= p_n) return;
  int off[MAX_OPERANDS];
  operand_offsets(i, 3, off);
  const int j = clamp(idx[off[1]], 0, int(p_words[1]) - 1);
  o[off[0]] = x[off[2] + j * int(p_words[0])];
}
