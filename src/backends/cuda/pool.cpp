// Max, average and adaptive average pooling over the spatial dims of
// [N, C, *spatial] on the CUDA device: one thread per output element,
// walking its window, with PyTorch's window rules as the reference backend
// (ndarray) has them: windows clipped to the input, a max pool's first
// position as the initial index and NaN winning, average divisors counting
// the padded or the real part of the window, adaptive windows
// [floor(i·in/out), ceil((i+1)·in/out)). Averages accumulate in double.
#include <limits>
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {
namespace {

enum class Kind : std::uint8_t { Max, Average, Adaptive };

struct Geometry {
  std::vector<std::uint64_t> kernel, stride, padding, dilation;
  bool count_include_pad = true;
  bool with_indices = false;
};

/// The kernel text: `s` spatial dims, nested loops over the window.
std::string pool_source(Kind kind, std::size_t s, DType d, DType index_dtype, bool with_indices) {
  KernelText text;
  const std::string T = KernelText::compute_type(d);
  const std::string storage = KernelText::storage_type(d);
  const std::string value = text.load(d, "((const " + storage + "*)p.src)[plane * p.in_vol + at]");
  // The window's size as the divisor needs it: its padded and real parts
  // (average) or its volume (adaptive), multiplied up dim by dim below.
  const char* divisor_counts = kind == Kind::Average    ? "    unsigned long long padded = 1, real = 1;\n"
                               : kind == Kind::Adaptive ? "    unsigned long long count = 1;\n"
                                                        : "";
  std::string body = fmt::format(
      "    const unsigned long long plane = i / p.out_vol;\n"
      "    unsigned long long rest = i % p.out_vol;\n"
      "    long long lo[{0}], hi[{0}];\n"
      "{1}",
      s, divisor_counts);
  // Per dim: the output coordinate and the window [lo, hi) it reads.
  body += fmt::format(
      "#pragma unroll\n"
      "    for (int d = {0} - 1; d >= 0; --d) {{\n"
      "      const long long o = (long long)(rest % p.out_extent[d]);\n"
      "      rest /= p.out_extent[d];\n",
      s);
  if (kind == Kind::Max) {
    body +=
        "      long long start = o * (long long)p.stride[d] - (long long)p.padding[d];\n"
        "      const long long reach = start + ((long long)p.kernel[d] - 1) * (long long)p.dilation[d] + 1;\n"
        "      const long long end = reach < (long long)p.in_extent[d] ? reach : (long long)p.in_extent[d];\n"
        "      while (start < 0) start += (long long)p.dilation[d];\n"
        "      lo[d] = start;\n"
        "      hi[d] = end > start ? end : start;\n";
  } else if (kind == Kind::Average) {
    body +=
        "      const long long in_d = (long long)p.in_extent[d], pad = (long long)p.padding[d];\n"
        "      long long start = o * (long long)p.stride[d] - pad;\n"
        "      long long end = start + (long long)p.kernel[d] < in_d + pad ? start + (long long)p.kernel[d] : in_d + "
        "pad;\n"
        "      padded *= (unsigned long long)(end - start);\n"
        "      start = start > 0 ? start : 0;\n"
        "      end = end < in_d ? end : in_d;\n"
        "      real *= end > start ? (unsigned long long)(end - start) : 0ull;\n"
        "      lo[d] = start;\n"
        "      hi[d] = end > start ? end : start;\n";
  } else {
    body +=
        "      const long long in_d = (long long)p.in_extent[d], out_d = (long long)p.out_extent[d];\n"
        "      lo[d] = o * in_d / out_d;\n"
        "      hi[d] = ((o + 1) * in_d + out_d - 1) / out_d;\n"
        "      count *= (unsigned long long)(hi[d] - lo[d]);\n";
  }
  body += "    }\n";
  // The window's positions: nested loops, innermost last; `at` is the flat
  // offset in the plane.
  std::string open, close;
  for (std::size_t d = 0; d < s; ++d) {
    const std::string step = kind == Kind::Max ? fmt::format("(long long)p.dilation[{}]", d) : "1";
    open += fmt::format("    for (long long x{0} = lo[{0}]; x{0} < hi[{0}]; x{0} += {1}) {{\n", d, step);
    close += "    }\n";
  }
  std::string at = "0";
  for (std::size_t d = 0; d < s; ++d) at = fmt::format("({}) * (long long)p.in_extent[{}] + x{}", at, d, d);
  const std::string dst = "((" + storage + "*)p.dst)[i]";
  if (kind == Kind::Max) {
    std::string first = "0";
    for (std::size_t d = 0; d < s; ++d) first = fmt::format("({}) * (long long)p.in_extent[{}] + lo[{}]", first, d, d);
    const bool flt = is_float(d);
    const std::string lowest =
        flt ? (d == DType::F64 ? "-__longlong_as_double(0x7ff0000000000000ll)" : "-__uint_as_float(0x7f800000u)")
            : fmt::format("({})({})", T,
                          d == DType::I64   ? "-9223372036854775807ll - 1"
                          : d == DType::I32 ? "-2147483647 - 1"
                          : d == DType::I16 ? "-32768"
                          : d == DType::I8  ? "-128"
                                            : "0");
    // The position is tracked only when the indices are asked for.
    body += fmt::format("    {} best = {};\n", T, lowest);
    if (with_indices) body += fmt::format("    long long best_at = {};\n", first);
    body += open;
    body += fmt::format("      const long long at = {};\n      const {} v = {};\n", at, T, value);
    const std::string take = with_indices ? "{ best = v; best_at = at; }" : "best = v;";
    body += fmt::format("      if ({}) {}\n", flt ? "v > best || v != v" : "v > best", take);
    body += close;
    body += fmt::format("    {} = {};\n", dst, text.store(d, "best"));
    if (with_indices)
      body += fmt::format("    (({}*)p.idx)[i] = ({})best_at;\n", KernelText::storage_type(index_dtype),
                          KernelText::storage_type(index_dtype));
  } else {
    body += "    double sum = 0.0;\n";
    body += open;
    body += fmt::format("      const long long at = {};\n      sum += (double)({});\n", at, value);
    body += close;
    const std::string divisor =
        kind == Kind::Adaptive ? "count" : "(real == 0 ? 0ull : p.count_include_pad ? padded : real)";
    body += fmt::format("    const unsigned long long divisor = {};\n", divisor);
    body += fmt::format("    {} = {};\n", dst,
                        text.store(d, fmt::format("({})(divisor == 0 ? 0.0 : sum / (double)divisor)", T)));
  }
  const std::string fields = fmt::format(
      "  unsigned long long in_extent[{0}];\n"
      "  unsigned long long out_extent[{0}];\n"
      "  unsigned long long kernel[{0}];\n"
      "  unsigned long long stride[{0}];\n"
      "  unsigned long long padding[{0}];\n"
      "  unsigned long long dilation[{0}];\n"
      "  unsigned long long in_vol;\n"
      "  unsigned long long out_vol;\n"
      "  unsigned long long count_include_pad;\n"
      "  unsigned long long src;\n"
      "  unsigned long long dst;\n"
      "  unsigned long long idx;\n",
      s);
  return grid_stride_kernel("pooling", text.helpers(), fields, body);
}

}  // namespace

std::vector<Launch> plan_pool(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs) {
  const Operand& x = inputs[0];
  const Operand& out = outputs[0];
  const Shape& xs = x.spec.shape;
  const std::size_t s = xs.rank() - 2;
  Geometry g;
  Kind kind = Kind::Max;
  DType index_dtype = DType::I64;
  if (const auto* m = std::get_if<ir::MaxPool>(&op)) {
    g.kernel.assign(m->kernel.begin(), m->kernel.end());
    g.stride.assign(m->stride.begin(), m->stride.end());
    g.padding.assign(m->padding.begin(), m->padding.end());
    g.dilation.assign(m->dilation.begin(), m->dilation.end());
    g.with_indices = m->with_indices;
    index_dtype = m->index_dtype;
  } else if (const auto* a = std::get_if<ir::AvgPool>(&op)) {
    kind = Kind::Average;
    g.kernel.assign(a->kernel.begin(), a->kernel.end());
    g.stride.assign(a->stride.begin(), a->stride.end());
    g.padding.assign(a->padding.begin(), a->padding.end());
    g.count_include_pad = a->count_include_pad;
  } else if (std::holds_alternative<ir::AdaptiveAvgPool>(op)) {
    kind = Kind::Adaptive;
  } else {
    throw Error(ir::op_name(op), "not a pooling op (an internal error of the cuda backend)");
  }
  // Unused geometry reads as ones (the kernel never looks at it).
  for (auto* v : {&g.kernel, &g.stride, &g.padding, &g.dilation}) v->resize(s, v == &g.padding ? 0 : 1);
  std::uint64_t in_vol = 1, out_vol = 1;
  for (std::size_t d = 0; d < s; ++d) {
    in_vol *= xs[2 + d];
    out_vol *= out.spec.shape[2 + d];
  }
  if (g.with_indices && in_vol > 0) {
    // A narrow index dtype must hold the largest flat index of a plane.
    const std::uint64_t largest = in_vol - 1;
    const bool fits =
        index_dtype == DType::I64 || index_dtype == DType::U64 ||
        (index_dtype == DType::I32 && largest <= 0x7fffffffull) ||
        (index_dtype == DType::U32 && largest <= 0xffffffffull) ||
        (index_dtype == DType::I16 && largest <= 0x7fffull) || (index_dtype == DType::U16 && largest <= 0xffffull) ||
        (index_dtype == DType::I8 && largest <= 0x7full) || (index_dtype == DType::U8 && largest <= 0xffull);
    if (!fits)
      throw Error(ir::op_name(op), fmt::format("index dtype {} cannot hold flat indices up to {}; use i64 or i32",
                                               dtype_name(index_dtype), largest));
  }
  Launch l;
  l.source = pool_source(kind, s, x.spec.dtype, index_dtype, g.with_indices);
  auto& w = l.params;
  w.push_back(out.spec.shape.num_elements());
  for (std::size_t d = 0; d < s; ++d) w.push_back(xs[2 + d]);
  for (std::size_t d = 0; d < s; ++d) w.push_back(out.spec.shape[2 + d]);
  for (const auto* v : {&g.kernel, &g.stride, &g.padding, &g.dilation}) w.insert(w.end(), v->begin(), v->end());
  w.insert(w.end(), {in_vol, out_vol, g.count_include_pad ? 1u : 0u, x.address, out.address,
                     g.with_indices ? outputs[1].address : 0});
  if (l.items() == 0) return {};
  return {l};
}

}  // namespace burn::cuda
