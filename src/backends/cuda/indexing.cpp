// Gather, select, scatter and select-assign on the CUDA device. Indices of
// any int dtype are read as 64-bit; one outside [0, size) of the indexed
// dim sets the op's error bit (raised at the next sync) and is skipped.
//
// Gather and select read one element per output element: gather's index
// tensor has the output's shape, select's 1-D indices are read along `dim`
// only (index strides 0 elsewhere), so both are one kernel. Scatter and
// select-assign copy the tensor, then run one thread per line along `dim`,
// in index order, as flex does: duplicate indices give what a serial loop
// gives (the last write wins, or every value is added) and no two threads
// write the same element.
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {
namespace {

void push_all(std::vector<std::uint64_t>& w, std::span<const std::int64_t> values) {
  for (std::int64_t v : values) w.push_back(static_cast<std::uint64_t>(v));
}

/// out[pos] = t[pos with `dim` replaced by idx[pos · idx_strides]] over the
/// output's shape (rank >= 1).
Launch gather_kernel(const Operand& t, const Operand& idx, const Operand& out, std::size_t dim,
                     std::span<const std::int64_t> idx_strides, std::uint64_t error_word, DeviceErrorBit error) {
  const std::size_t rank = out.spec.shape.rank();
  const char* type = raw_type(dtype_size(t.spec.dtype));
  const std::string fields = fmt::format(
      "  unsigned long long shape[{0}];\n  long long t_stride[{0}];\n  long long idx_stride[{0}];\n"
      "  unsigned long long t;\n  unsigned long long idx;\n  unsigned long long out;\n"
      "  unsigned long long bound;\n  unsigned int* error;\n",
      rank);
  const std::string body = fmt::format(
      "    long long to = 0, io = 0;\n"
      "    unsigned long long rest = i;\n"
      "#pragma unroll\n"
      "    for (int d = {0} - 1; d >= 0; --d) {{\n"
      "      const long long c = (long long)(rest % p.shape[d]);\n"
      "      rest /= p.shape[d];\n"
      "      if (d != {1}) to += c * p.t_stride[d];\n"
      "      io += c * p.idx_stride[d];\n"
      "    }}\n"
      "    const long long ix = (long long)((const {2}*)p.idx)[io];\n"
      "    if ((unsigned long long)ix >= p.bound) {{ atomicOr(p.error, {3}u); continue; }}\n"
      "    (({4}*)p.out)[i] = ((const {4}*)p.t)[to + ix * p.t_stride[{1}]];\n",
      rank, dim, KernelText::storage_type(idx.spec.dtype), static_cast<unsigned>(error), type);
  Launch l;
  l.source = grid_stride_kernel("gather", "", fields, body);
  auto& w = l.params;
  w.push_back(out.spec.shape.num_elements());
  for (std::size_t d = 0; d < rank; ++d) w.push_back(out.spec.shape[d]);
  push_all(w, row_major_strides(t.spec.shape));
  push_all(w, idx_strides);
  w.insert(w.end(), {t.address, idx.address, out.address, t.spec.shape[dim], error_word});
  return l;
}

/// For every line along `dim` of `loop` (the index/values shape):
/// out[line, idx[line, k]] (+)= values[line, k], k in order.
Launch scatter_kernel(const Operand& out, const Operand& idx, std::span<const std::int64_t> idx_strides,
                      const Operand& values, const Shape& loop, std::size_t dim, bool add, std::uint64_t error_word,
                      DeviceErrorBit error) {
  const std::size_t rank = loop.rank();
  const DType d = out.spec.dtype;
  KernelText text;
  const std::string element = fmt::format("(({}*)p.out)[oo + ix * p.out_stride[{}]]", text.storage_type(d), dim);
  const std::string value = fmt::format("((const {}*)p.values)[vo + k * p.val_stride[{}]]", text.storage_type(d), dim);
  std::string write;
  if (!add) {
    write = fmt::format("{} = {};", element, value);
  } else if (is_float(d)) {
    write = fmt::format("{} = {};", element,
                        text.store(d, fmt::format("{} + {}", text.load(d, element), text.load(d, value))));
  } else if (d == DType::Bool) {
    write = fmt::format("{} = (unsigned char)({} || {});", element, text.load(d, element), text.load(d, value));
  } else {
    const char* twin = KernelText::wrapping_type(d);
    write = fmt::format("{} = {};", element,
                        text.store(d, fmt::format("({})(({}){} + ({}){})", text.compute_type(d), twin,
                                                  text.load(d, element), twin, text.load(d, value))));
  }
  const std::string fields = fmt::format(
      "  unsigned long long shape[{0}];\n  long long out_stride[{0}];\n  long long idx_stride[{0}];\n"
      "  long long val_stride[{0}];\n  unsigned long long out;\n  unsigned long long idx;\n"
      "  unsigned long long values;\n  unsigned long long len;\n  unsigned long long bound;\n"
      "  unsigned int* error;\n",
      rank);
  // Items are lines: the loop's shape with `dim` taken out.
  const std::string body = fmt::format(
      "    long long oo = 0, io = 0, vo = 0;\n"
      "    unsigned long long rest = i;\n"
      "#pragma unroll\n"
      "    for (int d = {0} - 1; d >= 0; --d) {{\n"
      "      if (d == {1}) continue;\n"
      "      const long long c = (long long)(rest % p.shape[d]);\n"
      "      rest /= p.shape[d];\n"
      "      oo += c * p.out_stride[d];\n"
      "      io += c * p.idx_stride[d];\n"
      "      vo += c * p.val_stride[d];\n"
      "    }}\n"
      "    for (unsigned long long k = 0; k < p.len; ++k) {{\n"
      "      const long long ix = (long long)((const {2}*)p.idx)[io + (long long)k * p.idx_stride[{1}]];\n"
      "      if ((unsigned long long)ix >= p.bound) {{ atomicOr(p.error, {3}u); continue; }}\n"
      "      {4}\n"
      "    }}\n",
      rank, dim, KernelText::storage_type(idx.spec.dtype), static_cast<unsigned>(error), write);
  Launch l;
  l.source = grid_stride_kernel(add ? "scatter add" : "scatter", text.helpers(), fields, body);
  auto& w = l.params;
  const std::uint64_t len = loop[dim];
  w.push_back(len == 0 ? 0 : loop.num_elements() / len);
  for (std::size_t k = 0; k < rank; ++k) w.push_back(loop[k]);
  push_all(w, row_major_strides(out.spec.shape));
  push_all(w, idx_strides);
  push_all(w, row_major_strides(values.spec.shape));
  w.insert(w.end(), {out.address, idx.address, values.address, len, out.spec.shape[dim], error_word});
  return l;
}

/// Strides reading 1-D indices along `dim` of a rank-`rank` loop.
std::vector<std::int64_t> along(std::size_t rank, std::size_t dim) {
  std::vector<std::int64_t> s(rank, 0);
  s[dim] = 1;
  return s;
}

}  // namespace

std::vector<Launch> plan_indexing(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs,
                                  std::uint64_t error_word) {
  const Operand& t = inputs[0];
  const Operand& idx = inputs[1];
  const Operand& out = outputs[0];
  std::vector<Launch> launches;
  const auto add = [&](Launch l) {
    if (l.items() != 0) launches.push_back(std::move(l));
  };
  if (const auto* g = std::get_if<ir::Gather>(&op)) {
    add(gather_kernel(t, idx, out, g->dim, row_major_strides(idx.spec.shape), error_word, kErrorGatherIndex));
  } else if (const auto* s = std::get_if<ir::Select>(&op)) {
    add(gather_kernel(t, idx, out, s->dim, along(out.spec.shape.rank(), s->dim), error_word, kErrorSelectIndex));
  } else {
    // A copy of the tensor, then the values written into it.
    const auto strides = row_major_strides(t.spec.shape);
    add(strided_copy(dtype_size(t.spec.dtype), t.spec.shape, out.address, 0, strides, t.address, 0, strides));
    const Operand& values = inputs[2];
    if (const auto* sc = std::get_if<ir::Scatter>(&op))
      add(scatter_kernel(out, idx, row_major_strides(idx.spec.shape), values, idx.spec.shape, sc->dim,
                         sc->reduce == ir::IndexReduce::Add, error_word, kErrorScatterIndex));
    else if (const auto* sa = std::get_if<ir::SelectAssign>(&op))
      add(scatter_kernel(out, idx, along(values.spec.shape.rank(), sa->dim), values, values.spec.shape, sa->dim,
                         sa->reduce == ir::IndexReduce::Add, error_word, kErrorSelectAssignIndex));
    else throw Error(ir::op_name(op), "not an indexing op (an internal error of the cuda backend)");
  }
  return launches;
}

}  // namespace burn::cuda
