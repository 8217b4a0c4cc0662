// Reductions and inclusive scans along one dim on the CUDA device, on the
// [outer, len, inner] view of a row-major tensor: a reduction runs one
// thread per output element, folding its line in order, or, for long lines
// (folds_by_block), one block per output element merging its threads'
// partial folds in a fixed tree; a scan runs one thread per line. The folds
// are flex's (backends/flex/reducers.hpp and scan.cpp): float sums in the compute type, float products in double, f32
// running sums and products in double, integer sums and products wrapping,
// max/min and their positions with NaN winning (first NaN, first of equal
// values), any/all with NaN counting as true.
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {
namespace {

using ir::CumulativeOp;
using ir::ReduceOp;

struct Line {
  std::uint64_t outer = 1, len = 1, inner = 1;
};

Line line_of(const Shape& shape, std::size_t dim) {
  Line l;
  for (std::size_t d = 0; d < dim; ++d) l.outer *= shape[d];
  l.len = shape[dim];
  for (std::size_t d = dim + 1; d < shape.rank(); ++d) l.inner *= shape[d];
  return l;
}

/// A kernel over lines of the [outer, len, inner] view: `base` is item i's
/// first element. `per_block`: a block of threads per line.
std::string line_kernel(std::string_view what, const KernelText& text, std::string_view body, bool per_block = false) {
  const char* fields =
      "  unsigned long long len;\n"
      "  unsigned long long inner;\n"
      "  unsigned long long src;\n"
      "  unsigned long long dst;\n";
  const std::string full_body =
      "    const unsigned long long base = (i / p.inner) * p.len * p.inner + i % p.inner;\n" + std::string(body);
  return per_block ? block_stride_kernel(what, text.helpers(), fields, full_body)
                   : grid_stride_kernel(what, text.helpers(), fields, full_body);
}

/// `per_block`: a block per output element, each thread folding every
/// BURN_BLOCK-th element of the line before the block merges the partial
/// folds; else a thread per output element folding its line in order.
std::string reduce_body(ReduceOp op, DType in, DType out, KernelText& text, bool per_block) {
  const std::string src = fmt::format("(({}*)p.src)", text.storage_type(in));
  const std::string dst = fmt::format("(({}*)p.dst)", text.storage_type(out));
  const LineFold fold = line_fold(op, in, out, "a", "v", "k", "p.len");
  return fmt::format(
      "{0}"
      "    for (unsigned long long k = {1}; k < p.len; {2}) {{\n"
      "      const {3} v = {4};\n"
      "{5}"
      "    }}\n"
      "{6}"
      "    {7}{8}[i] = {9};\n",
      fold.declare, per_block ? "t" : "0", per_block ? "k += BURN_BLOCK" : "++k", text.compute_type(in),
      text.load(in, src + "[base + k * p.inner]"), fold.step, per_block ? block_fold(fold) : "",
      per_block ? "if (t == 0) " : "", dst, text.store(out, fold.result));
}

std::string scan_body(CumulativeOp op, DType d, KernelText& text) {
  const std::string T = text.compute_type(d);
  const std::string src = fmt::format("(({}*)p.src)", text.storage_type(d));
  const std::string dst = fmt::format("(({}*)p.dst)", text.storage_type(d));
  const bool flt = is_float(d);
  // f32 running sums and products in double; ints wrap in the unsigned twin.
  const std::string A = d == DType::F32 ? "double" : flt ? T : KernelText::wrapping_type(d);
  std::string next;
  switch (op) {
    case CumulativeOp::Sum: next = "a + v"; break;
    case CumulativeOp::Prod: next = "a * v"; break;
    case CumulativeOp::Max:
      next = flt ? "((a == a) && (v != v || v > a)) ? v : a" : fmt::format("(({0})v > ({0})a) ? v : a", T);
      break;
    case CumulativeOp::Min:
      next = flt ? "((a == a) && (v != v || v < a)) ? v : a" : fmt::format("(({0})v < ({0})a) ? v : a", T);
      break;
  }
  return fmt::format(
      "    {0} a = 0;\n"
      "    for (unsigned long long k = 0; k < p.len; ++k) {{\n"
      "      const unsigned long long at = base + k * p.inner;\n"
      "      const {0} v = ({0}){1};\n"
      "      a = k == 0 ? v : ({2});\n"
      "      {3}[at] = {4};\n"
      "    }}\n",
      A, text.load(d, src + "[at]"), next, dst, text.store(d, fmt::format("({})a", T)));
}

}  // namespace

std::vector<Launch> plan_reduce(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs) {
  const Operand& in = inputs[0];
  const Operand& out = outputs[0];
  KernelText text;
  Launch l;
  Line line;
  if (const auto* r = std::get_if<ir::Reduce>(&op)) {
    line = line_of(in.spec.shape, r->dim);
    l.per_block = folds_by_block(line.len, line.outer * line.inner, line.inner);
    const std::string body = reduce_body(r->op, in.spec.dtype, out.spec.dtype, text, l.per_block);
    l.source = line_kernel(fmt::format("reduce {}", ir::reduce_name(r->op)), text, body, l.per_block);
  } else if (const auto* c = std::get_if<ir::Cumulative>(&op)) {
    line = line_of(in.spec.shape, c->dim);
    const std::string body = scan_body(c->op, in.spec.dtype, text);
    l.source = line_kernel("inclusive scan", text, body);
  } else {
    throw Error(ir::op_name(op), "not supported by the cuda backend yet");
  }
  // One item per output element (reduce) or per line (scan): outer · inner.
  l.params = {line.outer * line.inner, line.len, line.inner, in.address, out.address};
  if (l.items() == 0) return {};
  return {l};
}

}  // namespace burn::cuda
