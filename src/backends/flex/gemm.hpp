// A plain strided matrix product for the dtypes oneDNN does not cover (f64,
// ints). Rows are independent, so callers parallelise over rows.
#pragma once

#include <algorithm>
#include <burn/dtype.hpp>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace burn::flex::dnn {

/// Accumulator type: double for f64, float for the halves, and for ints
/// uint64 so overflow wraps (two's complement) exactly as the element type
/// would, without signed-overflow undefined behaviour.
template <class T>
using gemm_acc_t = std::conditional_t<std::is_integral_v<T>, std::uint64_t, compute_t<T>>;

/// A strided 2-D operand: element (i, j) at ptr[i * rs + j * cs].
template <class T>
struct MatRef {
  const T* ptr;
  std::int64_t rs, cs;
};

/// c[i, :] = sum_p a[i, p] * b[p, :] for rows [row_begin, row_end) of an
/// m x k by k x n product; c is row-major with leading dimension ldc.
template <class T>
void gemm_rows(std::size_t row_begin, std::size_t row_end, std::size_t n, std::size_t k, MatRef<T> a, MatRef<T> b, T* c,
               std::int64_t ldc) {
  using Acc = gemm_acc_t<T>;
  std::vector<Acc> acc(n);
  for (std::size_t i = row_begin; i < row_end; ++i) {
    std::fill(acc.begin(), acc.end(), Acc(0));
    const T* arow = a.ptr + static_cast<std::int64_t>(i) * a.rs;
    for (std::size_t p = 0; p < k; ++p) {
      // Sign extension then unsigned wrap-around: int matmul wraps like the other int ops.
      const Acc av = static_cast<Acc>(
          compute_t<T>(arow[static_cast<std::int64_t>(p) * a.cs]));  // NOLINT(bugprone-signed-char-misuse)
      const T* brow = b.ptr + static_cast<std::int64_t>(p) * b.rs;
      if (b.cs == 1) {
        for (std::size_t j = 0; j < n; ++j) acc[j] += av * static_cast<Acc>(compute_t<T>(brow[j]));
      } else {
        for (std::size_t j = 0; j < n; ++j)
          acc[j] += av * static_cast<Acc>(compute_t<T>(brow[static_cast<std::int64_t>(j) * b.cs]));
      }
    }
    T* crow = c + static_cast<std::int64_t>(i) * ldc;
    for (std::size_t j = 0; j < n; ++j) crow[j] = convert_element<T>(static_cast<compute_t<T>>(acc[j]));
  }
}

}  // namespace burn::flex::dnn
