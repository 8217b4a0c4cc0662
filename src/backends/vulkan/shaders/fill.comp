#version 450
// Full: writes an 8-byte pattern over 32-bit words (1-, 2- and 4-byte dtypes
// repeat their value inside the pattern), so one shader fills every dtype.
#include "common.glsl"
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer Params { uint p_n; uint p_pattern[2]; };
layout(std430, binding = 1) writeonly buffer Out { uint out_words[]; };
void main() {
  const uint i = flat_id();
  if (i < p_n) out_words[i] = p_pattern[i & 1u];
}
