// Helpers shared by the ndarray module kernels (matmul, conv, pools,
// interpolation): reading any strided input into a dense row-major vector of
// the compute type, writing a dense vector back as a fresh output, and
// walking multi-indices. Keeping the kernels' cores on plain vectors means
// only these small read/write helpers are instantiated per dtype.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "backends/ndarray/kernels.hpp"

namespace burn::ndarray::detail {

/// The elements of a strided view of storage type T, row-major, as `To`.
template <class To, class T>
std::vector<To> read_as(const host::CpuTensor& t) {
  std::vector<To> v(t.num_elements());
  const T* src = reinterpret_cast<const T*>(t.buffer ? t.buffer->data() : nullptr);
  host::for_each_offset(t.shape, t.strides, t.offset, [&](std::size_t i, std::int64_t off) {
    // Modular for signed -> unsigned, sign extension included.
    if constexpr (std::is_integral_v<To>) v[i] = static_cast<To>(src[off]);  // NOLINT(bugprone-signed-char-misuse)
    else v[i] = convert_element<To>(src[off]);
  });
  return v;
}

/// A float input's elements, row-major, in double.
inline std::vector<double> read_doubles(const backend::Input& in) {
  const auto& t = host::as_cpu(in.primitive);
  return visit_float_dtype("read_doubles", t.dtype, [&]<class T>() { return read_as<double, T>(t); });
}

/// A fresh row-major float output holding `values` (rounded to its dtype).
inline host::CpuTensorPtr write_doubles(const Context& ctx, const ir::TensorSpec& spec,
                                        const std::vector<double>& values) {
  auto out = ctx.output(spec);
  visit_float_dtype("write_doubles", spec.dtype, [&]<class T>() {
    T* dst = out->data<T>();
    for (std::size_t i = 0; i < values.size(); ++i) dst[i] = convert_element<T>(values[i]);
  });
  return out;
}

/// Advances a row-major multi-index over `shape`; false after the last one.
inline bool next_index(std::vector<std::size_t>& idx, const std::vector<std::size_t>& shape) {
  for (std::size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

/// Product of the dims from `first` on (1 for none).
inline std::size_t volume(const std::vector<std::size_t>& shape, std::size_t first = 0) {
  std::size_t n = 1;
  for (std::size_t i = first; i < shape.size(); ++i) n *= shape[i];
  return n;
}

/// Every multi-index of `shape` in row-major order (for small shapes such as
/// kernels; empty when a dim is 0).
inline std::vector<std::vector<std::size_t>> all_indices(const std::vector<std::size_t>& shape) {
  std::vector<std::vector<std::size_t>> out;
  if (volume(shape) == 0) return out;
  std::vector<std::size_t> idx(shape.size(), 0);
  do out.push_back(idx);
  while (next_index(idx, shape));
  return out;
}

}  // namespace burn::ndarray::detail
