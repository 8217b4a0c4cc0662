// ELEM: an element of ELEM_BITS bits moved as raw bits, so one variant per
// width serves every dtype.
#if ELEM_BITS == 8
#define ELEM uint8_t
#elif ELEM_BITS == 16
#define ELEM uint16_t
#elif ELEM_BITS == 32
#define ELEM uint
#else
#define ELEM uvec2  // 64-bit elements without needing shaderInt64
#endif
