#version 450
// One pass of the stable merge sort of long lines (after sort.comp sorted
// chunks): runs of `width` elements are merged pairwise, ITEMS outputs per
// thread. A thread's first output is d places into its pair of runs (A then
// B); a binary search along that diagonal finds how many of the first d come
// from A (the merge path), then the thread merges ITEMS elements in order.
// A's element goes first unless B's sorts strictly before it, so equal keys
// keep their order. Lines are contiguous (scratch buffers [lines, len]).
// p_words: 0 line length, 1 width, 2 threads (lines x segments), 4 segments
// per line (ceil(len / ITEMS)), 6 descending.
#include "common.glsl"
#include "elementwise.glsl"
#include "sort_order.glsl"
layout(local_size_x = WG) in;
layout(std430, binding = 1) writeonly buffer KeysOut { A_T ko[]; };
layout(std430, binding = 2) writeonly buffer PosOut { int po[]; };
layout(std430, binding = 3) readonly buffer KeysIn { A_T ki[]; };
layout(std430, binding = 4) readonly buffer PosIn { int pi[]; };
#define ITEMS 8u  // sort.cpp's kMergeItems; divides every pair of runs (>= 2 x 2048)

void main() {
  const uint tid = flat_id();
  if (tid >= p_words[2]) return;
  const uint len = p_words[0], width = p_words[1], segments = p_words[4];
  const uint base = (tid / segments) * len, p0 = (tid % segments) * ITEMS;
  const uint start = (p0 / (2u * width)) * (2u * width);
  const uint a0 = base + start, b0 = base + min(start + width, len);
  const uint na = b0 - a0, nb = base + min(start + 2u * width, len) - b0;
  const uint d = p0 - start;
  // The number i of A's elements among the pair's first d outputs: A[m]
  // is among them exactly when it goes before B[d - 1 - m].
  uint lo = d > nb ? d - nb : 0u, hi = min(d, na);
  while (lo < hi) {
    const uint m = (lo + hi) >> 1;
    if (!key_before(A_LOAD(ki[b0 + d - 1u - m]), A_LOAD(ki[a0 + m]))) lo = m + 1u;
    else hi = m;
  }
  uint i = lo, j = d - lo;
  const uint outputs = min(ITEMS, na + nb - d);
  for (uint k = 0; k < outputs; ++k) {
    const bool take_a = i < na && (j >= nb || !key_before(A_LOAD(ki[b0 + j]), A_LOAD(ki[a0 + i])));
    const uint from = take_a ? a0 + i : b0 + j;
    ko[base + p0 + k] = ki[from];
    po[base + p0 + k] = pi[from];
    if (take_a) ++i;
    else ++j;
  }
}
