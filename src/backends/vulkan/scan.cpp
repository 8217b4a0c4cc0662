// Inclusive scans along one dim (shaders/scan.comp): a workgroup per line
// scanning in workgroup memory for long dims, a thread per line for short ones.
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {
static_assert(static_cast<int>(ir::CumulativeOp::Min) == 3);  // scan.comp numbers the ops as ir::CumulativeOp
/// Dims at least this long get a workgroup per line.
constexpr std::size_t kLongMin = 64;
std::uint32_t word(std::int64_t v) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(v)); }
}  // namespace

Result kernel(const Context& ctx, const ir::Cumulative& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  auto t = ctx.output(out[0]);
  const std::size_t len = x.shape[op.dim];
  if (t->num_elements() == 0) return {t};
  std::vector<std::size_t> lines = x.shape;
  lines[op.dim] = 1;
  const Operand ops[] = {operand(*t), operand(x)};
  const std::uint32_t words[] = {static_cast<std::uint32_t>(len), word(x.strides[op.dim]),
                                 word(t->strides[op.dim])};
  const Prepared prep = prepare_elementwise(ctx, lines, ops, words);
  const bool long_lines = len >= kLongMin;
  const std::uint32_t constants[] = {static_cast<std::uint32_t>(op.op), prep.contiguous ? 1u : 0u,
                                     long_lines ? 1u : 0u};
  dispatch_groups(ctx, fmt::format("scan_{}", dtype_suffix(x.dtype)), constants, prep.bindings, prep.params,
                  long_lines ? prep.n : (prep.n + kWorkgroup - 1) / kWorkgroup);
  return {t};
}

}  // namespace burn::vulkan
