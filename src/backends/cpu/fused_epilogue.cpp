#include "backends/cpu/fused_epilogue.hpp"

#include <dnnl.hpp>

#include <atomic>

#include "backends/flex/blocked_layout.hpp"
#include "backends/flex/dnnl_engine.hpp"
#include "backends/flex/kernels.hpp"
#include "backends/flex/layout_elementwise.hpp"
#include "backends/flex/matmul_post_ops.hpp"
#include "backends/flex/strided.hpp"
#include "fusion/op_kind.hpp"

namespace burn::cpu {
namespace {

using Step = fusion::EpilogueProgram::Step;

std::atomic<std::uint64_t> groups_op_by_op{0};
std::atomic<std::uint64_t> residuals_in_place{0};

dnnl::algorithm binary_algorithm(ir::BinaryOp op) {
  switch (op) {
    case ir::BinaryOp::Add: return dnnl::algorithm::binary_add;
    case ir::BinaryOp::Sub: return dnnl::algorithm::binary_sub;
    case ir::BinaryOp::Mul: return dnnl::algorithm::binary_mul;
    case ir::BinaryOp::Div: return dnnl::algorithm::binary_div;
    // Never an epilogue step (fusion/epilogue.cpp takes the four above).
    case ir::BinaryOp::Rem:
    case ir::BinaryOp::Pow:
    case ir::BinaryOp::Max:
    case ir::BinaryOp::Min:
    case ir::BinaryOp::Atan2:
    case ir::BinaryOp::BitAnd:
    case ir::BinaryOp::BitOr:
    case ir::BinaryOp::BitXor:
    case ir::BinaryOp::Shl:
    case ir::BinaryOp::Shr:
    case ir::BinaryOp::LogicalAnd:
    case ir::BinaryOp::LogicalOr:
    case ir::BinaryOp::LogicalXor:
    case ir::BinaryOp::Equal:
    case ir::BinaryOp::NotEqual:
    case ir::BinaryOp::Greater:
    case ir::BinaryOp::GreaterEqual:
    case ir::BinaryOp::Less:
    case ir::BinaryOp::LessEqual: break;
  }
  throw Error(ir::binary_name(op), "cannot be a matmul epilogue step (fusion planner bug)");
}

/// A tensor as a post-op's second operand: its dims (1 where it broadcasts)
/// and strides, so oneDNN reads it in place.
dnnl::memory::desc operand_desc(const host::CpuTensor& t) {
  dnnl::memory::dims dims, strides;
  for (std::size_t d = 0; d < t.rank(); ++d) {
    dims.push_back(static_cast<dnnl::memory::dim>(t.shape[d]));
    strides.push_back(t.shape[d] == 1 ? 1 : t.strides[d]);
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

class CpuEpiloguePlan final : public fusion::FusedPlan {
 public:
  CpuEpiloguePlan(fusion::EpilogueProgram prog, flex::Context ctx) : prog_(std::move(prog)), ctx_(std::move(ctx)) {}

  std::vector<backend::PrimitivePtr> run(std::span<const fusion::QueuedOp* const> ops,
                                         std::span<const backend::Input> in) const override {
    const flex::Context& ctx = ctx_;
    // A convolution anchor reads its input in a blocked layout a previous
    // convolution left, and its post-ops read a residual operand in that
    // layout too (run_fused); the convolution's weights and everything a
    // matmul reads are row-major.
    const auto* conv = std::get_if<ir::Conv>(&ops[0]->op);
    host::make_inputs_plain(conv ? in.subspan(0, conv->has_bias ? 3 : 2) : in, conv ? 1 : 0);
    if (auto fused = run_fused(ctx, ops, in)) return {fused};
    groups_op_by_op.fetch_add(1, std::memory_order_relaxed);
    return {run_one_by_one(ctx, ops, in)};
  }

 private:
  /// The whole group as one oneDNN matmul or convolution; nullptr when a
  /// step's values fall outside what the post-ops compute as flex does, or
  /// oneDNN has no implementation.
  host::CpuTensorPtr run_fused(const flex::Context& ctx, std::span<const fusion::QueuedOp* const> ops,
                               std::span<const backend::Input> in) const {
    const std::size_t rank = prog_.output.shape.rank();
    dnnl::post_ops post;
    std::vector<flex::dnn::PlainArg> operands;  // the binary steps' right operands
    std::vector<host::CpuTensorPtr> made;       // keeps scalar tensors and dense copies alive
    const bool is_matmul = std::holds_alternative<ir::Matmul>(ops[0]->op);
    const auto* conv = std::get_if<ir::Conv>(&ops[0]->op);
    flex::SumOperand sum;
    // A matmul's leading bias add goes in as oneDNN's own bias argument,
    // which its kernels add while storing: cheaper than the same add as a
    // binary post-op (linear + relu of [64,784]x[784,128]: 37.4 against
    // 40.0 us; equal within noise on large layers).
    const host::CpuTensor* bias = is_matmul ? row_bias(in) : nullptr;
    for (const Step& step : std::span(prog_.steps).subspan(bias ? 1 : 0)) {
      const int slot = DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(post.len())) | DNNL_ARG_SRC_1;
      if (step.kind == Step::Kind::Relu) {
        // Only relu itself: compare with 0 and fill with 0 (scalars are not
        // part of the plan's signature, so they are checked on every run).
        const auto& cmp = std::get<ir::Binary>(ops[step.group_op]->op);
        const auto& fill = std::get<ir::MaskFill>(ops[step.group_op + 1]->op);
        if (cmp.scalar->as<double>() != 0.0 || fill.value.as<double>() != 0.0) return nullptr;
        post.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        continue;
      }
      const host::CpuTensor* rhs = nullptr;
      if (conv && !sum.tensor && takes_sum(step, in)) {
        // A residual the size of the output: the convolution accumulates
        // onto it (oneDNN's sum post-op), which keeps oneDNN on its fastest
        // kernel; a binary post-op with a full-size operand sends it to an
        // older one that costs what the fusion saves.
        sum = {&host::as_cpu(in[step.input].primitive), in[step.input].reusable};
        post.append_sum(step.op == ir::BinaryOp::Sub ? -1.0f : 1.0f);
        continue;
      }
      if (step.scalar) {
        // The scalar as a one-element tensor broadcast over the output, so
        // `x / 4` stays a division.
        made.push_back(ctx.output({Shape(std::vector<std::size_t>(rank, 1)), DType::F32}));
        *made.back()->data<float>() = std::get<ir::Binary>(ops[step.group_op]->op).scalar->as<float>();
        rhs = made.back().get();
      } else {
        rhs = &host::as_cpu(in[step.input].primitive);
        // A convolution's residual operand (another convolution's output)
        // is read in its blocked layout, which is the output's: a plain
        // operand would force oneDNN onto a slow convolution.
        if (auto blocked = rhs->is_opaque() ? flex::dnn::blocked_input(
                                                  *rhs, flex::dnn::plain_desc(rhs->shape, dnnl::memory::data_type::f32))
                                            : std::nullopt) {
          made.push_back(blocked->bytes);
          post.append_binary(binary_algorithm(step.op), blocked->md);
          operands.push_back({slot, blocked->md, blocked->bytes.get()});
          continue;
        }
        rhs->make_plain();
        // oneDNN 2.6 reads a post-op operand as dense whatever its strides
        // say (a bias sliced with a step came out wrong): views are copied.
        if (!rhs->is_contiguous()) {
          made.push_back(flex::contiguous_copy(ctx, *rhs));
          rhs = made.back().get();
        }
      }
      const auto md = operand_desc(*rhs);
      post.append_binary(binary_algorithm(step.op), md);
      operands.push_back({slot, md, rhs});
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(post);
    auto y = ctx.output(prog_.output);
    if (conv) {
      const std::size_t n_in = conv->has_bias ? 3 : 2;
      if (!flex::conv_f32_with_post_ops(ctx, *conv, in.subspan(0, n_in), *y, attr, operands,
                                        sum.tensor ? &sum : nullptr))
        return nullptr;
      if (sum.taken) residuals_in_place.fetch_add(1, std::memory_order_relaxed);
      return y;
    }
    std::unordered_map<int, dnnl::memory> args;
    for (const auto& a : operands) args.emplace(a.arg, flex::dnn::wrap(a.md, *a.tensor));
    if (!flex::matmul_f32_with_post_ops(ctx, host::as_cpu_ptr(in[0].primitive), host::as_cpu_ptr(in[1].primitive), *y,
                                        attr, args, bias))
      return nullptr;
    return y;
  }

  /// Whether `step` adds or subtracts a tensor of the output's shape (the
  /// identity of a residual block), which a convolution takes as its sum
  /// post-op.
  bool takes_sum(const Step& step, std::span<const backend::Input> in) const {
    if (step.kind != Step::Kind::Binary || step.scalar) return false;
    if (step.op != ir::BinaryOp::Add && step.op != ir::BinaryOp::Sub) return false;
    const host::CpuTensor& rhs = host::as_cpu(in[step.input].primitive);
    return rhs.dtype == DType::F32 && rhs.shape == prog_.output.shape.dims();
  }

  /// The first step's right operand when that step adds one value per
  /// output column (a layer's bias: every dim but the last is 1) stored
  /// contiguously (oneDNN reads it as dense); nullptr otherwise.
  const host::CpuTensor* row_bias(std::span<const backend::Input> in) const {
    if (prog_.steps.empty()) return nullptr;
    const Step& first = prog_.steps.front();
    if (first.kind != Step::Kind::Binary || first.op != ir::BinaryOp::Add || first.scalar) return nullptr;
    const host::CpuTensor& rhs = host::as_cpu(in[first.input].primitive);
    if (rhs.rank() == 0 || rhs.shape.back() != prog_.output.shape[prog_.output.shape.rank() - 1]) return nullptr;
    if (rhs.shape.back() != 1 && rhs.strides.back() != 1) return nullptr;
    for (std::size_t d = 0; d + 1 < rhs.rank(); ++d)
      if (rhs.shape[d] != 1) return nullptr;
    return &rhs;
  }

  /// The group's ops one at a time on flex's kernels: same results as eager.
  host::CpuTensorPtr run_one_by_one(const flex::Context& ctx, std::span<const fusion::QueuedOp* const> ops,
                                    std::span<const backend::Input> in) const {
    std::vector<backend::PrimitivePtr> results(ops.size());
    for (std::size_t k = 0; k < ops.size(); ++k) {
      std::vector<backend::Input> args;
      for (std::size_t s = 0; s < prog_.wiring[k].size(); ++s) {
        const auto& src = prog_.wiring[k][s];
        args.push_back({src.is_input ? in[src.index].primitive : results[src.index], ops[k]->inputs[s].spec, false});
      }
      const ir::TensorSpec out = ops[k]->outputs[0].spec;
      if (k > 0) {
        // The anchor's result may be blocked, and keeps its layout through
        // the elementwise steps (flex does the same eagerly).
        if (auto y = flex::dnn::elementwise_in_layout(ctx, ops[k]->op, args, out)) {
          results[k] = std::move(y);
          continue;
        }
        host::make_inputs_plain(args);
      }
      results[k] = std::visit(
          [&](const auto& o) -> backend::PrimitivePtr {
            constexpr fusion::OpKind kind = fusion::kind_of<std::decay_t<decltype(o)>>;
            if constexpr (kind == fusion::OpKind::Anchor || kind == fusion::OpKind::Elementwise)
              return flex::kernel(ctx, o, args, std::span(&out, 1)).at(0);
            else  // reductions and eager ops are never in an epilogue group
              throw Error(ir::op_name(ops[k]->op), "cannot run in a matmul epilogue (fusion planner bug)");
          },
          ops[k]->op);
    }
    return host::as_cpu_ptr(results.back());
  }

  fusion::EpilogueProgram prog_;
  flex::Context ctx_;
};

}  // namespace

namespace {

// Whether oneDNN runs this anchor with post-ops (inputs and output are F32
// and not empty). One overload per op of the anchor kind.
template <class O>
bool anchor_supported(const O&, std::span<const ir::TensorSpec>, const ir::TensorSpec&) = delete;

// Batched matmuls too ([..., m, k] x [..., k, n], batch dims broadcast):
// oneDNN takes up to 12 dims; a post-op operand's broadcast it cannot take
// makes the primitive fail, and the group then runs op by op.
bool anchor_supported(const ir::Matmul&, std::span<const ir::TensorSpec> inputs, const ir::TensorSpec& output) {
  if (inputs.size() != 2 || inputs[0].shape.rank() < 2 || inputs[0].shape.rank() > 12) return false;
  // A small product without batch dims runs faster alone on flex's
  // dnnl_sgemm path, its epilogue then fused as elementwise work.
  const auto& out = output.shape.dims();
  const std::size_t r = out.size();
  std::size_t batch = 1;
  for (std::size_t i = 0; i + 2 < r; ++i) batch *= out[i];
  return batch != 1 || !flex::is_small_product(out[r - 2], inputs[0].shape.dims().back(), out[r - 1]);
}

// 2-D convolutions: the post-ops' operands then have the output's rank as
// oneDNN sees it.
bool anchor_supported(const ir::Conv& conv, std::span<const ir::TensorSpec>, const ir::TensorSpec& output) {
  return conv.stride.size() == 2 && output.shape.rank() == 4;
}

}  // namespace

EpilogueCounters epilogue_counters() {
  return {groups_op_by_op.load(std::memory_order_relaxed), residuals_in_place.load(std::memory_order_relaxed)};
}

bool CpuEpilogueCompiler::supports_anchor(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                                          std::span<const ir::TensorSpec> outputs) const {
  if (outputs.size() != 1 || outputs[0].dtype != DType::F32 || outputs[0].shape.num_elements() == 0) return false;
  for (const auto& in : inputs)
    if (in.dtype != DType::F32 || in.shape.num_elements() == 0) return false;
  return std::visit(
      [&](const auto& o) {
        if constexpr (fusion::kind_of<std::decay_t<decltype(o)>> == fusion::OpKind::Anchor)
          return anchor_supported(o, inputs, outputs[0]);
        else return false;  // the epilogue fuser asks about anchors only
      },
      op);
}

std::shared_ptr<fusion::FusedPlan> CpuEpilogueCompiler::compile(const fusion::EpilogueProgram& program) const {
  return std::make_shared<CpuEpiloguePlan>(program, ctx_);
}

}  // namespace burn::cpu
