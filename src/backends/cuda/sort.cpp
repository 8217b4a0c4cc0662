// Stable sort along one dim on the CUDA device, by rank: one thread per
// element counts the elements of its line that sort before it (those that
// compare smaller, and equal ones at earlier positions) and writes the
// element and its position at that rank. Every thread writes one output
// element, no thread waits on another, and ties keep their order, so the
// result is flex's stable sort exactly. NaN sorts as the largest value (two
// NaNs are equal). The work is len² per line: right for the short lines
// models sort (top-k over classes, per-row orderings), slow for very long
// ones, where a merge sort with a scratch buffer is the step to come
// (docs/cuda.md).
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {
namespace {

std::string sort_source(DType d, DType index_dtype, bool descending) {
  KernelText text;
  const std::string T = KernelText::compute_type(d);
  const std::string storage = KernelText::storage_type(d);
  const std::string src = fmt::format("((const {}*)p.src)", storage);
  // before(a, b): a sorts strictly before b.
  std::string before;
  if (is_float(d)) before = descending ? "(a != a && b == b) || a > b" : "(a == a && b != b) || a < b";
  else before = descending ? "a > b" : "a < b";
  text.need("burn_sorts_before", fmt::format("__device__ __forceinline__ bool burn_sorts_before(const {0} a, const "
                                             "{0} b) {{ return {1}; }}\n",
                                             T, before));
  const std::string body = fmt::format(
      "    const unsigned long long line_len = p.len * p.inner;\n"
      "    const unsigned long long k = (i / p.inner) % p.len;\n"
      "    const unsigned long long base = (i / line_len) * line_len + i % p.inner;\n"
      "    const {0} v = {1};\n"
      "    unsigned long long rank = 0;\n"
      "    for (unsigned long long j = 0; j < p.len; ++j) {{\n"
      "      const {0} u = {2};\n"
      "      rank += (burn_sorts_before(u, v) || (j < k && !burn_sorts_before(v, u))) ? 1 : 0;\n"
      "    }}\n"
      "    (({3}*)p.values)[base + rank * p.inner] = (({3}*)p.src)[i];\n"
      "    (({4}*)p.indices)[base + rank * p.inner] = {5};\n",
      T, text.load(d, src + "[i]"), text.load(d, src + "[base + j * p.inner]"), raw_type(dtype_size(d)),
      KernelText::storage_type(index_dtype),
      text.store(index_dtype, fmt::format("({})k", KernelText::compute_type(index_dtype))));
  return grid_stride_kernel(descending ? "stable sort, descending" : "stable sort", text.helpers(),
                            "  unsigned long long len;\n"
                            "  unsigned long long inner;\n"
                            "  unsigned long long src;\n"
                            "  unsigned long long values;\n"
                            "  unsigned long long indices;\n",
                            body);
}

}  // namespace

std::vector<Launch> plan_sort(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs) {
  const auto* sort = std::get_if<ir::Sort>(&op);
  if (sort == nullptr) throw Error(ir::op_name(op), "not a sort (an internal error of the cuda backend)");
  const Operand& in = inputs[0];
  const Shape& shape = in.spec.shape;
  std::uint64_t inner = 1;
  for (std::size_t d = sort->dim + 1; d < shape.rank(); ++d) inner *= shape[d];
  if (shape.num_elements() == 0) return {};
  Launch l;
  l.source = sort_source(in.spec.dtype, outputs[1].spec.dtype, sort->descending);
  l.params = {shape.num_elements(), shape[sort->dim], inner, in.address, outputs[0].address, outputs[1].address};
  return {l};
}

}  // namespace burn::cuda
