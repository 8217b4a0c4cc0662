// How the reduction engine (reduce_engine.hpp) folds one line of elements:
// run_line picks the fold named by the reducer's kFold. The leaf loops are
// compiled for AVX-512, AVX2 and baseline x86-64 (BURN_FLEX_ROW_CLONES);
// each computes exactly what a plain serial loop of the same shape computes,
// so results do not depend on the ISA.
#pragma once

#include <cstdint>

#include "backends/flex/reducers.hpp"

namespace burn::flex::reduce_engine {

template <class Rd>
using In = typename Rd::In;
template <class Rd>
using Acc = typename Rd::A;

// One level of lane_sum's tree: lanes[l] += lanes[l + Width].
template <std::size_t Width, class A>
inline void fold_lanes(A* lanes) {
  for (std::size_t l = 0; l < Width; ++l) lanes[l] += lanes[l + Width];
}

/// The plain sum's term: the element itself.
struct AsIs {
  template <class A>
  A operator()(A v) const {
    return v;
  }
};

/// The squared deviation from a mean, as a term of a pairwise sum: the
/// variance of the deviations (layer and batch norm), not E[x^2] - mean^2,
/// which cancels badly.
template <class C>
struct SquaredDeviation {
  C mean;
  C operator()(C v) const {
    const C d = v - mean;
    return d * d;
  }
};

// The leaf of the pairwise sum of term(x) (x in the accumulator's type): at
// most 256 elements into 32 independent lanes, then a fixed tree over the
// lanes. The lanes vectorise into several independent vector accumulators
// (one would be bound by the add latency).
template <class T, class A, class Term = AsIs>
BURN_FLEX_ROW_CLONES A lane_sum(const T* p, std::int64_t s, std::size_t n, Term term = {}) {
  constexpr std::size_t kLanes = 32;
  A lanes[kLanes];
  std::size_t k = 0;
  if (s == 1 && n >= kLanes) {
    // The first elements start the lanes (0 + x, as adding to zeroed lanes
    // gives), so that no loop zeroes them: GCC makes that a `rep stos`,
    // whose start-up, once per 256 elements, held a 64 MiB sum about 12 %
    // below the memory's speed.
    for (std::size_t l = 0; l < kLanes; ++l) lanes[l] = A(0) + term(static_cast<A>(load(p[l])));
    for (k = kLanes; k + kLanes <= n; k += kLanes)
      for (std::size_t l = 0; l < kLanes; ++l) lanes[l] += term(static_cast<A>(load(p[k + l])));
  } else {
    for (std::size_t l = 0; l < kLanes; ++l) lanes[l] = A(0);
  }
  for (; k < n; ++k) lanes[k % kLanes] += term(static_cast<A>(load(p[static_cast<std::int64_t>(k) * s])));
  // The tree, one fixed-length loop per level so each level vectorises (a
  // loop over the widths compiled to 31 scalar adds, a cost paid per 256
  // elements).
  fold_lanes<16>(lanes);
  fold_lanes<8>(lanes);
  fold_lanes<4>(lanes);
  fold_lanes<2>(lanes);
  fold_lanes<1>(lanes);
  return lanes[0];
}

// Pairwise sum of term(x): error grows with log n instead of n.
template <class T, class A, class Term = AsIs>
A pairwise_sum(const T* p, std::int64_t s, std::size_t n, Term term = {}) {
  if (n <= 256) return lane_sum<T, A>(p, s, n, term);
  const std::size_t h = n / 2;
  return pairwise_sum<T, A>(p, s, h, term) + pairwise_sum<T, A>(p + static_cast<std::int64_t>(h) * s, s, n - h, term);
}

// Rd::add over n elements of a line starting at position k0, in order.
template <class Rd>
BURN_FLEX_ROW_CLONES Acc<Rd> serial_fold(const In<Rd>* p, std::int64_t s, std::size_t k0, std::size_t n) {
  Acc<Rd> a = Rd::init();
  for (std::size_t k = 0; k < n; ++k) Rd::add(a, load(p[static_cast<std::int64_t>(k) * s]), k0 + k);
  return a;
}

// The largest (Max) or smallest element of a contiguous run, NaNs skipped,
// from 32 independent lanes (vector max/min instructions), and whether the
// run holds a NaN. Lanes see equal elements in another order than a serial
// scan, so the value is only the serial result where equal elements have
// equal bits: not for zeros (+0 == -0), and NaN is reported apart.
template <class T, bool Max>
BURN_FLEX_ROW_CLONES compute_t<T> lane_extreme(const T* p, std::size_t n, bool& nan) {
  using C = compute_t<T>;
  // NaN flags as wide as the values, so flags and values share vector lanes.
  using Flag = std::conditional_t<sizeof(C) == 8, std::uint64_t, std::uint32_t>;
  constexpr std::size_t kLanes = 32;
  const C start = ExtremeR<T, Max>::init();
  C lanes[kLanes];
  Flag seen[kLanes] = {};
  for (std::size_t l = 0; l < kLanes; ++l) lanes[l] = start;
  const auto take = [](C a, C v) { return (Max ? v > a : v < a) ? v : a; };
  std::size_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) {
      const C v = load(p[k + l]);
      lanes[l] = take(lanes[l], v);
      seen[l] |= is_nan(v);
    }
  for (; k < n; ++k) {
    const C v = load(p[k]);
    lanes[0] = take(lanes[0], v);
    seen[0] |= is_nan(v);
  }
  C best = start;
  Flag any = 0;
  for (std::size_t l = 0; l < kLanes; ++l) {
    best = take(best, lanes[l]);
    any |= seen[l];
  }
  nan = any != 0;
  return best;
}

// Max, Min, ArgMax, ArgMin over a contiguous run at position k0, bit for bit
// what serial_fold returns. A serial scan keeps the first NaN, else the
// first element equal to the extreme; lanes find the extreme value, and a
// second scan (stopping at the element) finds that first element where its
// bits or position are asked for: after a NaN, a zero, or for Arg.
template <class Rd>
Acc<Rd> extreme_fold(const In<Rd>* p, std::size_t k0, std::size_t n) {
  bool nan = false;
  const auto best = lane_extreme<In<Rd>, Rd::kMax>(p, n, nan);
  if constexpr (!Rd::kArg)
    if (!nan && (!std::is_floating_point_v<decltype(best)> || best != 0)) return best;
  std::size_t k = 0;
  if (nan)
    while (!is_nan(load(p[k]))) ++k;
  else
    while (load(p[k]) != best) ++k;
  // The element exists: a NaN set `nan`, and `best` is an element's value
  // (or the start value, which then every element equals).
  Acc<Rd> a = Rd::init();
  Rd::add(a, load(p[k]), k0 + k);
  return a;
}

// Reduces n >= 1 elements of a line starting at position k0.
template <class Rd>
Acc<Rd> run_line(const In<Rd>* p, std::int64_t s, std::size_t k0, std::size_t n) {
  if constexpr (Rd::kFold == LineFold::Pairwise) return pairwise_sum<In<Rd>, Acc<Rd>>(p, s, n);
  else if constexpr (Rd::kFold == LineFold::Extreme)
    return s == 1 ? extreme_fold<Rd>(p, k0, n) : serial_fold<Rd>(p, s, k0, n);
  else return serial_fold<Rd>(p, s, k0, n);
}

}  // namespace burn::flex::reduce_engine
