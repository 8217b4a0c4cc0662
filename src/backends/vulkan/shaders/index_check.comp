#version 450
// Bounds check of an index tensor (slot I) against [0, p_words[0]): the
// row-major position of the first bad index lands in `first` (atomicMin; the
// host filled it with 0xffffffff), so the op can name it before running.
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
layout(std430, binding = 1) readonly buffer Idx { I_T idx[]; };
layout(std430, binding = 2) buffer First { uint first; };
void main() {
  const uint i = flat_id();
  if (i >= p_n) return;
  int off[MAX_OPERANDS];
  operand_offsets(i, 1, off);
  const I_C v = I_LOAD(idx[off[0]]);
#if defined(I_SIGNED)
  const bool bad = v < I_C(0) || v >= I_C(p_words[0]);
#else
  const bool bad = v >= I_C(p_words[0]);
#endif
  if (bad) atomicMin(first, i);
}
