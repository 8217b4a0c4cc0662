// Included by every shader: the storage extensions, bf16 conversion, the flat
// invocation index of a 2-D dispatch, and the element-wise parameter block
// (layout mirrored by ElementwiseParams in backends/vulkan/params.hpp).
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#ifdef NEED_INT64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

#define WG 256
#define MAX_RANK 8
#define MAX_OPERANDS 4

// bf16 is stored as uint16_t: the high half of an f32, rounded to nearest even
// (NaN stays a quiet NaN), exactly as burn::bf16 on the host. Macros, not
// functions, so no 16-bit value ever lives outside a buffer (that would need
// the Int16 capability, which the storage features do not grant).
uint bf16_bits(float f) {
  uint u = floatBitsToUint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
  u += 0x7fffu + ((u >> 16) & 1u);
  return u >> 16;
}
#define bf16_load(v) uintBitsToFloat(uint(v) << 16)
#define bf16_store(v) uint16_t(bf16_bits(v))

// Dispatches are 2-D when one dimension cannot hold every workgroup.
uint flat_id() { return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * WG; }
