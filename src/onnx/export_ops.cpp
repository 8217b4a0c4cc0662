// Each IR op as ONNX operators (opset 17), one function per op family, in
// the order of <burn/ir/op.hpp>. Where ONNX has the op, one node; where it
// has an equivalent, a few (log1p = Log(Add(x, 1))); where it has neither,
// or only for other dtypes, an error that names the op and says so.
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>

#include <burn/error.hpp>
#include <burn/onnx.hpp>
#include <fmt/format.h>

#include "onnx/export_writer.hpp"

namespace burn::onnx {
namespace {

using I64s = std::vector<std::int64_t>;

[[noreturn]] void unsupported(const OpContext& ctx, std::string_view why) {
  throw Error(kExportOp,
              fmt::format("{} ({} {}) cannot be exported to ONNX opset {}: {}", ir::op_name(ctx.node.op),
                          dtype_name(ctx.out_spec(0).dtype), ctx.out_spec(0).shape.to_string(), kOpsetVersion, why));
}

I64s as_i64(const std::vector<std::size_t>& v) { return I64s(v.begin(), v.end()); }

/// ONNX pads: every begin, then every end (ours are symmetric).
I64s symmetric_pads(const std::vector<std::size_t>& padding) {
  I64s pads = as_i64(padding);
  pads.insert(pads.end(), padding.begin(), padding.end());
  return pads;
}

/// Writes one node whose outputs are the op's own.
::onnx::NodeProto& emit(GraphWriter& w, const OpContext& ctx, std::string_view op_type,
                        std::vector<std::string> inputs) {
  return w.node(op_type, std::move(inputs), ctx.outputs);
}

/// A shape as a 1-D int64 input. With dynamic axes, `twin` is the same shape
/// at the other sizes: dims that differ must each be a symbol itself, and
/// are read from its running size.
std::string shape_input(GraphWriter& w, const OpContext& ctx, const Shape& shape, const Shape* twin) {
  if (!twin || *twin == shape) return w.ints(as_i64(shape.dims()), "shape");
  std::vector<std::string> pieces;
  I64s run;
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    if (shape[i] == (*twin)[i]) {
      run.push_back(static_cast<std::int64_t>(shape[i]));
      continue;
    }
    const auto* symbol = w.symbol_of(shape[i], (*twin)[i]);
    if (!symbol)
      unsupported(ctx, fmt::format("dim {} of its shape {} follows a dynamic axis without being it (a product "
                                   "of sizes?); export with fixed sizes",
                                   i, shape.to_string()));
    if (!run.empty()) pieces.push_back(w.ints(run, "dims"));
    run.clear();
    pieces.push_back(w.symbol_value(*symbol));
  }
  if (!run.empty()) pieces.push_back(w.ints(run, "dims"));
  ::onnx::NodeProto* n = nullptr;
  std::string out = w.node1("Concat", pieces, &n);
  set_attribute(*n, "axis", std::int64_t{0});
  return out;
}

// ---- creation ----------------------------------------------------------------------------

void write(GraphWriter& w, const OpContext& ctx, const ir::Full& op) {
  const Shape* twin = ctx.twin ? &std::get<ir::Full>(ctx.twin->op).shape : nullptr;
  Scalar value = op.value;
  TensorData one = value.kind() == Scalar::Kind::Float ? TensorData(std::vector<double>{value.as_double()})
                                                       : TensorData(std::vector<std::int64_t>{value.as_int()});
  if (op.dtype == DType::Bool) one = TensorData(std::vector<bool>{value.as_bool()});
  auto& n = emit(w, ctx, "ConstantOfShape", {shape_input(w, ctx, op.shape, twin)});
  set_attribute(n, "value", one.convert(op.dtype));
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Arange& op) {
  if (ctx.twin) {
    const auto& t = std::get<ir::Arange>(ctx.twin->op);
    if (t.start != op.start || t.end != op.end || t.step != op.step)
      unsupported(ctx, "its range depends on a dynamic axis; export with fixed sizes");
  }
  // The values, as a constant (ONNX's Range has no 8-bit or unsigned types).
  std::vector<std::int64_t> values;
  for (std::int64_t v = op.start; op.step > 0 ? v < op.end : v > op.end; v += op.step) values.push_back(v);
  emit(w, ctx, "Identity", {w.initializer(TensorData(values).convert(op.dtype), "arange")});
}

void write(GraphWriter&, const OpContext& ctx, const ir::Random&) {
  unsupported(ctx,
              "random values are drawn when the model runs, and ONNX's random operators do not draw what "
              "burn draws; export the model in evaluation mode (dropout is then the identity) and pass "
              "random inputs from outside");
}

// ---- elementwise -------------------------------------------------------------------------

void write(GraphWriter& w, const OpContext& ctx, const ir::Unary& op) {
  using U = ir::UnaryOp;
  const std::string& x = ctx.inputs[0];
  const DType dtype = ctx.in_spec(0).dtype;
  auto one_node = [&](std::string_view type) { emit(w, ctx, type, {x}); };
  switch (op.op) {
    case U::Neg: return one_node("Neg");
    case U::Abs: return one_node("Abs");
    case U::Sign: return one_node("Sign");
    case U::Recip: return one_node("Reciprocal");
    case U::Exp: return one_node("Exp");
    case U::Log: return one_node("Log");
    case U::Sqrt: return one_node("Sqrt");
    case U::Sin: return one_node("Sin");
    case U::Cos: return one_node("Cos");
    case U::Tan: return one_node("Tan");
    case U::Asin: return one_node("Asin");
    case U::Acos: return one_node("Acos");
    case U::Atan: return one_node("Atan");
    case U::Sinh: return one_node("Sinh");
    case U::Cosh: return one_node("Cosh");
    case U::Tanh: return one_node("Tanh");
    case U::Asinh: return one_node("Asinh");
    case U::Acosh: return one_node("Acosh");
    case U::Atanh: return one_node("Atanh");
    case U::Erf: return one_node("Erf");
    case U::Round: return one_node("Round");  // half to even in both
    case U::Floor: return one_node("Floor");
    case U::Ceil: return one_node("Ceil");
    case U::IsNan: return one_node("IsNaN");
    case U::IsInf: return one_node("IsInf");
    case U::LogicalNot: return one_node("Not");
    case U::Log1p: {
      emit(w, ctx, "Log", {w.node1("Add", {x, w.scalar(1.0, dtype)})});
      return;
    }
    case U::Expm1: {
      emit(w, ctx, "Sub", {w.node1("Exp", {x}), w.scalar(1.0, dtype)});
      return;
    }
    case U::Rsqrt: {
      emit(w, ctx, "Reciprocal", {w.node1("Sqrt", {x})});
      return;
    }
    case U::Trunc: {  // sign(x) * floor(|x|)
      emit(w, ctx, "Mul", {w.node1("Sign", {x}), w.node1("Floor", {w.node1("Abs", {x})})});
      return;
    }
    case U::BitNot: unsupported(ctx, "bitwise operators arrive in opset 18");
  }
  unsupported(ctx, "no ONNX operator computes it");
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Binary& op) {
  using B = ir::BinaryOp;
  const std::string& a = ctx.inputs[0];
  const DType dtype = ctx.in_spec(0).dtype;
  const std::string b = op.scalar ? w.scalar(*op.scalar, dtype) : ctx.inputs[1];
  auto two = [&](std::string_view type) { emit(w, ctx, type, {a, b}); };
  switch (op.op) {
    case B::Add: return two("Add");
    case B::Sub: return two("Sub");
    case B::Mul: return two("Mul");
    case B::Div: return two("Div");
    case B::Pow: return two("Pow");
    case B::Max:
      // relu is max(x, 0): ONNX's own operator says so.
      if (op.scalar && is_float(dtype) && op.scalar->as_double() == 0.0) {
        emit(w, ctx, "Relu", {a});
        return;
      }
      return two("Max");
    case B::Min: return two("Min");
    case B::Rem:
      if (!is_float(dtype)) {
        auto& n = emit(w, ctx, "Mod", {a, b});  // fmod = 0: the divisor's sign, as ours
        set_attribute(n, "fmod", std::int64_t{0});
        return;
      }
      // Floats: ONNX's Mod takes the dividend's sign (C fmod); ours the
      // divisor's: a - floor(a / b) * b.
      emit(w, ctx, "Sub", {a, w.node1("Mul", {w.node1("Floor", {w.node1("Div", {a, b})}), b})});
      return;
    case B::LogicalAnd: return two("And");
    case B::LogicalOr: return two("Or");
    case B::LogicalXor: return two("Xor");
    case B::Equal: return two("Equal");
    case B::NotEqual: emit(w, ctx, "Not", {w.node1("Equal", {a, b})}); return;
    case B::Greater: return two("Greater");
    case B::GreaterEqual: return two("GreaterOrEqual");
    case B::Less: return two("Less");
    case B::LessEqual: return two("LessOrEqual");
    case B::Atan2: unsupported(ctx, "ONNX has no atan2");
    case B::BitAnd:
    case B::BitOr:
    case B::BitXor:
    case B::Shl:
    case B::Shr: unsupported(ctx, "bitwise operators arrive in opset 18");
  }
  unsupported(ctx, "no ONNX operator computes it");
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Clamp& op) {
  const DType dtype = ctx.in_spec(0).dtype;
  emit(w, ctx, "Clip", {ctx.inputs[0], op.min ? w.scalar(*op.min, dtype) : "", op.max ? w.scalar(*op.max, dtype) : ""});
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Cast& op) {
  auto& n = emit(w, ctx, "Cast", {ctx.inputs[0]});
  set_attribute(n, "to", static_cast<std::int64_t>(onnx_type(op.dtype)));
}

// ---- matmul -------------------------------------------------------------------------------

void write(GraphWriter& w, const OpContext& ctx, const ir::Matmul&) {
  emit(w, ctx, "MatMul", {ctx.inputs[0], ctx.inputs[1]});
}

// ---- reduce ---------------------------------------------------------------------------------

/// Casts an int64 index result to the op's index dtype (ONNX's are int64).
void index_result(GraphWriter& w, const OpContext& ctx, std::size_t output, const std::string& int64_result) {
  if (ctx.out_spec(output).dtype == DType::I64) {
    w.node("Identity", {int64_result}, {ctx.outputs[output]});
    return;
  }
  auto& n = w.node("Cast", {int64_result}, {ctx.outputs[output]});
  set_attribute(n, "to", static_cast<std::int64_t>(onnx_type(ctx.out_spec(output).dtype)));
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Reduce& op) {
  using R = ir::ReduceOp;
  const std::string& x = ctx.inputs[0];
  const I64s axes{static_cast<std::int64_t>(op.dim)};
  auto reduce = [&](std::string_view type, const std::string& in, const std::vector<std::string>& out) {
    // ReduceSum takes its axes as an input since opset 13; the others keep the attribute until opset 18.
    const bool axes_input = type == "ReduceSum";
    auto& n = w.node(
        type, axes_input ? std::vector<std::string>{in, w.ints(axes, "axes")} : std::vector<std::string>{in}, out);
    if (!axes_input) set_attribute(n, "axes", std::span<const std::int64_t>(axes));
    set_attribute(n, "keepdims", std::int64_t{1});
  };
  switch (op.op) {
    case R::Sum: return reduce("ReduceSum", x, ctx.outputs);
    case R::Prod: return reduce("ReduceProd", x, ctx.outputs);
    case R::Max: return reduce("ReduceMax", x, ctx.outputs);
    case R::Min: return reduce("ReduceMin", x, ctx.outputs);
    case R::Mean:
      if (!is_float(ctx.in_spec(0).dtype))
        unsupported(ctx, "ONNX's ReduceMean is for floats; cast to a float dtype before the mean");
      return reduce("ReduceMean", x, ctx.outputs);
    case R::ArgMax:
    case R::ArgMin: {
      std::string idx = w.fresh("arg");
      auto& n = w.node(op.op == R::ArgMax ? "ArgMax" : "ArgMin", {x}, {idx});
      set_attribute(n, "axis", static_cast<std::int64_t>(op.dim));
      set_attribute(n, "keepdims", std::int64_t{1});
      set_attribute(n, "select_last_index", std::int64_t{0});  // first occurrence, as ours
      index_result(w, ctx, 0, idx);
      return;
    }
    case R::Any:
    case R::All: {
      // Over 0/1 as int32: any = max, all = min, then back to bool.
      ::onnx::NodeProto* cast = nullptr;
      const std::string ints = w.node1("Cast", {x}, &cast);
      set_attribute(*cast, "to", static_cast<std::int64_t>(::onnx::TensorProto::INT32));
      const std::string folded = w.fresh("fold");
      reduce(op.op == R::Any ? "ReduceMax" : "ReduceMin", ints, {folded});
      auto& n = w.node("Cast", {folded}, ctx.outputs);
      set_attribute(n, "to", static_cast<std::int64_t>(::onnx::TensorProto::BOOL));
      return;
    }
  }
  unsupported(ctx, "no ONNX operator computes it");
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Cumulative& op) {
  if (op.op != ir::CumulativeOp::Sum) unsupported(ctx, "ONNX's only scan operator is CumSum");
  emit(w, ctx, "CumSum",
       {ctx.inputs[0],
        w.initializer(TensorData(std::vector<std::int64_t>{static_cast<std::int64_t>(op.dim)}, Shape{}), "axis")});
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Sort& op) {
  if (ctx.input_dim_dynamic(0, op.dim)) unsupported(ctx, "it sorts along a dynamic axis");
  // TopK of the whole dim, sorted. (TopK does not promise stability among equal values.)
  const std::string indices = w.fresh("topk_indices");
  auto& n = w.node("TopK", {ctx.inputs[0], w.ints({static_cast<std::int64_t>(ctx.in_spec(0).shape[op.dim])}, "k")},
                   {ctx.outputs[0], indices});
  set_attribute(n, "axis", static_cast<std::int64_t>(op.dim));
  set_attribute(n, "largest", std::int64_t{op.descending ? 1 : 0});
  set_attribute(n, "sorted", std::int64_t{1});
  index_result(w, ctx, 1, indices);
}

// ---- layout -------------------------------------------------------------------------------

void write(GraphWriter& w, const OpContext& ctx, const ir::Reshape& op) {
  I64s shape = as_i64(op.shape.dims());
  bool has_zero = false;
  for (auto d : shape) has_zero |= d == 0;
  if (ctx.twin) {
    // Dynamic target dims: 0 copies the input's dim at the same place (when
    // that dim is the same dynamic size), and one more may be -1 (inferred
    // from the element count).
    const auto& in = ctx.in_spec(0).shape;
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (!ctx.output_dim_dynamic(0, i)) continue;
      if (i < in.rank() && ctx.input_dim_dynamic(0, i) && in[i] == op.shape[i] &&
          ctx.twin->inputs[0]->spec().shape[i] == std::get<ir::Reshape>(ctx.twin->op).shape[i])
        shape[i] = 0;
      else open.push_back(i);
    }
    if (has_zero) unsupported(ctx, "its target has an empty dim, and a dim is dynamic");
    if (open.size() > 1) {
      // More than one dim to infer: the target's dynamic dims from the symbols' running sizes.
      emit(w, ctx, "Reshape",
           {ctx.inputs[0], shape_input(w, ctx, op.shape, &std::get<ir::Reshape>(ctx.twin->op).shape)});
      return;
    }
    if (open.size() == 1) shape[open[0]] = -1;
  }
  auto& n = emit(w, ctx, "Reshape", {ctx.inputs[0], w.ints(shape, "shape")});
  if (has_zero) set_attribute(n, "allowzero", std::int64_t{1});
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Permute& op) {
  auto& n = emit(w, ctx, "Transpose", {ctx.inputs[0]});
  const I64s perm = as_i64(op.axes);
  set_attribute(n, "perm", std::span<const std::int64_t>(perm));
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Expand& op) {
  I64s shape = as_i64(op.shape.dims());
  bool from_symbols = false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (!ctx.output_dim_dynamic(0, i)) continue;
    // 1 keeps the input's (dynamic) dim; a size-1 dim broadcast to a dynamic
    // size takes the symbol's running size.
    if (ctx.input_dim_dynamic(0, i)) shape[i] = 1;
    else from_symbols = true;
  }
  if (from_symbols) {
    emit(w, ctx, "Expand", {ctx.inputs[0], shape_input(w, ctx, op.shape, &std::get<ir::Expand>(ctx.twin->op).shape)});
    return;
  }
  emit(w, ctx, "Expand", {ctx.inputs[0], w.ints(shape, "shape")});
}

void write_slice(GraphWriter& w, const OpContext& ctx, const std::vector<ir::SliceRange>& ranges) {
  I64s starts, ends, axes, steps;
  const auto& in = ctx.in_spec(0).shape;
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    const auto& r = ranges[d];
    const bool whole = r.start == 0 && r.step == 1 && r.len == in[d];
    if (ctx.input_dim_dynamic(0, d)) {
      if (whole) continue;  // a dynamic axis kept whole: not sliced at all
      unsupported(ctx, "it slices a dynamic axis; export with fixed sizes");
    }
    if (whole) continue;
    const auto start = static_cast<std::int64_t>(r.start);
    std::int64_t end = start + static_cast<std::int64_t>(r.len) * r.step;
    if (r.len == 0) end = start;
    // A negative step running past index 0: ONNX clamps an end below -dim to "before the first".
    if (r.step < 0 && end < 0) end = std::numeric_limits<std::int64_t>::min();
    starts.push_back(start);
    ends.push_back(end);
    axes.push_back(static_cast<std::int64_t>(d));
    steps.push_back(r.step);
  }
  if (axes.empty()) {
    emit(w, ctx, "Identity", {ctx.inputs[0]});
    return;
  }
  emit(w, ctx, "Slice",
       {ctx.inputs[0], w.ints(starts, "starts"), w.ints(ends, "ends"), w.ints(axes, "axes"), w.ints(steps, "steps")});
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Slice& op) { write_slice(w, ctx, op.ranges); }

void write(GraphWriter& w, const OpContext& ctx, const ir::Flip& op) {
  std::vector<ir::SliceRange> ranges;
  const auto& in = ctx.in_spec(0).shape;
  for (std::size_t d = 0; d < in.rank(); ++d) ranges.push_back({0, in[d], 1});
  for (auto a : op.axes) {
    if (ctx.input_dim_dynamic(0, a)) unsupported(ctx, "it flips a dynamic axis");
    if (in[a] > 0) ranges[a] = {in[a] - 1, in[a], -1};
  }
  write_slice(w, ctx, ranges);
}

void write(GraphWriter&, const OpContext& ctx, const ir::SliceAssign&) {
  unsupported(ctx, "slice assignment has no ONNX operator in this exporter yet; build the result with cat of slices");
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Cat& op) {
  auto& n = emit(w, ctx, "Concat", ctx.inputs);
  set_attribute(n, "axis", static_cast<std::int64_t>(op.dim));
}

void write(GraphWriter&, const OpContext& ctx, const ir::Unfold&) {
  unsupported(ctx, "ONNX has no sliding-window operator");
}

// ---- indexing -------------------------------------------------------------------------------

/// ONNX index inputs are int32 or int64.
std::string onnx_indices(GraphWriter& w, const OpContext& ctx, std::size_t input) {
  const DType d = ctx.in_spec(input).dtype;
  if (d == DType::I64 || d == DType::I32) return ctx.inputs[input];
  ::onnx::NodeProto* n = nullptr;
  std::string out = w.node1("Cast", {ctx.inputs[input]}, &n);
  set_attribute(*n, "to", static_cast<std::int64_t>(::onnx::TensorProto::INT64));
  return out;
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Gather& op) {
  auto& n = emit(w, ctx, "GatherElements", {ctx.inputs[0], onnx_indices(w, ctx, 1)});
  set_attribute(n, "axis", static_cast<std::int64_t>(op.dim));
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Scatter& op) {
  auto& n = emit(w, ctx, "ScatterElements", {ctx.inputs[0], onnx_indices(w, ctx, 1), ctx.inputs[2]});
  set_attribute(n, "axis", static_cast<std::int64_t>(op.dim));
  if (op.reduce == ir::IndexReduce::Add) set_attribute(n, "reduction", std::string("add"));
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Select& op) {
  auto& n = emit(w, ctx, "Gather", {ctx.inputs[0], onnx_indices(w, ctx, 1)});
  set_attribute(n, "axis", static_cast<std::int64_t>(op.dim));
}

void write(GraphWriter&, const OpContext& ctx, const ir::SelectAssign&) {
  unsupported(ctx, "index assignment along a dim has no ONNX operator in this exporter yet");
}

void write(GraphWriter& w, const OpContext& ctx, const ir::MaskWhere&) {
  emit(w, ctx, "Where", {ctx.inputs[1], ctx.inputs[2], ctx.inputs[0]});
}

/// Whether `mask` is `x <= 0` (a scalar comparison of x itself): burn's relu
/// is mask_fill(x, x <= 0, 0), which is ONNX's Relu (NaN stays NaN in both).
bool is_relu_mask(const capture::CapturedValue& x, const capture::CapturedValue& mask) {
  const auto& node = mask.node();
  if (!node || node->inputs.size() != 1 || node->inputs[0].get() != &x) return false;
  const auto* cmp = std::get_if<ir::Binary>(&node->op);
  return cmp && cmp->op == ir::BinaryOp::LessEqual && cmp->scalar && cmp->scalar->as_double() == 0.0;
}

void write(GraphWriter& w, const OpContext& ctx, const ir::MaskFill& op) {
  if (is_float(ctx.in_spec(0).dtype) && op.value.as_double() == 0.0 &&
      is_relu_mask(*ctx.node.inputs[0], *ctx.node.inputs[1])) {
    emit(w, ctx, "Relu", {ctx.inputs[0]});  // the comparison is left unused, and pruned
    return;
  }
  emit(w, ctx, "Where", {ctx.inputs[1], w.scalar(op.value, ctx.in_spec(0).dtype), ctx.inputs[0]});
}

// ---- conv, pool, interpolate ------------------------------------------------------------------

/// What Conv and ConvTranspose share: x, w and the optional bias in, the
/// kernel from w's spatial dims, and the window's geometry.
::onnx::NodeProto& write_convolution(GraphWriter& w, const OpContext& ctx, std::string_view op_type, bool has_bias,
                                     const std::vector<std::size_t>& stride, const std::vector<std::size_t>& padding,
                                     const std::vector<std::size_t>& dilation, std::size_t groups) {
  std::vector<std::string> in{ctx.inputs[0], ctx.inputs[1]};
  if (has_bias) in.push_back(ctx.inputs[2]);
  auto& n = emit(w, ctx, op_type, in);
  const auto& ws = ctx.in_spec(1).shape;
  const I64s kernel(ws.dims().begin() + 2, ws.dims().end());
  set_attribute(n, "kernel_shape", std::span<const std::int64_t>(kernel));
  const I64s strides = as_i64(stride), dilations = as_i64(dilation), pads = symmetric_pads(padding);
  set_attribute(n, "strides", std::span<const std::int64_t>(strides));
  set_attribute(n, "dilations", std::span<const std::int64_t>(dilations));
  set_attribute(n, "pads", std::span<const std::int64_t>(pads));
  set_attribute(n, "group", static_cast<std::int64_t>(groups));
  return n;
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Conv& op) {
  write_convolution(w, ctx, "Conv", op.has_bias, op.stride, op.padding, op.dilation, op.groups);
}

void write(GraphWriter& w, const OpContext& ctx, const ir::ConvTranspose& op) {
  auto& n = write_convolution(w, ctx, "ConvTranspose", op.has_bias, op.stride, op.padding, op.dilation, op.groups);
  const I64s out_pad = as_i64(op.padding_out);
  set_attribute(n, "output_padding", std::span<const std::int64_t>(out_pad));
}

void write(GraphWriter&, const OpContext& ctx, const ir::ConvWeightGrad&) {
  unsupported(ctx, "it is a backward kernel; export a forward pass");
}

void write(GraphWriter& w, const OpContext& ctx, const ir::MaxPool& op) {
  // ONNX's MaxPool indices count over the whole tensor, ours within each
  // channel's plane: only the values are exported.
  if (op.with_indices && ctx.output_used.size() > 1 && ctx.output_used[1])
    unsupported(ctx, "its indices are used, and ONNX numbers them differently (over the whole tensor)");
  std::vector<std::string> outputs{ctx.outputs[0]};
  auto& n = w.node("MaxPool", {ctx.inputs[0]}, outputs);
  const I64s kernel = as_i64(op.kernel), strides = as_i64(op.stride), dilations = as_i64(op.dilation),
             pads = symmetric_pads(op.padding);
  set_attribute(n, "kernel_shape", std::span<const std::int64_t>(kernel));
  set_attribute(n, "strides", std::span<const std::int64_t>(strides));
  set_attribute(n, "dilations", std::span<const std::int64_t>(dilations));
  set_attribute(n, "pads", std::span<const std::int64_t>(pads));
  set_attribute(n, "ceil_mode", std::int64_t{op.ceil_mode ? 1 : 0});
}

void write(GraphWriter& w, const OpContext& ctx, const ir::AvgPool& op) {
  auto& n = emit(w, ctx, "AveragePool", {ctx.inputs[0]});
  const I64s kernel = as_i64(op.kernel), strides = as_i64(op.stride), pads = symmetric_pads(op.padding);
  set_attribute(n, "kernel_shape", std::span<const std::int64_t>(kernel));
  set_attribute(n, "strides", std::span<const std::int64_t>(strides));
  set_attribute(n, "pads", std::span<const std::int64_t>(pads));
  set_attribute(n, "ceil_mode", std::int64_t{op.ceil_mode ? 1 : 0});
  set_attribute(n, "count_include_pad", std::int64_t{op.count_include_pad ? 1 : 0});
}

void write(GraphWriter& w, const OpContext& ctx, const ir::AdaptiveAvgPool& op) {
  const auto& in = ctx.in_spec(0).shape;
  bool global = true, even = true;
  for (std::size_t i = 0; i < op.output_size.size(); ++i) {
    global &= op.output_size[i] == 1;
    even &= op.output_size[i] > 0 && in[2 + i] % op.output_size[i] == 0;
  }
  if (global) {
    emit(w, ctx, "GlobalAveragePool", {ctx.inputs[0]});
    return;
  }
  for (std::size_t i = 2; i < in.rank(); ++i)
    if (ctx.input_dim_dynamic(0, i))
      unsupported(ctx, "its windows depend on a dynamic spatial size; ONNX pools with fixed windows");
  if (!even)
    unsupported(ctx,
                "ONNX pools with one window size; adaptive pooling to a size that does not divide the input "
                "has windows of several sizes");
  // Windows that tile the input exactly: an ordinary average pool.
  I64s kernel;
  for (std::size_t i = 0; i < op.output_size.size(); ++i)
    kernel.push_back(static_cast<std::int64_t>(in[2 + i] / op.output_size[i]));
  auto& n = emit(w, ctx, "AveragePool", {ctx.inputs[0]});
  set_attribute(n, "kernel_shape", std::span<const std::int64_t>(kernel));
  set_attribute(n, "strides", std::span<const std::int64_t>(kernel));
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Interpolate& op) {
  const auto& in = ctx.in_spec(0).shape;
  const Shape sizes{in[0], in[1], op.output_size[0], op.output_size[1]};
  std::optional<Shape> twin;
  if (ctx.twin) {
    const auto& t = ctx.twin->inputs[0]->spec().shape;
    const auto& o = std::get<ir::Interpolate>(ctx.twin->op).output_size;
    twin = Shape{t[0], t[1], o[0], o[1]};
  }
  auto& n = emit(w, ctx, "Resize", {ctx.inputs[0], "", "", shape_input(w, ctx, sizes, twin ? &*twin : nullptr)});
  switch (op.mode) {
    case ir::InterpolateMode::Nearest:
      set_attribute(n, "mode", std::string("nearest"));
      set_attribute(n, "coordinate_transformation_mode", std::string("asymmetric"));
      set_attribute(n, "nearest_mode", std::string("floor"));
      break;
    case ir::InterpolateMode::Bilinear:
    case ir::InterpolateMode::Bicubic:
      set_attribute(n, "mode", std::string(op.mode == ir::InterpolateMode::Bilinear ? "linear" : "cubic"));
      set_attribute(n, "coordinate_transformation_mode",
                    std::string(op.align_corners ? "align_corners" : "pytorch_half_pixel"));
      if (op.mode == ir::InterpolateMode::Bicubic) set_attribute(n, "cubic_coeff_a", -0.75F);
      break;
  }
}

// ---- norm ----------------------------------------------------------------------------------

/// LayerNormalization over the last axis: burn's op, and the composite a
/// device without it records.
void write_layer_norm(GraphWriter& w, const OpContext& ctx, std::vector<std::string> inputs, double epsilon) {
  auto& n = emit(w, ctx, "LayerNormalization", std::move(inputs));
  set_attribute(n, "axis", std::int64_t{-1});
  set_attribute(n, "epsilon", static_cast<float>(epsilon));
}

void write(GraphWriter& w, const OpContext& ctx, const ir::LayerNorm& op) {
  write_layer_norm(w, ctx, ctx.inputs, op.epsilon);
}

// ---- activation ----------------------------------------------------------------------------

void write_softmax(GraphWriter& w, const OpContext& ctx, bool log, std::vector<std::string> inputs, std::int64_t axis) {
  auto& n = emit(w, ctx, log ? "LogSoftmax" : "Softmax", std::move(inputs));
  set_attribute(n, "axis", axis);
}

void write(GraphWriter& w, const OpContext& ctx, const ir::Softmax& op) {
  write_softmax(w, ctx, op.log, ctx.inputs, -1);
}

// The capture device records batch norm in training as the composite (its
// supports_op), so this op reaches an export only from a graph made
// elsewhere: ONNX's BatchNormalization returns running statistics, not the
// batch's.
void write(GraphWriter&, const OpContext& ctx, const ir::BatchNorm&) {
  unsupported(ctx,
              "batch normalisation with the batch's statistics (training mode) has no ONNX operator; export "
              "the model in evaluation mode");
}

// Opset 17 has no Gelu operator (it arrives in opset 20): the formula, in
// the order burn computes it.
void write(GraphWriter& w, const OpContext& ctx, const ir::Gelu& op) {
  const std::string& x = ctx.inputs[0];
  const DType dtype = ctx.in_spec(0).dtype;
  auto times = [&](const std::string& a, double s) { return w.node1("Mul", {a, w.scalar(s, dtype)}); };
  std::string u;  // the argument of erf or tanh
  if (op.tanh) {
    const std::string cube = w.node1("Mul", {w.node1("Mul", {x, x}), x});
    u = times(w.node1("Add", {x, times(cube, 0.044715)}), std::sqrt(2.0 / std::numbers::pi));
  } else {
    u = times(x, 1.0 / std::numbers::sqrt2);
  }
  const std::string one_plus = w.node1("Add", {w.node1(op.tanh ? "Tanh" : "Erf", {u}), w.scalar(1.0, dtype)});
  emit(w, ctx, "Mul", {w.node1("Mul", {x, one_plus}), w.scalar(0.5, dtype)});
}

}  // namespace

void write_composite(GraphWriter& w, const OpContext& ctx, const capture::CompositeMark& mark,
                     const std::vector<std::string>& inputs) {
  using detail::Composite;
  switch (mark.kind) {
    case Composite::Softmax:
    case Composite::LogSoftmax: write_softmax(w, ctx, mark.kind == Composite::LogSoftmax, inputs, mark.dim); return;
    case Composite::LayerNorm: write_layer_norm(w, ctx, inputs, mark.epsilon); return;
    case Composite::Linear:
      emit(w, ctx, "Gemm", inputs);  // our weight is [d_in, d_out]: no transB
      return;
    case Composite::BatchNorm: {
      auto& n = emit(w, ctx, "BatchNormalization", inputs);
      set_attribute(n, "epsilon", static_cast<float>(mark.epsilon));
      return;
    }
  }
  write_op(w, ctx);
}

void write_op(GraphWriter& w, const OpContext& ctx) {
  std::visit([&](const auto& op) { write(w, ctx, op); }, ctx.node.op);
}

}  // namespace burn::onnx
