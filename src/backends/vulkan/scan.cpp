// Inclusive scans along one dim (shaders/scan.comp): a thread per line for
// short dims, a workgroup per line up to kBlock elements, and beyond that
// kBlock-long blocks in parallel: their totals, an inclusive scan of the
// totals (this same kernel, recursively), then each block scanned from the
// total before it. Blocks also bound every thread's loops: lavapipe ends a
// shader after 65,535 loop iterations in all.
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {
static_assert(static_cast<int>(ir::CumulativeOp::Min) == 3);  // scan.comp numbers the ops as ir::CumulativeOp
/// Dims at least this long get a workgroup per line (or per block).
constexpr std::size_t kLongMin = 64;
/// The longest run one workgroup scans: 16 chunks of 256 threads x 4 items.
constexpr std::size_t kBlock = std::size_t{kWorkgroup} * 4 * 16;
constexpr std::uint32_t kModeScan = 0, kModeTotals = 1;  // MODE in scan.comp

std::uint32_t word(std::int64_t v) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(v)); }

/// scan.comp's compute type A_C, which block totals are kept in.
DType compute_dtype(DType d) { return shader_compute_dtype(d); }

/// Scans `x` along `dim` into `out` (same shape, any strides).
void scan_into(const Context& ctx, ir::CumulativeOp op, const VkTensor& x, std::size_t dim, const VkTensor& out) {
  const std::size_t len = x.shape[dim];
  std::vector<std::size_t> lines = x.shape;
  lines[dim] = 1;
  const bool long_lines = len >= kLongMin;
  const std::size_t blocks = long_lines ? (len + kBlock - 1) / kBlock : 1;
  const Operand ops[] = {operand(out), operand(x)};
  const std::uint32_t words[] = {static_cast<std::uint32_t>(len), word(x.strides[dim]), word(out.strides[dim]),
                                 static_cast<std::uint32_t>(kBlock), static_cast<std::uint32_t>(blocks)};
  const Prepared prep = prepare_elementwise(ctx, lines, ops, words);
  const std::string shader = fmt::format("scan_{}", dtype_suffix(x.dtype));
  const std::uint64_t groups = long_lines ? prep.n * blocks : (prep.n + kWorkgroup - 1) / kWorkgroup;
  auto pass = [&](std::uint32_t mode, const Binding& carry) {
    const std::uint32_t constants[] = {static_cast<std::uint32_t>(op), prep.contiguous ? 1u : 0u, long_lines ? 1u : 0u,
                                       mode};
    const Binding bindings[] = {prep.bindings[0], prep.bindings[1], carry};
    dispatch_groups(ctx, shader, constants, bindings, prep.params, groups);
  };
  if (blocks == 1) {
    pass(kModeScan, prep.bindings[0]);  // the carry binding is not read: any valid buffer
    return;
  }
  const ir::TensorSpec spec{Shape{static_cast<std::size_t>(prep.n), blocks}, compute_dtype(x.dtype)};
  const VkTensorPtr totals = ctx.output(spec), carries = ctx.output(spec);
  pass(kModeTotals, totals->binding());
  scan_into(ctx, op, *totals, 1, *carries);
  pass(kModeScan, carries->binding());
}
}  // namespace

Result kernel(const Context& ctx, const ir::Cumulative& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  auto t = ctx.output(out[0]);
  if (t->num_elements() == 0) return {t};
  scan_into(ctx, op.op, x, op.dim, *t);
  return {t};
}

}  // namespace burn::vulkan
