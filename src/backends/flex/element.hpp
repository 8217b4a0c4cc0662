// Element arithmetic shared by the flex kernels: dtype families, the compute
// type (float for the half types, the type itself otherwise), wrap-around
// integer arithmetic without undefined behaviour, and the generic row
// functions of elementwise loops (see strided.hpp).
#pragma once

#include <atomic>
#include <burn/dtype.hpp>
#include <burn/error.hpp>
#include <cstdint>
#include <type_traits>

namespace burn::flex {

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// Stored element -> compute type, and back (halves round to nearest even).
template <class T>
inline compute_t<T> load(T v) noexcept {
  if constexpr (is_half_v<T>) return static_cast<float>(v);
  else return v;
}
template <class T>
inline T store(compute_t<T> v) noexcept {
  if constexpr (is_half_v<T>) return T(v);
  else return v;
}

/// Unsigned type integer arithmetic wraps in: at least `unsigned` wide so
/// small types do not promote to (overflowing) signed int.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
inline T wrap_add(T a, T b) noexcept {
  return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
}
template <class T>
inline T wrap_sub(T a, T b) noexcept {
  return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
}
template <class T>
inline T wrap_mul(T a, T b) noexcept {
  return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
}
template <class T>
inline T wrap_neg(T a) noexcept {
  return static_cast<T>(wrap_t<T>(0) - static_cast<wrap_t<T>>(a));
}

/// + and * in a compute type: ints wrap, floats and bools as usual (bool + is or).
template <class C>
inline C add(C a, C b) noexcept {
  if constexpr (std::is_same_v<C, bool>) return a || b;
  else if constexpr (std::is_integral_v<C>) return wrap_add(a, b);
  else return a + b;
}
template <class C>
inline C mul(C a, C b) noexcept {
  if constexpr (std::is_same_v<C, bool>) return a && b;
  else if constexpr (std::is_integral_v<C>) return wrap_mul(a, b);
  else return a * b;
}
template <class C>
inline bool is_nan(C v) noexcept {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  else return false;
}

/// Where a row function reports a failure with a value to name in the
/// message (the first one recorded wins; rows run concurrently).
struct ErrorSlot {
  mutable std::atomic<bool> set{false};
  mutable std::atomic<std::int64_t> value{0};
  void record(std::int64_t v) const noexcept {
    bool expected = false;
    if (set.compare_exchange_strong(expected, true)) value.store(v);
  }
};

/// Hot leaf loops are compiled for AVX-512, AVX2 and baseline x86-64, and
/// the loader picks the best the CPU has (GCC's function multiversioning:
/// runtime ISA choice without a hand-written dispatch per kernel). Users:
/// the elementwise rows (unary, binary, clamp, cast, masks: here, unary.cpp,
/// cast.cpp, mask.cpp), the reduction line folds and column blocks
/// (line_folds.hpp, reduce_engine.hpp; softmax and layer norm are built from
/// these and the elementwise rows, eager or fused), the scans (scan.cpp) and
/// the gather and index-check rows (indexing.cpp). Eager elementwise kernels
/// are memory-bound and barely notice; fused groups, which chain rows over
/// cache-resident blocks, and the reductions and scans, are compute-bound
/// and do. Results do not depend on the ISA: without -ffast-math the
/// compiler keeps every float operation and its order (ISO C++ mode also
/// keeps it from contracting a * b + c into an FMA), so a clone only
/// vectorises what the source already computes independently (elements,
/// lanes). A marked function must not be inline; templates work.
/// ThreadSanitizer builds go without clones: GCC instruments the ifunc
/// resolvers that pick a clone, and those run while the dynamic loader
/// relocates the program, before the sanitizer's runtime exists. Unoptimised
/// builds (Debug, the asan preset) go without them too: nothing is
/// vectorised there, so the clones would be the same code compiled three times.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(BURN_NO_ROW_CLONES) && \
    !defined(__SANITIZE_THREAD__) && defined(__OPTIMIZE__)
#define BURN_FLEX_ROW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define BURN_FLEX_ROW_CLONES
#endif

/// Runs f(i) for i < n, prefetching `next` (a row of at least n elements
/// the caller reads next; null for none) a cache line per line of this row:
/// for a multi-pass row kernel (layer norm, softmax) whose later passes hit
/// L1, so that the next row's first pass does not wait on memory. Inlined
/// into the caller's clone. The prefetches go out 16 lines at a time ahead
/// of a loop over the same stretch, not one per line inside it: GCC unrolls
/// a 16-element inner loop whole and then leaves it scalar.
template <class T, class F>
[[gnu::always_inline]] inline void for_each_prefetching(const T* next, std::size_t n, F&& f) {
  constexpr std::size_t kLine = 64 / sizeof(T);
  constexpr std::size_t kStretch = 16 * kLine;
  for (std::size_t begin = 0; begin < n; begin += kStretch) {
    const std::size_t end = std::min(n, begin + kStretch);
    if (next != nullptr)
      for (std::size_t i = begin; i < end; i += kLine) __builtin_prefetch(next + i);
    for (std::size_t i = begin; i < end; ++i) f(i);
  }
}

/// Elementwise rows. `F(args...)` computes one element in the compute type;
/// the contiguous cases are separate loops the compiler can vectorise.
/// Unary: ptrs = {out R, in T}.
template <class T, class R, auto F>
BURN_FLEX_ROW_CLONES int unary_row(const void*, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  auto* o = reinterpret_cast<R*>(p[0]);
  const auto* a = reinterpret_cast<const T*>(p[1]);
  const auto len = static_cast<std::int64_t>(n);
  if (s[0] == 1 && s[1] == 1) {
    for (std::int64_t i = 0; i < len; ++i) o[i] = store<R>(F(load(a[i])));
  } else {
    for (std::int64_t i = 0; i < len; ++i) o[i * s[0]] = store<R>(F(load(a[i * s[1]])));
  }
  return 0;
}

/// Binary: ptrs = {out R, lhs T, rhs T}; F(a, b, err_slot) may record an
/// error and return a placeholder; the row then returns 1.
template <class T, class R, auto F>
BURN_FLEX_ROW_CLONES int binary_row(const void* ctx, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  const auto& err = *static_cast<const ErrorSlot*>(ctx);
  auto* o = reinterpret_cast<R*>(p[0]);
  const auto* a = reinterpret_cast<const T*>(p[1]);
  const auto* b = reinterpret_cast<const T*>(p[2]);
  const auto len = static_cast<std::int64_t>(n);
  if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
    for (std::int64_t i = 0; i < len; ++i) o[i] = store<R>(F(load(a[i]), load(b[i]), err));
  } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
    const auto bv = load(b[0]);
    for (std::int64_t i = 0; i < len; ++i) o[i] = store<R>(F(load(a[i]), bv, err));
  } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
    const auto av = load(a[0]);
    for (std::int64_t i = 0; i < len; ++i) o[i] = store<R>(F(av, load(b[i]), err));
  } else {
    for (std::int64_t i = 0; i < len; ++i) o[i * s[0]] = store<R>(F(load(a[i * s[1]]), load(b[i * s[2]]), err));
  }
  return err.set.load(std::memory_order_relaxed) ? 1 : 0;
}

/// Element types by width only, for kernels that move elements without
/// interpreting them (gather, select, masks).
template <class F>
decltype(auto) visit_width(DType d, F&& f) {
  switch (dtype_size(d)) {
    case 1: return f.template operator()<std::uint8_t>();
    case 2: return f.template operator()<std::uint16_t>();
    case 4: return f.template operator()<std::uint32_t>();
    default: return f.template operator()<std::uint64_t>();
  }
}

}  // namespace burn::flex
