// The reductions as small accumulator types, each with
//   A init(); void add(A&, value, k); void merge(A& earlier, const A& later);
//   Out finish(const A&, n);
// and kFold, how the engine folds a contiguous line (see LineFold).
// `k` is the element's position along the reduced dim (for arg reductions).
// Float sums accumulate in the compute type (float for f32 and halves,
// double for f64) with pairwise summation, float products in double; int
// sums and products wrap.
#pragma once

#include <cstdint>
#include <limits>

#include "backends/flex/element.hpp"

namespace burn::flex {

/// How reduce_engine.hpp folds one contiguous line: a pairwise sum (float
/// sums), independent lanes that find the extreme value (max, min and their
/// positions; kMax and kArg say which), or add() element after element.
enum class LineFold { Pairwise, Extreme, Serial };

template <class T>
struct SumR {
  using In = T;
  using A = compute_t<T>;
  using Out = T;
  static constexpr LineFold kFold = std::is_floating_point_v<A> ? LineFold::Pairwise : LineFold::Serial;
  static A init() { return A(0); }
  static void add(A& a, A v, std::size_t) { a = flex::add(a, v); }
  static void merge(A& a, const A& b) { a = flex::add(a, b); }
  static Out finish(const A& a, std::size_t) { return store<T>(a); }
};

template <class T>
struct MeanR {
  using In = T;
  // Ints sum in 64 bits so small types do not wrap, then truncate toward zero.
  using A = std::conditional_t<is_float_v<T>, compute_t<T>,
                               std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;
  using Out = T;
  static constexpr LineFold kFold = std::is_floating_point_v<A> ? LineFold::Pairwise : LineFold::Serial;
  static A init() { return A(0); }
  static void add(A& a, compute_t<T> v, std::size_t) { a = flex::add(a, static_cast<A>(v)); }
  static void merge(A& a, const A& b) { a = flex::add(a, b); }
  static Out finish(const A& a, std::size_t n) {
    if constexpr (std::is_floating_point_v<A>) return store<T>(a / static_cast<A>(n));  // empty: 0/0 = NaN
    else return n ? static_cast<T>(a / static_cast<A>(n)) : T(0);
  }
};

template <class T>
struct ProdR {
  using In = T;
  // Float products run in double: partial products leave the f32 range long
  // before the result does.
  using A = std::conditional_t<is_float_v<T>, double, T>;
  using Out = T;
  static constexpr LineFold kFold = LineFold::Serial;
  static A init() { return A(1); }
  static void add(A& a, compute_t<T> v, std::size_t) { a = flex::mul(a, static_cast<A>(v)); }
  static void merge(A& a, const A& b) { a = flex::mul(a, b); }
  static Out finish(const A& a, std::size_t) {
    if constexpr (is_float_v<T>) return store<T>(static_cast<compute_t<T>>(a));
    else return a;
  }
};

/// Max or min; a NaN anywhere makes the result NaN.
template <class T, bool Max>
struct ExtremeR {
  using In = T;
  using A = compute_t<T>;
  using Out = T;
  static constexpr LineFold kFold = LineFold::Extreme;
  static constexpr bool kMax = Max, kArg = false;
  static A init() {
    if constexpr (std::is_floating_point_v<A>)
      return Max ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    else return Max ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
  }
  // A select, not a branch: the column path vectorises it over its tile.
  static void add(A& a, A v, std::size_t) { a = !is_nan(a) && (is_nan(v) || (Max ? v > a : v < a)) ? v : a; }
  static void merge(A& a, const A& b) { add(a, b, 0); }
  static Out finish(const A& a, std::size_t) { return store<T>(a); }
};

/// Position of the first max or min; the first NaN wins (as in PyTorch, so
/// the value at the index is what max/min return).
template <class T, bool Max>
struct ArgR {
  using In = T;
  struct A {
    compute_t<T> v{};
    std::int64_t k = 0;
    bool has = false;
  };
  using Out = std::int64_t;
  static constexpr LineFold kFold = LineFold::Extreme;
  static constexpr bool kMax = Max, kArg = true;
  static A init() { return {}; }
  static void add(A& a, compute_t<T> v, std::size_t k) {
    if (!a.has || (!is_nan(a.v) && (is_nan(v) || (Max ? v > a.v : v < a.v)))) {
      a.v = v;
      a.k = static_cast<std::int64_t>(k);
      a.has = true;
    }
  }
  // `later` covers later positions, so a tie keeps the earlier index.
  static void merge(A& a, const A& later) {
    if (later.has) add(a, later.v, static_cast<std::size_t>(later.k));
  }
  static Out finish(const A& a, std::size_t) { return a.k; }
};

/// Any (Or = true) or All: non-zero (and NaN) counts as true.
template <class T, bool Or>
struct LogicR {
  using In = T;
  using A = bool;
  using Out = bool;
  static constexpr LineFold kFold = LineFold::Serial;
  static A init() { return !Or; }
  static void add(A& a, compute_t<T> v, std::size_t) {
    const bool b = v != compute_t<T>(0);
    a = Or ? (a || b) : (a && b);
  }
  static void merge(A& a, const A& b) { a = Or ? (a || b) : (a && b); }
  static Out finish(const A& a, std::size_t) { return a; }
};

}  // namespace burn::flex
