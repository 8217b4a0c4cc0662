#version 450
// One pass of the stable merge sort of long lines (after sort.comp sorted
// chunks): runs of `width` elements are merged pairwise. Each element finds
// its place by binary search in the other run: a left element goes after the
// right run's elements that sort strictly before it, a right element after
// the left run's elements that do not sort after it, so equal keys keep
// their order. Lines are contiguous (scratch buffers [lines, len]).
// p_words: 0 line length, 1 width, 2 total elements, 6 descending.
#include "common.glsl"
#include "elementwise.glsl"
#include "sort_order.glsl"
layout(local_size_x = WG) in;
layout(std430, binding = 1) writeonly buffer KeysOut { A_T ko[]; };
layout(std430, binding = 2) writeonly buffer PosOut { int po[]; };
layout(std430, binding = 3) readonly buffer KeysIn { A_T ki[]; };
layout(std430, binding = 4) readonly buffer PosIn { int pi[]; };
void main() {
  const uint i = flat_id();
  if (i >= p_words[2]) return;
  const uint len = p_words[0], width = p_words[1];
  const uint base = (i / len) * len, p = i % len;
  const uint run = p / width, start = (run & ~1u) * width;
  const A_C key = A_LOAD(ki[base + p]);
  uint dest = p;
  if ((run & 1u) == 0u) {
    uint lo = min(start + width, len), hi = min(start + 2u * width, len);
    const uint first = lo;
    while (lo < hi) {
      const uint mid = (lo + hi) >> 1;
      if (key_before(A_LOAD(ki[base + mid]), key)) lo = mid + 1u;
      else hi = mid;
    }
    dest = p + (lo - first);
  } else {
    uint lo = start, hi = start + width;
    while (lo < hi) {
      const uint mid = (lo + hi) >> 1;
      if (!key_before(key, A_LOAD(ki[base + mid]))) lo = mid + 1u;
      else hi = mid;
    }
    dest = p - width + (lo - start);
  }
  ko[base + dest] = ki[base + p];
  po[base + dest] = pi[base + p];
}
