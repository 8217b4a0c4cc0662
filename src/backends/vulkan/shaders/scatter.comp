#version 450
// scatter and select_assign, after the indices were stably sorted along the
// dim (sort.comp). For each target element t[o] (o over the values' shape
// with the dim widened to the tensor's): binary-search o's coordinate j along
// the dim in the sorted index line, then take the last matching value
// (Assign: the serial loop's last write) or add every match in index order
// (Add), so duplicates give the serial result, deterministically, with no
// atomics. Operands: t (read-write), the sorted line (keys and their original
// positions share strides), the values' line, and a coordinate operand whose
// only non-zero stride is 1 along the dim (its offset is j).
// p_words: 0 line length, 1 key stride, 2 values stride along the dim,
// 3 the first match this dispatch adds, 4 how many at most, 5 MEASURE.
// Long runs of one index (an embedding's padding token, a histogram) would
// loop past lavapipe's cap of 65,535 iterations per invocation, so Add runs
// as several dispatches over slices of the matches (indexing.cpp), each
// adding its slice to t in order; a first MEASURE dispatch finds the longest
// run (atomicMax into max_run) to size them.
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;  // ir::IndexReduce: 0 assign, 1 add
layout(std430, binding = 1) buffer T { A_T t[]; };
layout(std430, binding = 2) readonly buffer Keys { int keys[]; };
layout(std430, binding = 3) readonly buffer Pos { int pos[]; };
layout(std430, binding = 4) readonly buffer Vals { A_T v[]; };
layout(std430, binding = 5) buffer Runs { uint max_run; };
void main() {
  const uint i = flat_id();
  if (i >= p_n) return;
  int off[MAX_OPERANDS];
  operand_offsets(i, 4, off);
  const int j = off[3];
  const int len = int(p_words[0]), ks = int(p_words[1]), vs = int(p_words[2]);
  // First key >= j, then first key > j.
  int lo = 0, hi = len;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (keys[off[1] + mid * ks] < j) lo = mid + 1;
    else hi = mid;
  }
  int end = lo;
  hi = len;
  while (end < hi) {
    const int mid = (end + hi) >> 1;
    if (keys[off[1] + mid * ks] <= j) end = mid + 1;
    else hi = mid;
  }
  if (p_words[5] != 0u) {
    if (end > lo) atomicMax(max_run, uint(end - lo));
    return;
  }
  if (lo == end) return;
  if (OP == 0u) {
    t[off[0]] = v[off[2] + pos[off[1] + (end - 1) * ks] * vs];
    return;
  }
  const int first = lo + int(p_words[3]);
  if (first >= end) return;
  const int last = end - first > int(p_words[4]) ? first + int(p_words[4]) : end;
  A_C acc = A_LOAD(t[off[0]]);
  for (int k = first; k < last; ++k) {
    const A_C x = A_LOAD(v[off[2] + pos[off[1] + k * ks] * vs]);
#if defined(A_BOOL)
    acc = (acc != 0u || x != 0u) ? 1u : 0u;
#else
    acc += x;
#endif
  }
  t[off[0]] = A_STORE(acc);
}
