#version 450
// Strided copy of elements of ELEM_BITS bits (a dtype-free move of bytes):
// makes views contiguous, writes into views of outputs (cat, slice_assign).
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
#if ELEM_BITS == 8
#define ELEM uint8_t
#elif ELEM_BITS == 16
#define ELEM uint16_t
#elif ELEM_BITS == 32
#define ELEM uint
#else
#define ELEM uvec2  // 64-bit elements without needing shaderInt64
#endif
layout(std430, binding = 1) writeonly buffer Out { ELEM o[]; };
layout(std430, binding = 2) readonly buffer In { ELEM a[]; };
void main() {
  const uint i = flat_id();
  if (i >= p_n) return;
  int off[MAX_OPERANDS];
  operand_offsets(i, 2, off);
  o[off[0]] = a[off[1]];
}
