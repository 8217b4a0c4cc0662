// Reductions along one dim (shaders/reduce.comp): a thread per output for
// short dims; otherwise G = ceil(len / kChunk) workgroups per output, each
// folding kChunk elements (threads a strided share, then a tree in workgroup
// memory). With G > 1 they write (value, index) partials and further passes
// fold those, so a long dim with few outputs (a whole-tensor sum) still
// fills the device, and no thread loops more than kChunk / 256 times:
// lavapipe ends a shader after 65,535 loop iterations in all, which once cut
// a sum of 2^24 ones to 131,070.
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {
using ir::ReduceOp;
static_assert(static_cast<int>(ReduceOp::All) == 8);  // reduce.comp numbers the ops as ir::ReduceOp
/// Runs at least this long get workgroups (and a tree); shorter ones a thread.
constexpr std::size_t kTreeMin = 64;
/// Elements one workgroup folds in a pass: 32 loads per thread.
constexpr std::size_t kChunk = std::size_t{kWorkgroup} * 32;

/// The dtype reduce.comp accumulates `x` in (its ACC): partials are stored so.
DType acc_dtype(DType x, const std::string& shader) {
  if (shader.starts_with("reduce_anyall_")) return DType::U32;
  if (shader.starts_with("reduce_mean_")) return is_signed_int(x) ? DType::I64 : DType::U64;  // WIDE_ACC
  return shader_compute_dtype(x);
}

std::string shader_for(const Context& ctx, const ir::Reduce& op, DType x) {
  const std::string_view dt = dtype_suffix(x);
  switch (op.op) {
    case ReduceOp::Any:
    case ReduceOp::All: return fmt::format("reduce_anyall_{}", dt);
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      if (op.index_dtype != DType::I64 && op.index_dtype != DType::I32)
        throw Error(ctx.op, fmt::format("the {} backend returns i64 or i32 indices, not {}; ask for one of those",
                                        ctx.backend.name(), dtype_name(op.index_dtype)));
      return fmt::format("reduce_arg_{}_{}", dt, dtype_name(op.index_dtype));
    case ReduceOp::Mean:
      if (is_int(x)) {
        // The sum of an int mean is 64 bits wide, so small types do not wrap.
        if (!ctx.backend.supports_dtype(DType::I64))
          throw Error(ctx.op, fmt::format("an integer mean needs 64-bit shader integers, which {} lacks; cast to "
                                          "f32 first",
                                          ctx.backend.label()));
        return fmt::format("reduce_mean_{}", dt);
      }
      return fmt::format("reduce_{}", dt);
    default: return fmt::format("reduce_{}", dt);
  }
}
}  // namespace

Result kernel(const Context& ctx, const ir::Reduce& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  auto t = ctx.output(out[0]);
  const std::string shader = shader_for(ctx, op, x.dtype);
  const std::size_t len = x.shape[op.dim];
  // The input's strides over the output's shape: the reduced dim has size 1.
  const Operand ops[] = {operand(*t), Operand{&x, x.strides, x.offset}};
  Prepared prep = prepare_elementwise(ctx, t->shape, ops);
  if (prep.n == 0) return {t};
  const std::uint64_t outputs = prep.n;
  std::uint32_t* words = prep.params.words;
  words[1] = static_cast<std::uint32_t>(static_cast<std::int32_t>(x.strides[op.dim]));
  words[3] = static_cast<std::uint32_t>(kChunk);
  words[4] = static_cast<std::uint32_t>(len);

  // Each pass folds runs of `run` elements (x's dim, then the previous
  // pass's partials) into `groups` per output, until one is left.
  const DType acc = acc_dtype(x.dtype, shader);
  VkTensorPtr part_val, part_idx;  // the previous pass's partials
  std::size_t run = len;
  for (bool first = true;; first = false) {
    const bool tree = run >= kTreeMin;
    const std::size_t groups = tree ? (run + kChunk - 1) / kChunk : 1;
    const bool last = groups == 1;
    VkTensorPtr next_val, next_idx;
    if (!last) {
      const Shape shape{static_cast<std::size_t>(outputs), groups};
      next_val = ctx.output(ir::TensorSpec{shape, acc});
      next_idx = ctx.output(ir::TensorSpec{shape, DType::U32});
    }
    words[0] = static_cast<std::uint32_t>(run);
    words[2] = static_cast<std::uint32_t>(groups);
    // Bindings the pass does not read or write are filled with ones it does
    // (every binding a shader declares must hold a valid buffer).
    const Binding filler = t->binding();
    const Binding bindings[] = {t->binding(),
                                x.binding(),
                                first ? filler : part_val->binding(),
                                first ? filler : part_idx->binding(),
                                last ? filler : next_val->binding(),
                                last ? filler : next_idx->binding()};
    const std::uint32_t constants[] = {static_cast<std::uint32_t>(op.op), prep.contiguous ? 1u : 0u, tree ? 1u : 0u,
                                       first ? 0u : 1u, last ? 0u : 1u};
    dispatch_groups(ctx, shader, constants, bindings, prep.params,
                    tree ? outputs * groups : (outputs + kWorkgroup - 1) / kWorkgroup);
    if (last) return {t};
    part_val = std::move(next_val);
    part_idx = std::move(next_idx);
    run = groups;
  }
}

}  // namespace burn::vulkan
