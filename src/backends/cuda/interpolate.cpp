// 2-D resizing of [N, C, H, W] on the CUDA device with PyTorch's
// source-coordinate rules (nearest: floor(dst · in / out); bilinear and
// bicubic with A = -0.75 and clamped borders, with and without
// align_corners): one thread per output pixel, which computes its 1, 2 or 4
// row and column taps and sums rows of column sums in flex's order, in the
// compute type (f32 for the half types).
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {
namespace {

/// Device code of the taps along one axis: `burn_taps(o, in, out, align,
/// index, weight)` fills up to 4 taps and returns how many there are.
std::string taps_function(ir::InterpolateMode mode, const std::string& C) {
  const std::string floor_fn = C == "double" ? "floor" : "floorf";
  std::string source_index;
  if (mode != ir::InterpolateMode::Nearest)
    // PyTorch's area_pixel_compute_source_index; only bicubic keeps
    // negative coordinates.
    source_index = fmt::format(
        "  {0} src;\n"
        "  if (align) {{\n"
        "    const {0} scale = out > 1 ? ({0})(in - 1) / ({0})(out - 1) : ({0})0;\n"
        "    src = scale * ({0})o;\n"
        "  }} else {{\n"
        "    const {0} scale = ({0})in / ({0})out;\n"
        "    src = scale * (({0})o + ({0})0.5) - ({0})0.5;\n"
        "{1}"
        "  }}\n",
        C, mode == ir::InterpolateMode::Bicubic ? "" : fmt::format("    if (src < ({})0) src = ({})0;\n", C, C));
  std::string body;
  switch (mode) {
    case ir::InterpolateMode::Nearest:
      body =
          "  const unsigned long long at = o * in / out;\n"
          "  index[0] = at < in - 1 ? at : in - 1;\n"
          "  weight[0] = 1;\n"
          "  return 1;\n";
      break;
    case ir::InterpolateMode::Bilinear:
      body = fmt::format(
          "  const long long last = (long long)in - 1;\n"
          "  const long long i0 = (long long)src;\n"
          "  {0} l1 = src - ({0})i0;\n"
          "  l1 = l1 < ({0})0 ? ({0})0 : l1 > ({0})1 ? ({0})1 : l1;\n"
          "  index[0] = (unsigned long long)(i0 < last ? i0 : last);\n"
          "  const long long i1 = i0 + (i0 < last ? 1 : 0);\n"
          "  index[1] = (unsigned long long)(i1 < last ? i1 : last);\n"
          "  weight[0] = ({0})1 - l1;\n"
          "  weight[1] = l1;\n"
          "  return 2;\n",
          C);
      break;
    case ir::InterpolateMode::Bicubic:
      body = fmt::format(
          "  const long long last = (long long)in - 1;\n"
          "  const {0} fl = {1}(src);\n"
          "  const long long at = (long long)fl;\n"
          "  const {0} x = src - fl;\n"
          "  const {0} A = ({0})-0.75;\n"
          "  const {0} near0 = x, near1 = ({0})1 - x, far0 = x + ({0})1, far1 = ({0})2 - x;\n"
          "  weight[0] = ((A * far0 - ({0})5 * A) * far0 + ({0})8 * A) * far0 - ({0})4 * A;\n"
          "  weight[1] = ((A + ({0})2) * near0 - (A + ({0})3)) * near0 * near0 + ({0})1;\n"
          "  weight[2] = ((A + ({0})2) * near1 - (A + ({0})3)) * near1 * near1 + ({0})1;\n"
          "  weight[3] = ((A * far1 - ({0})5 * A) * far1 + ({0})8 * A) * far1 - ({0})4 * A;\n"
          "  for (int k = 0; k < 4; ++k) {{\n"
          "    const long long t = at - 1 + k;\n"
          "    index[k] = (unsigned long long)(t < 0 ? 0 : t > last ? last : t);\n"
          "  }}\n"
          "  return 4;\n",
          C, floor_fn);
      break;
  }
  return fmt::format(
      "__device__ int burn_taps(const unsigned long long o, const unsigned long long in, const unsigned long long "
      "out, const bool align, unsigned long long* index, {0}* weight) {{\n"
      "{1}{2}"
      "}}\n",
      C, source_index, body);
}

std::string interpolate_source(ir::InterpolateMode mode, DType d) {
  KernelText text;
  const std::string C = KernelText::compute_type(d);
  const std::string storage = KernelText::storage_type(d);
  text.need("burn_taps", taps_function(mode, C));
  const std::string body = fmt::format(
      "    const unsigned long long ow = i % p.w_out, oh = (i / p.w_out) % p.h_out, plane = i / p.w_out / p.h_out;\n"
      "    unsigned long long row[4], col[4];\n"
      "    {0} row_weight[4], col_weight[4];\n"
      "    const int rows = burn_taps(oh, p.h_in, p.h_out, p.align_corners != 0, row, row_weight);\n"
      "    const int cols = burn_taps(ow, p.w_in, p.w_out, p.align_corners != 0, col, col_weight);\n"
      "    const {1}* x = (const {1}*)p.src + plane * p.h_in * p.w_in;\n"
      "    {0} v = 0;\n"
      "    for (int r = 0; r < rows; ++r) {{\n"
      "      {0} across = 0;\n"
      "      for (int c = 0; c < cols; ++c) across += col_weight[c] * {2};\n"
      "      v += row_weight[r] * across;\n"
      "    }}\n"
      "    (({1}*)p.dst)[i] = {3};\n",
      C, storage, text.load(d, "x[row[r] * p.w_in + col[c]]"), text.store(d, "v"));
  static constexpr const char* kModeNames[] = {"nearest", "bilinear", "bicubic"};
  return grid_stride_kernel(fmt::format("{} interpolation", kModeNames[static_cast<int>(mode)]), text.helpers(),
                            "  unsigned long long h_in;\n"
                            "  unsigned long long w_in;\n"
                            "  unsigned long long h_out;\n"
                            "  unsigned long long w_out;\n"
                            "  unsigned long long align_corners;\n"
                            "  unsigned long long src;\n"
                            "  unsigned long long dst;\n",
                            body);
}

}  // namespace

std::vector<Launch> plan_interpolate(const ir::Op& op, std::span<const Operand> inputs,
                                     std::span<const Operand> outputs) {
  const auto* resize = std::get_if<ir::Interpolate>(&op);
  if (resize == nullptr) throw Error(ir::op_name(op), "not an interpolation (an internal error of the cuda backend)");
  const Shape& xs = inputs[0].spec.shape;
  const Shape& ys = outputs[0].spec.shape;
  if (ys.num_elements() == 0) return {};
  Launch l;
  l.source = interpolate_source(resize->mode, inputs[0].spec.dtype);
  l.params = {ys.num_elements(), xs[2], xs[3], ys[2], ys[3], resize->align_corners ? 1u : 0u, inputs[0].address,
              outputs[0].address};
  return {l};
}

}  // namespace burn::cuda
