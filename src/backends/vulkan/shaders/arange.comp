#version 450
// Arange: start + i * step in 32-bit integers (the backend takes this path
// only when every value fits), converted like any int -> O cast.
#include "common.glsl"
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer Params { uint p_n; int p_start; int p_step; };
layout(std430, binding = 1) writeonly buffer Out { O_T o[]; };
void main() {
  const uint i = flat_id();
  if (i >= p_n) return;
  const int v = p_start + int(i) * p_step;
  o[i] = O_STORE(O_C(v));
}
