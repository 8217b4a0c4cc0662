// The reduction engine, shared by the reduce_*.cpp files (split so the
// many instantiations compile in parallel). The input is viewed as
// [outer, n, inner]: with inner == 1 each output reduces one strided line;
// otherwise whole rows of `inner` elements are accumulated at once (the
// cache-friendly order, vectorisable over inner).
//
// Long lines are cut into fixed-size chunks whose partial results merge in
// a fixed tree order, so one big reduction uses every thread and the result
// does not depend on the thread count.
#pragma once

#include <algorithm>
#include <burn/ir/op.hpp>
#include <memory>

#include "backends/flex/line_folds.hpp"
#include "backends/flex/lines.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::flex {

/// Sum, Prod, Mean into y (reduce_sum.cpp).
void reduce_sum_like(ir::ReduceOp op, const Lines& v, const host::CpuTensor& y);
/// Max, Min into y; ArgMax, ArgMin into `indices` (i64); Any, All of a Bool
/// input into y (reduce_extreme.cpp).
void reduce_select_like(ir::ReduceOp op, DType dtype, const Lines& v, const host::CpuTensor& y, std::int64_t* indices);

namespace reduce_engine {

constexpr std::size_t kChunk = 1 << 14;  // elements of a line per task
constexpr std::size_t kColChunk = 512;   // rows per task on the column path
constexpr std::size_t kTile = 64;        // inner elements accumulated together
constexpr std::size_t kBlock = 128;      // rows summed before merging (accuracy)

// Merges p[0], p[stride], ... p[(n-1)*stride] in a fixed tree order.
template <class Rd>
Acc<Rd> merge_tree(const Acc<Rd>* p, std::size_t n, std::size_t stride) {
  if (n == 1) return p[0];
  const std::size_t h = n / 2;
  Acc<Rd> a = merge_tree<Rd>(p, h, stride);
  Rd::merge(a, merge_tree<Rd>(p + h * stride, n - h, stride));
  return a;
}

template <class Rd>
void reduce_rows(const Lines& v, typename Rd::Out* out) {
  const auto* base = reinterpret_cast<const In<Rd>*>(v.base);
  const std::size_t chunks = (v.n + kChunk - 1) / kChunk;
  const auto line = [&](std::size_t o) { return base + static_cast<std::int64_t>(o) * v.outer_stride; };
  if (chunks <= 1) {
    parallel_for(
        v.outer,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t o = b; o < e; ++o) out[o] = Rd::finish(run_line<Rd>(line(o), v.stride, 0, v.n), v.n);
        },
        std::max<std::size_t>(1, kGrainSize / v.n));
    return;
  }
  // Not a std::vector: vector<bool> packs bits, which threads cannot write apart.
  const auto part = std::make_unique<Acc<Rd>[]>(v.outer * chunks);
  parallel_for(
      v.outer * chunks,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t t = b; t < e; ++t) {
          const std::size_t k0 = (t % chunks) * kChunk;
          part[t] = run_line<Rd>(line(t / chunks) + static_cast<std::int64_t>(k0) * v.stride, v.stride, k0,
                                 std::min(kChunk, v.n - k0));
        }
      },
      std::max<std::size_t>(1, kGrainSize / kChunk));
  for (std::size_t o = 0; o < v.outer; ++o) out[o] = Rd::finish(merge_tree<Rd>(&part[o * chunks], chunks, 1), v.n);
}

// Accumulates rows [r0, r0 + rn) of inner elements [j0, j0 + jn) into acc,
// each element's rows in order (the loops over j vectorise).
template <class Rd>
BURN_FLEX_ROW_CLONES void column_block(const Lines& v, std::size_t o, std::size_t j0, std::size_t jn, std::size_t r0,
                                       std::size_t rn, Acc<Rd>* acc) {
  const auto* base = reinterpret_cast<const In<Rd>*>(v.base) + static_cast<std::int64_t>(o) * v.outer_stride +
                     static_cast<std::int64_t>(j0) * v.inner_stride;
  const std::int64_t si = v.inner_stride;
  for (std::size_t j = 0; j < jn; ++j) acc[j] = Rd::init();
  const std::size_t block = Rd::kFold == LineFold::Pairwise ? kBlock : rn;
  for (std::size_t rb = r0; rb < r0 + rn; rb += block) {
    Acc<Rd> blk[kTile];
    for (std::size_t j = 0; j < jn; ++j) blk[j] = Rd::init();
    for (std::size_t r = rb; r < std::min(r0 + rn, rb + block); ++r) {
      const auto* row = base + static_cast<std::int64_t>(r) * v.stride;
      if (si == 1)
        for (std::size_t j = 0; j < jn; ++j) Rd::add(blk[j], load(row[j]), r);
      else
        for (std::size_t j = 0; j < jn; ++j) Rd::add(blk[j], load(row[static_cast<std::int64_t>(j) * si]), r);
    }
    for (std::size_t j = 0; j < jn; ++j) Rd::merge(acc[j], blk[j]);
  }
}

template <class Rd>
void reduce_columns(const Lines& v, typename Rd::Out* out) {
  const std::size_t tiles = (v.inner + kTile - 1) / kTile;
  const std::size_t chunks = (v.n + kColChunk - 1) / kColChunk;
  const auto tile_len = [&](std::size_t tile) { return std::min(kTile, v.inner - tile * kTile); };
  const std::size_t grain = std::max<std::size_t>(1, kGrainSize / (std::min(v.n, kColChunk) * kTile));
  if (chunks <= 1) {
    parallel_for(
        v.outer * tiles,
        [&](std::size_t b, std::size_t e) {
          Acc<Rd> acc[kTile];
          for (std::size_t t = b; t < e; ++t) {
            const std::size_t o = t / tiles, j0 = (t % tiles) * kTile, jn = tile_len(t % tiles);
            column_block<Rd>(v, o, j0, jn, 0, v.n, acc);
            for (std::size_t j = 0; j < jn; ++j) out[o * v.inner + j0 + j] = Rd::finish(acc[j], v.n);
          }
        },
        grain);
    return;
  }
  // part[o][c][j]: chunk c's partial result of output (o, j).
  const auto part = std::make_unique<Acc<Rd>[]>(v.outer * chunks * v.inner);
  parallel_for(
      v.outer * chunks * tiles,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t t = b; t < e; ++t) {
          const std::size_t tile = t % tiles, c = (t / tiles) % chunks, o = t / (tiles * chunks);
          const std::size_t r0 = c * kColChunk;
          column_block<Rd>(v, o, tile * kTile, tile_len(tile), r0, std::min(kColChunk, v.n - r0),
                           &part[(o * chunks + c) * v.inner + tile * kTile]);
        }
      },
      grain);
  parallel_for(v.outer * v.inner, [&](std::size_t b, std::size_t e) {
    for (std::size_t t = b; t < e; ++t) {
      const std::size_t o = t / v.inner, j = t % v.inner;
      out[t] = Rd::finish(merge_tree<Rd>(&part[o * chunks * v.inner + j], chunks, v.inner), v.n);
    }
  });
}

template <class Rd>
void reduce(const Lines& v, typename Rd::Out* out) {
  if (v.outer * v.inner == 0) return;
  if (v.n == 0) {  // empty dim: the identity (Sum 0, Prod 1, Any false, All true, float Mean NaN)
    std::fill(out, out + v.outer * v.inner, Rd::finish(Rd::init(), 0));
    return;
  }
  if (v.inner == 1) reduce_rows<Rd>(v, out);
  else reduce_columns<Rd>(v, out);
}

}  // namespace reduce_engine
}  // namespace burn::flex
