// Which IR alternatives carry an enumerator, and how many enumerators each
// enum has, so the completeness test can demand one table entry per
// (alternative, enumerator) without a hand-written list that could go stale.
#pragma once

#include <burn/ir/op.hpp>

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

namespace burn::differential {

/// Specialised for the alternatives whose behaviour an enumerator selects.
template <class Alternative>
struct Enumerated : std::false_type {};

#define BURN_DIFF_ENUMERATED(Alt, Enum, member, ...)             \
  template <>                                                    \
  struct Enumerated<ir::Alt> : std::true_type {                  \
    using type = ir::Enum;                                       \
    static type get(const ir::Alt& a) { return a.member; }       \
    static ir::Alt make(type e) { return ir::Alt{__VA_ARGS__}; } \
  };
BURN_DIFF_ENUMERATED(Unary, UnaryOp, op, e)
BURN_DIFF_ENUMERATED(Binary, BinaryOp, op, e, std::nullopt)
BURN_DIFF_ENUMERATED(Reduce, ReduceOp, op, e, 0)
BURN_DIFF_ENUMERATED(Cumulative, CumulativeOp, op, e, 0)
BURN_DIFF_ENUMERATED(Scatter, IndexReduce, reduce, 0, e)
BURN_DIFF_ENUMERATED(SelectAssign, IndexReduce, reduce, 0, e)
BURN_DIFF_ENUMERATED(Interpolate, InterpolateMode, mode, {}, e, false)
BURN_DIFF_ENUMERATED(Random, DistributionKind, dist, {}, e, 0.0, 1.0, DType::F32)
#undef BURN_DIFF_ENUMERATED

/// Whether V names an enumerator: the compiler spells a named value as
/// `Enum::Name` and any other value as `(Enum)N` in the function signature.
template <auto V>
constexpr bool is_named_enumerator() {
  constexpr std::string_view f = __PRETTY_FUNCTION__;
  return f[f.rfind("= ") + 2] != '(';
}

template <class E, std::size_t... I>
constexpr std::size_t count_named(std::index_sequence<I...>) {
  return (std::size_t{is_named_enumerator<static_cast<E>(I)>()} + ...);
}
template <class E, std::size_t... I>
constexpr std::size_t last_named_plus_one(std::index_sequence<I...>) {
  std::size_t last = 0;
  ((last = is_named_enumerator<static_cast<E>(I)>() ? I + 1 : last), ...);
  return last;
}

/// The number of enumerators of an IR enum (values 0 .. count-1).
template <class E>
constexpr std::size_t enumerator_count() {
  static_assert(std::is_same_v<std::underlying_type_t<E>, std::uint8_t>,
                "the IR enums are uint8_t; widen the scan below if that changes");
  constexpr auto all = std::make_index_sequence<256>{};
  constexpr std::size_t n = count_named<E>(all);
  static_assert(n == last_named_plus_one<E>(all), "IR enumerators must be numbered 0, 1, 2, ... without gaps");
  return n;
}

// The detection must work on this compiler, or the completeness test would pass vacuously.
static_assert(is_named_enumerator<ir::UnaryOp::Neg>() && !is_named_enumerator<static_cast<ir::UnaryOp>(250)>(),
              "enumerator detection does not work with this compiler");
static_assert(enumerator_count<ir::ReduceOp>() == static_cast<std::size_t>(ir::ReduceOp::All) + 1);

}  // namespace burn::differential
