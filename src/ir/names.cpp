// Names of IR operations, for error messages and reports. The tables are
// static: a local constexpr array is rebuilt on the stack on every call.
#include <burn/ir/op.hpp>

namespace burn::ir {

std::string_view unary_name(UnaryOp op) {
  static constexpr std::string_view names[] = {
      "neg",   "abs",   "sign",  "recip", "exp",   "log",   "log1p", "expm1", "sqrt",   "rsqrt",
      "sin",   "cos",   "tan",   "asin",  "acos",  "atan",  "sinh",  "cosh",  "tanh",   "asinh",
      "acosh", "atanh", "erf",   "round", "floor", "ceil",  "trunc", "is_nan", "is_inf", "bool_not",
      "bitwise_not"};
  return names[static_cast<int>(op)];
}

std::string_view binary_name(BinaryOp op) {
  static constexpr std::string_view names[] = {
      "add",         "sub",        "mul",         "div",       "remainder", "pow",         "max_pair",
      "min_pair",    "atan2",      "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
      "bitwise_right_shift", "bool_and", "bool_or", "bool_xor", "equal", "not_equal", "greater",
      "greater_equal", "lower", "lower_equal"};
  return names[static_cast<int>(op)];
}

std::string_view reduce_name(ReduceOp op) {
  static constexpr std::string_view names[] = {"sum", "prod", "mean", "max", "min", "argmax", "argmin", "any", "all"};
  return names[static_cast<int>(op)];
}

namespace {
template <class... F> struct overloaded : F... { using F::operator()...; };
template <class... F> overloaded(F...) -> overloaded<F...>;
}  // namespace

std::string_view op_name(const Op& op) {
  return std::visit(
      overloaded{
          [](const Full&) -> std::string_view { return "full"; },
          [](const Arange&) -> std::string_view { return "arange"; },
          [](const Random&) -> std::string_view { return "random"; },
          [](const Unary& u) { return unary_name(u.op); },
          [](const Binary& b) { return binary_name(b.op); },
          [](const Clamp&) -> std::string_view { return "clamp"; },
          [](const Cast&) -> std::string_view { return "cast"; },
          [](const Matmul&) -> std::string_view { return "matmul"; },
          [](const Reduce& r) { return reduce_name(r.op); },
          [](const Cumulative& c) -> std::string_view {
            static constexpr std::string_view n[] = {"cumsum", "cumprod", "cummax", "cummin"};
            return n[static_cast<int>(c.op)];
          },
          [](const Sort&) -> std::string_view { return "sort"; },
          [](const Reshape&) -> std::string_view { return "reshape"; },
          [](const Permute&) -> std::string_view { return "permute"; },
          [](const Expand&) -> std::string_view { return "expand"; },
          [](const Flip&) -> std::string_view { return "flip"; },
          [](const Slice&) -> std::string_view { return "slice"; },
          [](const SliceAssign&) -> std::string_view { return "slice_assign"; },
          [](const Cat&) -> std::string_view { return "cat"; },
          [](const Unfold&) -> std::string_view { return "unfold"; },
          [](const Gather&) -> std::string_view { return "gather"; },
          [](const Scatter&) -> std::string_view { return "scatter"; },
          [](const Select&) -> std::string_view { return "select"; },
          [](const SelectAssign&) -> std::string_view { return "select_assign"; },
          [](const MaskWhere&) -> std::string_view { return "mask_where"; },
          [](const MaskFill&) -> std::string_view { return "mask_fill"; },
          [](const Conv& c) -> std::string_view {
            static constexpr std::string_view n[] = {"conv1d", "conv2d", "conv3d"};
            return c.stride.size() >= 1 && c.stride.size() <= 3 ? n[c.stride.size() - 1] : "conv";
          },
          [](const ConvTranspose& c) -> std::string_view {
            static constexpr std::string_view n[] = {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"};
            return c.stride.size() >= 1 && c.stride.size() <= 3 ? n[c.stride.size() - 1] : "conv_transpose";
          },
          [](const ConvWeightGrad&) -> std::string_view { return "conv_weight_grad"; },
          [](const MaxPool& p) -> std::string_view {
            static constexpr std::string_view n[] = {"max_pool1d", "max_pool2d", "max_pool3d"};
            return p.kernel.size() >= 1 && p.kernel.size() <= 3 ? n[p.kernel.size() - 1] : "max_pool";
          },
          [](const AvgPool& p) -> std::string_view {
            static constexpr std::string_view n[] = {"avg_pool1d", "avg_pool2d", "avg_pool3d"};
            return p.kernel.size() >= 1 && p.kernel.size() <= 3 ? n[p.kernel.size() - 1] : "avg_pool";
          },
          [](const AdaptiveAvgPool& p) -> std::string_view {
            static constexpr std::string_view n[] = {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"};
            return p.output_size.size() >= 1 && p.output_size.size() <= 3 ? n[p.output_size.size() - 1]
                                                                           : "adaptive_avg_pool";
          },
          [](const Interpolate&) -> std::string_view { return "interpolate"; },
      },
      op);
}

bool is_memory_bound(const Op& op) {
  return std::holds_alternative<Unary>(op) || std::holds_alternative<Binary>(op) ||
         std::holds_alternative<Clamp>(op) || std::holds_alternative<Reshape>(op) ||
         std::holds_alternative<Permute>(op) || std::holds_alternative<Expand>(op) ||
         std::holds_alternative<Flip>(op) || std::holds_alternative<Slice>(op) || std::holds_alternative<Full>(op) ||
         std::holds_alternative<MaskFill>(op) || std::holds_alternative<MaskWhere>(op);
}

}  // namespace burn::ir
