// Autocast: the per-thread scopes, the policy of each operation and the
// casts dispatch applies to an operation's inputs.
#include <burn/amp/autocast.hpp>

#include <array>
#include <type_traits>

#include <fmt/format.h>

#include <burn/detail/ops.hpp>

#include "amp/autocast_hooks.hpp"

namespace burn::amp {
namespace detail {

thread_local constinit std::size_t open_scopes = 0;
thread_local constinit std::size_t suspended = 0;

}  // namespace detail

namespace {

struct Scope {
  Device device;
  DType dtype;
  bool enabled;
};

// Innermost last. Only this file reads it; dispatch reads the count above.
std::vector<Scope>& scopes() {
  thread_local std::vector<Scope> stack;
  return stack;
}

// The op lists. PyTorch's CUDA autocast lists are the model: what gains from
// 16-bit tensor-core or AVX-512 BF16 arithmetic and keeps its accuracy there
// (matrix products, convolutions) runs low; what loses accuracy in 16 bits
// (long sums, exp/log and their kin, normalisation statistics, losses) runs
// in f32. Elementwise arithmetic keeps its inputs' dtype.
constexpr std::array kPolicy{
    OpPolicy{"matmul", CastPolicy::LowerPrecision},
    OpPolicy{"linear", CastPolicy::LowerPrecision},
    OpPolicy{"conv1d", CastPolicy::LowerPrecision},
    OpPolicy{"conv2d", CastPolicy::LowerPrecision},
    OpPolicy{"conv3d", CastPolicy::LowerPrecision},
    OpPolicy{"conv_transpose1d", CastPolicy::LowerPrecision},
    OpPolicy{"conv_transpose2d", CastPolicy::LowerPrecision},
    OpPolicy{"conv_transpose3d", CastPolicy::LowerPrecision},
    OpPolicy{"exp", CastPolicy::Float32},
    OpPolicy{"expm1", CastPolicy::Float32},
    OpPolicy{"log", CastPolicy::Float32},
    OpPolicy{"log1p", CastPolicy::Float32},
    OpPolicy{"recip", CastPolicy::Float32},
    OpPolicy{"rsqrt", CastPolicy::Float32},
    OpPolicy{"tan", CastPolicy::Float32},
    OpPolicy{"asin", CastPolicy::Float32},
    OpPolicy{"acos", CastPolicy::Float32},
    OpPolicy{"sinh", CastPolicy::Float32},
    OpPolicy{"cosh", CastPolicy::Float32},
    OpPolicy{"pow", CastPolicy::Float32},
    OpPolicy{"sum", CastPolicy::Float32},
    OpPolicy{"prod", CastPolicy::Float32},
    OpPolicy{"mean", CastPolicy::Float32},
    OpPolicy{"cumsum", CastPolicy::Float32},
    OpPolicy{"cumprod", CastPolicy::Float32},
    OpPolicy{"softmax", CastPolicy::Float32},
    OpPolicy{"log_softmax", CastPolicy::Float32},
    OpPolicy{"layer_norm", CastPolicy::Float32},
    OpPolicy{"group_norm", CastPolicy::Float32},
    OpPolicy{"rms_norm", CastPolicy::Float32},
    OpPolicy{"batch_norm", CastPolicy::Float32},
    OpPolicy{"cross_entropy", CastPolicy::Float32},
    OpPolicy{"binary_cross_entropy", CastPolicy::Float32},
    OpPolicy{"mse_loss", CastPolicy::Float32},
    OpPolicy{"huber_loss", CastPolicy::Float32},
    OpPolicy{"add", CastPolicy::Promote},
    OpPolicy{"sub", CastPolicy::Promote},
    OpPolicy{"mul", CastPolicy::Promote},
    OpPolicy{"div", CastPolicy::Promote},
    OpPolicy{"remainder", CastPolicy::Promote},
    OpPolicy{"max_pair", CastPolicy::Promote},
    OpPolicy{"min_pair", CastPolicy::Promote},
    OpPolicy{"atan2", CastPolicy::Promote},
    OpPolicy{"equal", CastPolicy::Promote},
    OpPolicy{"not_equal", CastPolicy::Promote},
    OpPolicy{"greater", CastPolicy::Promote},
    OpPolicy{"greater_equal", CastPolicy::Promote},
    OpPolicy{"lower", CastPolicy::Promote},
    OpPolicy{"lower_equal", CastPolicy::Promote},
    OpPolicy{"mask_where", CastPolicy::Promote},
    OpPolicy{"cat", CastPolicy::Promote},
};

// The IR primitives' policies: the composites (linear, softmax, the norms,
// the losses) cast their input themselves (detail::float32_input) or are
// built on a primitive listed here (linear on matmul).
std::optional<CastPolicy> policy_of(const ir::Op& op) {
  return std::visit(
      [](const auto& o) -> std::optional<CastPolicy> {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, ir::Matmul> || std::is_same_v<T, ir::Conv> ||
                      std::is_same_v<T, ir::ConvTranspose>) {
          return CastPolicy::LowerPrecision;
        } else if constexpr (std::is_same_v<T, ir::Unary>) {
          switch (o.op) {
            case ir::UnaryOp::Exp:
            case ir::UnaryOp::Expm1:
            case ir::UnaryOp::Log:
            case ir::UnaryOp::Log1p:
            case ir::UnaryOp::Recip:
            case ir::UnaryOp::Rsqrt:
            case ir::UnaryOp::Tan:
            case ir::UnaryOp::Asin:
            case ir::UnaryOp::Acos:
            case ir::UnaryOp::Sinh:
            case ir::UnaryOp::Cosh: return CastPolicy::Float32;
            default: return std::nullopt;
          }
        } else if constexpr (std::is_same_v<T, ir::Binary>) {
          if (o.op == ir::BinaryOp::Pow) return CastPolicy::Float32;
          // With a scalar operand there is one tensor, nothing to promote.
          if (o.scalar) return std::nullopt;
          return CastPolicy::Promote;
        } else if constexpr (std::is_same_v<T, ir::Reduce>) {
          const bool accumulates =
              o.op == ir::ReduceOp::Sum || o.op == ir::ReduceOp::Prod || o.op == ir::ReduceOp::Mean;
          return accumulates ? std::optional(CastPolicy::Float32) : std::nullopt;
        } else if constexpr (std::is_same_v<T, ir::Cumulative>) {
          const bool accumulates = o.op == ir::CumulativeOp::Sum || o.op == ir::CumulativeOp::Prod;
          return accumulates ? std::optional(CastPolicy::Float32) : std::nullopt;
        } else if constexpr (std::is_same_v<T, ir::MaskWhere> || std::is_same_v<T, ir::Cat>) {
          return CastPolicy::Promote;
        } else {
          return std::nullopt;
        }
      },
      op);
}

std::optional<DType> active_dtype(const Device& device) {
  const auto& stack = scopes();
  for (auto it = stack.rbegin(); it != stack.rend(); ++it)
    if (it->device == device) return it->enabled ? std::optional(it->dtype) : std::nullopt;
  return std::nullopt;
}

// Float dtypes from narrowest to widest; the two 16-bit types promote to f32.
int width_rank(DType d) {
  switch (d) {
    case DType::F64: return 3;
    case DType::F32: return 2;
    default: return 1;
  }
}

DType promoted(std::span<const burn::detail::TensorRef> inputs) {
  std::optional<DType> widest;
  for (const auto& t : inputs) {
    const DType d = t->spec.dtype;
    if (!is_float(d)) continue;
    if (!widest || width_rank(d) > width_rank(*widest)) widest = d;
    else if (width_rank(d) == width_rank(*widest) && d != *widest) widest = DType::F32;  // f16 with bf16
  }
  return widest.value_or(DType::F32);
}

}  // namespace

Autocast::Autocast(const Device& device, DType dtype, bool enabled) : depth_(scopes().size()) {
  if (dtype != DType::F16 && dtype != DType::BF16)
    throw Error("Autocast", fmt::format("the autocast dtype must be f16 or bf16, got {}; f32 is what runs without "
                                        "a scope (or pass enabled = false)",
                                        dtype_name(dtype)));
  if (enabled && !device.supports_dtype(dtype))
    throw Error("Autocast", fmt::format("{} does not support {}; use {} or another device", device.to_string(),
                                        dtype_name(dtype), dtype == DType::BF16 ? "f16" : "bf16"));
  scopes().push_back(Scope{device, dtype, enabled});
  ++detail::open_scopes;
}

Autocast::~Autocast() {
  // Scopes are stack objects (neither copied nor moved), so they close in
  // the reverse order they opened.
  scopes().resize(depth_);
  detail::open_scopes = depth_;
}

std::optional<DType> autocast_dtype(const Device& device) {
  if (!detail::may_apply()) return std::nullopt;
  return active_dtype(device);
}

std::span<const OpPolicy> autocast_policy() { return kPolicy; }

namespace detail {

std::optional<std::vector<burn::detail::TensorRef>> autocast_inputs(const ir::Op& op,
                                                                    std::span<const burn::detail::TensorRef> inputs) {
  if (inputs.empty() || !inputs[0]) return std::nullopt;
  const auto policy = policy_of(op);
  if (!policy) return std::nullopt;
  const auto dtype = active_dtype(inputs[0]->device);
  if (!dtype) return std::nullopt;

  // The widest float dtype among the inputs, once (only Promote reads it).
  const DType widest = *policy == CastPolicy::Promote ? promoted(inputs) : DType::F32;
  auto target = [&](DType d) -> std::optional<DType> {
    if (!is_float(d)) return std::nullopt;
    switch (*policy) {
      case CastPolicy::LowerPrecision: return d == DType::F64 || d == *dtype ? std::nullopt : std::optional(*dtype);
      case CastPolicy::Float32: return is_half(d) ? std::optional(DType::F32) : std::nullopt;
      case CastPolicy::Promote: return d == widest ? std::nullopt : std::optional(widest);
    }
    return std::nullopt;
  };
  // The cast inputs, made only once an input needs a cast (most ops under a
  // scope already have the policy's dtypes).
  std::optional<std::vector<burn::detail::TensorRef>> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& t = inputs[i];
    const auto to = t ? target(t->spec.dtype) : std::nullopt;
    if (to && !out) out.emplace(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(i));
    if (out) out->push_back(to ? burn::detail::cast(t, *to) : t);
  }
  return out;
}

burn::detail::TensorRef float32_input(const burn::detail::TensorRef& t) {
  if (!may_apply() || !t || !is_half(t->spec.dtype) || !active_dtype(t->device)) return t;
  return burn::detail::cast(t, DType::F32);
}

}  // namespace detail
}  // namespace burn::amp
