// The parameter block of element-wise shaders: output element count, the
// (collapsed) output shape, and one element offset and stride set per operand
// (operand 0 is the output). Mirrors ElementwiseParams (params.hpp).
layout(std430, binding = 0) readonly buffer Params {
  uint p_n;
  uint p_rank;
  uint p_words[8];  // op-specific scalars as bit patterns
  uint p_shape[MAX_RANK];
  int p_offset[MAX_OPERANDS];
  int p_stride[MAX_OPERANDS * MAX_RANK];
};

// True when every operand is contiguous from its offset: no index arithmetic.
layout(constant_id = 1) const bool CONTIG = false;

// Element offsets of operands 0..count-1 for output element i.
void operand_offsets(uint i, uint count, out int off[MAX_OPERANDS]) {
  for (uint k = 0; k < MAX_OPERANDS; ++k) off[k] = p_offset[k] + (CONTIG ? int(i) : 0);
  if (CONTIG) return;
  for (int d = int(p_rank) - 1; d >= 0; --d) {
    const uint s = p_shape[d];
    const int c = int(i % s);
    i /= s;
    for (uint k = 0; k < count; ++k) off[k] += c * p_stride[k * MAX_RANK + d];
  }
}

float word_f32(uint w) { return uintBitsToFloat(p_words[w]); }
#ifdef NEED_FLOAT64
double word_f64(uint w) { return packDouble2x32(uvec2(p_words[w], p_words[w + 1])); }
#endif
#ifdef NEED_INT64
int64_t word_i64(uint w) { return int64_t(pack64(uvec2(p_words[w], p_words[w + 1]))); }
uint64_t word_u64(uint w) { return pack64(uvec2(p_words[w], p_words[w + 1])); }
#endif
