// Stable sort along one dim on the CUDA device, two ways by line length:
//
// - Short lines (up to kRankSortMaxLen), by rank: one thread per element
//   counts the elements of its line that sort before it (those that compare
//   smaller, and equal ones at earlier positions) and writes the element and
//   its position at that rank: one launch, len² work per line.
// - Longer lines, by a bitonic network in place on the outputs: a first
//   launch copies the values and numbers their positions, then each of the
//   network's log₂P·(log₂P + 1)/2 passes (P the line length rounded up to a
//   power of two) is a launch of one thread per compare-exchange pair. The
//   network is the variant whose comparators all point the same way (each
//   stage starts by comparing mirrored pairs), so the missing elements past
//   the line's end act as +∞ that never move and their comparisons are
//   skipped. Comparing (value, original position) pairs makes it stable.
//
// Either way ties keep their order and NaN sorts as the largest value (two
// NaNs are equal), so the result is flex's stable sort exactly.
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {
namespace {

/// Lines up to this long sort by rank; longer ones by the bitonic network,
/// whose log² passes cost less than len² compares from here on.
constexpr std::uint64_t kRankSortMaxLen = 64;

/// Adds burn_sorts_before(a, b): a sorts strictly before b.
void need_sorts_before(KernelText& text, DType d, bool descending) {
  std::string before;
  if (is_float(d)) before = descending ? "(a != a && b == b) || a > b" : "(a == a && b != b) || a < b";
  else before = descending ? "a > b" : "a < b";
  text.need("burn_sorts_before", fmt::format("__device__ __forceinline__ bool burn_sorts_before(const {0} a, const "
                                             "{0} b) {{ return {1}; }}\n",
                                             KernelText::compute_type(d), before));
}

std::string rank_sort_source(DType d, DType index_dtype, bool descending) {
  KernelText text;
  const std::string T = KernelText::compute_type(d);
  const std::string storage = KernelText::storage_type(d);
  const std::string src = fmt::format("((const {}*)p.src)", storage);
  need_sorts_before(text, d, descending);
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

/// The bitonic sort's first launch: values copied, positions numbered.
std::string bitonic_start_source(DType d, DType index_dtype) {
  KernelText text;
  const std::string body = fmt::format(
      "    (({0}*)p.values)[i] = ((const {0}*)p.src)[i];\n"
      "    (({1}*)p.indices)[i] = {2};\n",
      raw_type(dtype_size(d)), KernelText::storage_type(index_dtype),
      text.store(index_dtype, fmt::format("({})((i / p.inner) % p.len)", KernelText::compute_type(index_dtype))));
  return grid_stride_kernel("bitonic sort: start", text.helpers(),
                            "  unsigned long long len;\n"
                            "  unsigned long long inner;\n"
                            "  unsigned long long src;\n"
                            "  unsigned long long values;\n"
                            "  unsigned long long indices;\n",
                            body);
}

/// One pass of the network: item i is pair i % p.half of line i / p.half.
/// A mirror pass (p.mirror) compares positions r and block - 1 - r of each
/// block of p.block; a half pass r and r + p.block of each block of
/// 2·p.block. The pair's later position receives the element that sorts
/// after (by value, then by original position).
std::string bitonic_pass_source(DType d, DType index_dtype, bool descending) {
  KernelText text;
  need_sorts_before(text, d, descending);
  const std::string T = KernelText::compute_type(d);
  const std::string storage = KernelText::storage_type(d);
  const std::string raw = raw_type(dtype_size(d));
  const std::string I = KernelText::storage_type(index_dtype);
  const std::string body = fmt::format(
      "    const unsigned long long line = i / p.half;\n"
      "    const unsigned long long q = i % p.half;\n"
      "    const unsigned long long base = (line / p.inner) * p.len * p.inner + line % p.inner;\n"
      "    unsigned long long a, b;\n"
      "    if (p.mirror) {{\n"
      "      const unsigned long long half_block = p.block / 2, r = q % half_block;\n"
      "      a = (q / half_block) * p.block + r;\n"
      "      b = (q / half_block) * p.block + p.block - 1 - r;\n"
      "    }} else {{\n"
      "      a = (q / p.block) * 2 * p.block + q % p.block;\n"
      "      b = a + p.block;\n"
      "    }}\n"
      "    if (b < p.len) {{\n"
      "      const unsigned long long ea = base + a * p.inner, eb = base + b * p.inner;\n"
      "      const {0} va = {1}, vb = {2};\n"
      "      const {3} ia = (({3}*)p.indices)[ea], ib = (({3}*)p.indices)[eb];\n"
      "      if (burn_sorts_before(vb, va) || (!burn_sorts_before(va, vb) && ib < ia)) {{\n"
      "        const {4} ra = (({4}*)p.values)[ea];\n"
      "        (({4}*)p.values)[ea] = (({4}*)p.values)[eb];\n"
      "        (({4}*)p.values)[eb] = ra;\n"
      "        (({3}*)p.indices)[ea] = ib;\n"
      "        (({3}*)p.indices)[eb] = ia;\n"
      "      }}\n"
      "    }}\n",
      T, text.load(d, fmt::format("((const {}*)p.values)[ea]", storage)),
      text.load(d, fmt::format("((const {}*)p.values)[eb]", storage)), I, raw);
  return grid_stride_kernel(descending ? "bitonic sort pass, descending" : "bitonic sort pass", text.helpers(),
                            "  unsigned long long len;\n"
                            "  unsigned long long inner;\n"
                            "  unsigned long long half;\n"
                            "  unsigned long long values;\n"
                            "  unsigned long long indices;\n"
                            "  unsigned long long block;\n"
                            "  unsigned long long mirror;\n",
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
  const DType d = in.spec.dtype, index_dtype = outputs[1].spec.dtype;
  const std::uint64_t len = shape[sort->dim];
  const std::uint64_t values = outputs[0].address, indices = outputs[1].address;
  if (len <= kRankSortMaxLen) {
    Launch l;
    l.source = rank_sort_source(d, index_dtype, sort->descending);
    l.params = {shape.num_elements(), len, inner, in.address, values, indices};
    return {l};
  }
  std::vector<Launch> launches(1);
  launches[0].source = bitonic_start_source(d, index_dtype);
  launches[0].params = {shape.num_elements(), len, inner, in.address, values, indices};
  std::uint64_t padded = 1;
  while (padded < len) padded *= 2;
  const std::uint64_t lines = shape.num_elements() / len;
  const std::string pass = bitonic_pass_source(d, index_dtype, sort->descending);
  const auto add_pass = [&](std::uint64_t block, bool mirror) {
    Launch l;
    l.source = pass;
    l.params = {lines * (padded / 2), len, inner, padded / 2, values, indices, block, mirror ? 1u : 0u};
    launches.push_back(std::move(l));
  };
  for (std::uint64_t block = 2; block <= padded; block *= 2) {
    add_pass(block, true);
    for (std::uint64_t half = block / 4; half >= 1; half /= 2) add_pass(half, false);
  }
  return launches;
}

}  // namespace burn::cuda
