#include "backends/cuda/codegen.hpp"

#include <cmath>
#include <map>
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "fusion/row_reduce.hpp"

namespace burn::cuda {
namespace {

using ir::BinaryOp;
using ir::UnaryOp;
using Arg = fusion::ElementwiseProgram::Arg;

/// How a dtype lives in memory and in registers.
struct TypeInfo {
  const char* storage;  // element type in memory
  const char* compute;  // type the kernel computes in
  const char* tag;      // names helpers per compute type
  const char* unsigned_compute;
  bool is_float = false;
  bool is_signed = false;
  bool is_bool = false;
  int bits = 0;  // the storage width of an int
};

TypeInfo type_info(DType d) {
  switch (d) {
    case DType::F64: return {"double", "double", "f64", "", true, true, false, 64};
    case DType::F32: return {"float", "float", "f32", "", true, true, false, 32};
    // Both half types are 16 bits in memory, f32 in registers.
    case DType::F16:
    case DType::BF16: return {"unsigned short", "float", "f32", "", true, true, false, 16};
    case DType::I64: return {"long long", "long long", "i64", "unsigned long long", false, true, false, 64};
    case DType::I32: return {"int", "int", "i32", "unsigned int", false, true, false, 32};
    case DType::I16: return {"short", "int", "i32", "unsigned int", false, true, false, 16};
    case DType::I8: return {"signed char", "int", "i32", "unsigned int", false, true, false, 8};
    case DType::U64:
      return {"unsigned long long", "unsigned long long", "u64", "unsigned long long", false, false, false, 64};
    case DType::U32: return {"unsigned int", "unsigned int", "u32", "unsigned int", false, false, false, 32};
    case DType::U16: return {"unsigned short", "unsigned int", "u32", "unsigned int", false, false, false, 16};
    case DType::U8: return {"unsigned char", "unsigned int", "u32", "unsigned int", false, false, false, 8};
    case DType::Bool: return {"unsigned char", "bool", "bool", "", false, false, true, 8};
  }
  return {};
}

bool computes_in_double(DType d) { return d == DType::F64; }

/// The lowest and highest values of an int dtype as C literals.
std::pair<std::string, std::string> int_range(DType d) {
  switch (d) {
    case DType::I64: return {"(-9223372036854775807ll - 1)", "9223372036854775807ll"};
    case DType::I32: return {"(-2147483647 - 1)", "2147483647"};
    case DType::I16: return {"-32768", "32767"};
    case DType::I8: return {"-128", "127"};
    case DType::U64: return {"0ull", "18446744073709551615ull"};
    case DType::U32: return {"0u", "4294967295u"};
    case DType::U16: return {"0u", "65535u"};
    case DType::U8: return {"0u", "255u"};
    default: return {"0", "1"};
  }
}

// The half conversions; bf16 rounds to nearest even by integer arithmetic
// with NaN kept quiet, the same on every architecture (cvt to bf16 needs
// sm_80).
constexpr const char* kF16Helpers =
    "__device__ __forceinline__ float burn_f16_load(unsigned short h) {\n"
    "  float f;\n"
    "  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
    "  return f;\n"
    "}\n"
    "__device__ __forceinline__ unsigned short burn_f16_store(float f) {\n"
    "  unsigned short h;\n"
    "  asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
    "  return h;\n"
    "}\n";
constexpr const char* kBf16Helpers =
    "__device__ __forceinline__ float burn_bf16_load(unsigned short h) {\n"
    "  return __uint_as_float(((unsigned int)h) << 16);\n"
    "}\n"
    "__device__ __forceinline__ unsigned short burn_bf16_store(float f) {\n"
    "  const unsigned int u = __float_as_uint(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);\n"
    "  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
    "}\n";

/// Device functions a kernel may need, emitted only when used (NVRTC warns
/// about nothing then, and compiles less).
const std::map<std::string, std::string>& fixed_helpers() {
  static const std::map<std::string, std::string> helpers{
      // fmod takes the dividend's sign; the result takes the divisor's.
      {"rem_f32",
       "__device__ __forceinline__ float burn_rem_f32(float x, float y) {\n"
       "  float r = fmodf(x, y);\n"
       "  if (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) r += y;\n"
       "  return r;\n"
       "}\n"},
      {"rem_f64",
       "__device__ __forceinline__ double burn_rem_f64(double x, double y) {\n"
       "  double r = fmod(x, y);\n"
       "  if (r != 0.0 && ((r < 0.0) != (y < 0.0))) r += y;\n"
       "  return r;\n"
       "}\n"},
  };
  return helpers;
}

/// Integer helpers, one per compute type: T the type, U its unsigned twin.
std::string int_helper(std::string_view kind, const TypeInfo& t) {
  const std::string T = t.compute;
  const std::string U = t.unsigned_compute;
  const std::string tag = t.tag;
  if (kind == "div") {
    return fmt::format(
        "__device__ __forceinline__ {0} burn_div_{2}({0} x, {0} y, unsigned int* err) {{\n"
        "  if (y == 0) {{ atomicOr(err, {3}u); return 0; }}\n"
        "{4}"
        "  return x / y;\n"
        "}}\n",
        T, U, tag, static_cast<unsigned>(kErrorDivByZero),
        t.is_signed ? fmt::format("  if (y == -1) return ({0})(({1})0 - ({1})x);\n", T, U) : "");
  }
  if (kind == "rem") {
    return fmt::format(
        "__device__ __forceinline__ {0} burn_rem_{1}({0} x, {0} y, unsigned int* err) {{\n"
        "  if (y == 0) {{ atomicOr(err, {2}u); return 0; }}\n"
        "{3}"
        "}}\n",
        T, tag, static_cast<unsigned>(kErrorRemByZero),
        t.is_signed ? fmt::format("  if (y == -1) return 0;\n"
                                  "  {0} r = x % y;\n"
                                  "  if (r != 0 && ((r < 0) != (y < 0))) r += y;\n"
                                  "  return r;\n",
                                  T)
                    : std::string("  return x % y;\n"));
  }
  if (kind == "pow") {
    // Power by squaring in the unsigned twin (wraps like repeated
    // multiplication); a negative exponent follows integer division.
    return fmt::format(
        "__device__ __forceinline__ {0} burn_pow_{2}({0} b, {0} e, unsigned int* err) {{\n"
        "{3}"
        "  {1} r = 1, x = ({1})b;\n"
        "  for ({1} k = ({1})e; k != 0; k >>= 1) {{\n"
        "    if (k & 1) r *= x;\n"
        "    x *= x;\n"
        "  }}\n"
        "  return ({0})r;\n"
        "}}\n",
        T, U, tag,
        t.is_signed ? fmt::format("  if (e < 0) {{\n"
                                  "    if (b == 0) {{ atomicOr(err, {0}u); return 0; }}\n"
                                  "    if (b == 1) return 1;\n"
                                  "    if (b == -1) return (e & 1) ? -1 : 1;\n"
                                  "    return 0;\n"
                                  "  }}\n",
                                  static_cast<unsigned>(kErrorPowNegative))
                    : std::string("  (void)err;\n"));
  }
  // Shifts: `bits` is the storage width; counts at or past it shift
  // everything out, a negative count is an error.
  const std::string negative_count = t.is_signed ? fmt::format("  if (y < 0) {{ atomicOr(err, {}u); return 0; }}\n",
                                                               static_cast<unsigned>(kErrorNegativeShift))
                                                 : std::string("  (void)err;\n");
  if (kind == "shl") {
    return fmt::format(
        "__device__ __forceinline__ {0} burn_shl_{2}({0} x, {0} y, int bits, unsigned int* err) {{\n"
        "{3}"
        "  if (({1})y >= ({1})bits) return 0;\n"
        "  return ({0})(({1})x << y);\n"
        "}}\n",
        T, U, tag, negative_count);
  }
  return fmt::format(
      "__device__ __forceinline__ {0} burn_shr_{2}({0} x, {0} y, int bits, unsigned int* err) {{\n"
      "{3}"
      "  if (({1})y >= ({1})bits) return {4};\n"
      "  return x >> y;\n"
      "}}\n",
      T, U, tag, negative_count, t.is_signed ? "(x < 0 ? -1 : 0)" : "0");
}

std::string float_literal(DType d, std::string_view value) {
  return computes_in_double(d) ? std::string(value) : fmt::format("{}f", value);
}

/// One kernel's text, built instruction by instruction.
class Generator {
 public:
  Generator(const fusion::ElementwiseProgram& program, Indexing indexing, std::size_t rank)
      : p_(program), indexing_(rank == 0 ? Indexing::Contiguous : indexing), rank_(rank) {}

  ElementwiseKernel run() {
    layout_.indexing = indexing_;
    layout_.rank = rank_;
    layout_.operands = p_.outputs.size() + p_.inputs.size();
    std::string body;
    for (const auto& instr : p_.instrs) body += instruction(instr);
    if (indexing_ == Indexing::Contiguous) return run_unrolled(body);
    std::string loads;
    for (std::size_t k = 0; k < p_.inputs.size(); ++k) {
      const DType d = p_.inputs[k].dtype;
      const std::size_t operand = p_.outputs.size() + k;
      loads += fmt::format(
          "    const {} in{} = {};\n", type_info(d).compute, k,
          load(d, fmt::format("((const {}*)p.ptr[{}])[{}]", type_info(d).storage, operand, offset(operand))));
    }
    std::string stores;
    for (std::size_t j = 0; j < p_.outputs.size(); ++j) {
      const DType d = p_.values[p_.outputs[j]].dtype;
      stores += fmt::format("    (({}*)p.ptr[{}])[{}] = {};\n", type_info(d).storage, j, offset(j),
                            store(d, fmt::format("v{}", p_.outputs[j])));
    }
    std::string source =
        grid_stride_kernel("elementwise", text_.helpers(), fields(), offsets() + loads + body + stores);
    return {kKernelEntry, std::move(source), std::move(layout_)};
  }

  // Every operand has the program's shape, so item i is element i of each.
  // A thread loads its turn's kItemsPerThread items of every input, then
  // computes and stores them one by one (unrolled_grid_stride_kernel).
  ElementwiseKernel run_unrolled(const std::string& body) {
    std::string ahead, fetch, take;
    for (std::size_t k = 0; k < p_.inputs.size(); ++k) {
      const DType d = p_.inputs[k].dtype;
      const std::size_t operand = p_.outputs.size() + k;
      ahead += fmt::format("    {} in{}_ahead[{}] = {{}};\n", type_info(d).compute, k, kItemsPerThread);
      fetch += fmt::format("      if (i < p.n) in{}_ahead[u] = {};\n", k,
                           load(d, fmt::format("((const {}*)p.ptr[{}])[i]", type_info(d).storage, operand)));
      take += fmt::format("      const {0} in{1} = in{1}_ahead[u];\n", type_info(d).compute, k);
    }
    std::string stores;
    for (std::size_t j = 0; j < p_.outputs.size(); ++j) {
      const DType d = p_.values[p_.outputs[j]].dtype;
      stores += fmt::format("      (({}*)p.ptr[{}])[i] = {};\n", type_info(d).storage, j,
                            store(d, fmt::format("v{}", p_.outputs[j])));
    }
    const std::string turn = fmt::format(
        "#pragma unroll\n"
        "    for (unsigned int u = 0; u < {}u; ++u) {{\n"
        "      const unsigned long long i = first + u * step;\n",
        kItemsPerThread);
    const std::string loads = p_.inputs.empty() ? std::string() : ahead + turn + fetch + "    }\n";
    std::string source =
        unrolled_grid_stride_kernel("elementwise", text_.helpers(), fields(),
                                    loads + turn + "      if (i >= p.n) break;\n" + take + body + stores + "    }\n");
    return {kKernelEntry, std::move(source), std::move(layout_)};
  }

  ElementwiseKernel run_rows() {
    layout_.indexing = Indexing::Strided;
    layout_.rows = true;
    layout_.rank = rank_;
    layout_.operands = p_.outputs.size() + p_.inputs.size();
    const std::size_t last = rank_ - 1;
    const std::uint64_t len = p_.shape[last];
    layout_.block = folds_by_block(len, len == 0 ? 0 : p_.shape.num_elements() / len, 1);
    // Per-row values: inputs of the statistics' shape, reductions, and the
    // elementwise results of per-row values only. The rest is per element.
    const Shape stat_shape = fusion::row_stat_shape(p_.shape);
    row_input_.assign(p_.inputs.size(), false);
    row_value_.assign(p_.values.size(), false);
    for (std::size_t k = 0; k < p_.inputs.size(); ++k) row_input_[k] = p_.inputs[k].shape == stat_shape;
    for (const auto& instr : p_.instrs) {
      bool per_row = std::holds_alternative<ir::Reduce>(p_.ops[instr.op]);
      if (!per_row) {
        per_row = true;
        for (const Arg& a : instr.args) per_row = per_row && per_row_arg(a);
      }
      row_value_[instr.result] = per_row;
    }

    // The row's offsets: every dim but the last, from the row index.
    std::string body = fmt::format(
        "    long long roff[{0}] = {{}};\n"
        "    unsigned long long rest = i;\n"
        "    for (int d = {1} - 1; d >= 0; --d) {{\n"
        "      const long long c = (long long)(rest % p.shape[d]);\n"
        "      rest /= p.shape[d];\n"
        "      for (int k = 0; k < {0}; ++k) roff[k] += c * p.stride[k][d];\n"
        "    }}\n"
        "    const unsigned long long len = p.shape[{1}];\n",
        layout_.operands, last);
    for (std::size_t k = 0; k < p_.inputs.size(); ++k)
      if (row_input_[k]) body += input_load(k, "roff[{0}]");
    // In program order: per-row instructions at row scope, and for each
    // reduction a pass over the row computing what its fold reads.
    for (const auto& instr : p_.instrs) {
      const ir::Op& op = p_.ops[instr.op];
      if (const auto* r = std::get_if<ir::Reduce>(&op)) {
        const DType in = arg_dtype(instr.args[0]);
        const DType out = p_.values[instr.result].dtype;
        const std::string name = fmt::format("r{}", instr.result);
        const LineFold fold = line_fold(r->op, in, out, name, arg(instr.args[0]), "e", "len");
        body += fold.declare;
        body += element_pass({instr.args[0]}, fold.step);
        if (layout_.block) body += block_fold(fold);
        body += fmt::format("    const {} v{} = {};\n", type_info(out).compute, instr.result, narrow(out, fold.result));
      } else if (row_value_[instr.result]) {
        body += instruction(instr);
      }
    }
    // The last pass writes the full-size outputs; per-row outputs are
    // written once per row (row-major, so at the row's index).
    std::vector<Arg> full_outputs;
    std::string stores;
    for (std::size_t j = 0; j < p_.outputs.size(); ++j) {
      const std::uint32_t v = p_.outputs[j];
      const DType d = p_.values[v].dtype;
      if (row_value_[v]) {
        body += fmt::format("    {}(({}*)p.ptr[{}])[i] = {};\n", layout_.block ? "if (t == 0) " : "",
                            type_info(d).storage, j, store(d, fmt::format("v{}", v)));
        continue;
      }
      full_outputs.push_back({false, v});
      stores += fmt::format("      (({}*)p.ptr[{}])[roff[{}] + (long long)e * p.stride[{}][{}]] = {};\n",
                            type_info(d).storage, j, j, j, last, store(d, fmt::format("v{}", v)));
    }
    if (!full_outputs.empty()) body += element_pass(full_outputs, stores);
    std::string source = layout_.block ? block_stride_kernel("fused rows", text_.helpers(), fields(), body)
                                       : grid_stride_kernel("fused rows", text_.helpers(), fields(), body);
    return {kKernelEntry, std::move(source), std::move(layout_)};
  }

 private:
  bool per_row_arg(const Arg& a) const { return a.is_input ? row_input_[a.index] : row_value_[a.index]; }

  /// `const T in<k> = ...;` reading input k at offset `at` ({0}: its operand).
  std::string input_load(std::size_t k, std::string_view at) {
    const DType d = p_.inputs[k].dtype;
    const std::size_t operand = p_.outputs.size() + k;
    const std::string offset = fmt::format(fmt::runtime(at), operand);
    return fmt::format("    const {} in{} = {};\n", type_info(d).compute, k,
                       load(d, fmt::format("((const {}*)p.ptr[{}])[{}]", type_info(d).storage, operand, offset)));
  }

  /// A loop over the row's elements e computing the per-element values
  /// `targets` need (and nothing else: NVRTC warns about unused
  /// variables), then `tail`.
  std::string element_pass(const std::vector<Arg>& targets, const std::string& tail) {
    std::vector<bool> input_needed(p_.inputs.size(), false), value_needed(p_.values.size(), false);
    std::vector<Arg> stack;
    for (const Arg& a : targets)
      if (!per_row_arg(a)) stack.push_back(a);
    while (!stack.empty()) {
      const Arg a = stack.back();
      stack.pop_back();
      if (a.is_input) {
        input_needed[a.index] = true;
        continue;
      }
      if (value_needed[a.index]) continue;
      value_needed[a.index] = true;
      for (const auto& instr : p_.instrs)
        if (instr.result == a.index)
          for (const Arg& b : instr.args)
            if (!per_row_arg(b)) stack.push_back(b);
    }
    const std::size_t last = rank_ - 1;
    std::string s = layout_.block ? "    for (unsigned long long e = t; e < len; e += BURN_BLOCK) {\n"
                                  : "    for (unsigned long long e = 0; e < len; ++e) {\n";
    for (std::size_t k = 0; k < p_.inputs.size(); ++k)
      if (input_needed[k])
        s += "  " + input_load(k, fmt::format("roff[{{0}}] + (long long)e * p.stride[{{0}}][{}]", last));
    for (const auto& instr : p_.instrs)
      if (value_needed[instr.result]) s += "  " + instruction(instr);
    return s + tail + "    }\n";
  }

  /// The parameter block after `n`, as ElementwiseLayout orders it.
  std::string fields() const {
    std::string s;
    if (indexing_ == Indexing::Strided) s += fmt::format("  unsigned long long shape[{}];\n", rank_);
    s += fmt::format("  void* ptr[{}];\n", layout_.operands);
    if (indexing_ == Indexing::Strided) s += fmt::format("  long long stride[{}][{}];\n", layout_.operands, rank_);
    if (!layout_.scalars.empty()) s += fmt::format("  unsigned long long scalar[{}];\n", layout_.scalars.size());
    s += "  unsigned int* error;\n";
    return s;
  }

  std::string offsets() const {
    if (indexing_ == Indexing::Contiguous) return {};
    return fmt::format(
        "    long long off[{0}] = {{}};\n"
        "    unsigned long long rest = i;\n"
        "#pragma unroll\n"
        "    for (int d = {1} - 1; d >= 0; --d) {{\n"
        "      const long long c = (long long)(rest % p.shape[d]);\n"
        "      rest /= p.shape[d];\n"
        "#pragma unroll\n"
        "      for (int k = 0; k < {0}; ++k) off[k] += c * p.stride[k][d];\n"
        "    }}\n",
        layout_.operands, rank_);
  }

  std::string offset(std::size_t operand) const {
    return indexing_ == Indexing::Contiguous ? std::string("i") : fmt::format("off[{}]", operand);
  }

  void need(const std::string& name) { text_.need(name, fixed_helpers().at(name)); }
  std::string need_int(std::string_view kind, const TypeInfo& t) {
    const std::string name = fmt::format("{}_{}", kind, t.tag);
    text_.need(name, int_helper(kind, t));
    return "burn_" + name;
  }
  std::string load(DType d, const std::string& element) { return text_.load(d, element); }
  std::string store(DType d, const std::string& value) { return text_.store(d, value); }
  std::string narrow(DType d, const std::string& value) { return text_.narrow(d, value); }

  std::string arg(const Arg& a) const { return fmt::format("{}{}", a.is_input ? "in" : "v", a.index); }
  DType arg_dtype(const Arg& a) const { return a.is_input ? p_.inputs[a.index].dtype : p_.values[a.index].dtype; }

  /// Registers a scalar word and returns an expression reading it in the
  /// compute type of `d`.
  std::string scalar(std::uint32_t op, ScalarSlot::Source source, DType d) {
    const std::size_t k = layout_.scalars.size();
    layout_.scalars.push_back({op, source, d});
    const std::string word = fmt::format("p.scalar[{}]", k);
    if (d == DType::F64) return fmt::format("__longlong_as_double((long long){})", word);
    if (is_float(d)) return fmt::format("__uint_as_float((unsigned int){})", word);
    if (d == DType::Bool) return fmt::format("({} != 0ull)", word);
    return fmt::format("({}){}", type_info(d).compute, word);
  }

  [[noreturn]] void no_code(const ir::Op& op, DType d) const {
    throw Error(ir::op_name(op), fmt::format("the CUDA code generator has no kernel for dtype {}", dtype_name(d)));
  }

  std::string instruction(const fusion::ElementwiseProgram::Instr& instr) {
    const ir::Op& op = p_.ops[instr.op];
    const DType out = p_.values[instr.result].dtype;
    const DType in = arg_dtype(instr.args[0]);
    const std::string x = arg(instr.args[0]);
    const std::string result = fmt::format("v{}", instr.result);
    const char* type = type_info(out).compute;
    if (const auto* clamp = std::get_if<ir::Clamp>(&op)) {
      std::string s = fmt::format("    {} {} = {};\n", type, result, x);
      if (clamp->min)
        s += fmt::format("    {{ const {0} lo = {1}; if ({2} < lo) {2} = lo; }}\n", type,
                         scalar(instr.op, ScalarSlot::Source::ClampMin, in), result);
      if (clamp->max)
        s += fmt::format("    {{ const {0} hi = {1}; if ({2} > hi) {2} = hi; }}\n", type,
                         scalar(instr.op, ScalarSlot::Source::ClampMax, in), result);
      return s;
    }
    std::string e;
    if (const auto* u = std::get_if<ir::Unary>(&op)) {
      e = unary(op, u->op, in, x);
    } else if (const auto* b = std::get_if<ir::Binary>(&op)) {
      const std::string y = b->scalar ? scalar(instr.op, ScalarSlot::Source::Value, in) : arg(instr.args[1]);
      e = binary(op, b->op, in, x, y);
    } else if (const auto* c = std::get_if<ir::Cast>(&op)) {
      e = cast(in, c->dtype, x);
    } else if (std::holds_alternative<ir::MaskWhere>(op)) {
      e = fmt::format("({} ? {} : {})", arg(instr.args[1]), arg(instr.args[2]), x);
    } else if (std::holds_alternative<ir::MaskFill>(op)) {
      e = fmt::format("({} ? {} : {})", arg(instr.args[1]), scalar(instr.op, ScalarSlot::Source::Value, in), x);
    } else {
      throw Error(ir::op_name(op), "the CUDA code generator has no elementwise kernel for this op");
    }
    return fmt::format("    const {} {} = {};\n", type, result, narrow(out, e));
  }

  std::string unary(const ir::Op& op, UnaryOp u, DType d, const std::string& x) {
    const TypeInfo t = type_info(d);
    if (t.is_bool) {
      if (u == UnaryOp::LogicalNot) return fmt::format("!{}", x);
      no_code(op, d);
    }
    if (!t.is_float) {
      const std::string T = t.compute;
      const std::string U = t.unsigned_compute;
      switch (u) {
        case UnaryOp::Neg: return fmt::format("({})(({})0 - ({}){})", T, U, U, x);
        case UnaryOp::Abs: return t.is_signed ? fmt::format("({1} < 0 ? ({0})(({2})0 - ({2}){1}) : {1})", T, x, U) : x;
        case UnaryOp::Sign:
          return t.is_signed ? fmt::format("({})(({} > 0) - ({} < 0))", T, x, x) : fmt::format("({})({} != 0)", T, x);
        case UnaryOp::BitNot: return fmt::format("({})(~{})", T, x);
        default: no_code(op, d);
      }
    }
    const std::string f = computes_in_double(d) ? "" : "f";
    const std::string one = float_literal(d, "1.0");
    const std::string zero = float_literal(d, "0.0");
    const auto call = [&](std::string_view name) { return fmt::format("{}{}({})", name, f, x); };
    switch (u) {
      case UnaryOp::Neg: return fmt::format("(-{})", x);
      case UnaryOp::Abs: return call("fabs");
      // Keeps NaN and the zero's sign.
      case UnaryOp::Sign: return fmt::format("({0} > {1} ? {2} : {0} < {1} ? -{2} : {0})", x, zero, one);
      case UnaryOp::Recip: return fmt::format("({} / {})", one, x);
      case UnaryOp::Exp: return call("exp");
      case UnaryOp::Log: return call("log");
      case UnaryOp::Log1p: return call("log1p");
      case UnaryOp::Expm1: return call("expm1");
      case UnaryOp::Sqrt: return call("sqrt");
      case UnaryOp::Rsqrt: return fmt::format("({} / {})", one, call("sqrt"));
      case UnaryOp::Sin: return call("sin");
      case UnaryOp::Cos: return call("cos");
      case UnaryOp::Tan: return call("tan");
      case UnaryOp::Asin: return call("asin");
      case UnaryOp::Acos: return call("acos");
      case UnaryOp::Atan: return call("atan");
      case UnaryOp::Sinh: return call("sinh");
      case UnaryOp::Cosh: return call("cosh");
      case UnaryOp::Tanh: return call("tanh");
      case UnaryOp::Asinh: return call("asinh");
      case UnaryOp::Acosh: return call("acosh");
      case UnaryOp::Atanh: return call("atanh");
      case UnaryOp::Erf: return call("erf");
      // rint in the default rounding mode: half to even.
      case UnaryOp::Round: return call("rint");
      case UnaryOp::Floor: return call("floor");
      case UnaryOp::Ceil: return call("ceil");
      case UnaryOp::Trunc: return call("trunc");
      case UnaryOp::IsNan: return fmt::format("({0} != {0})", x);
      case UnaryOp::IsInf:
        return fmt::format(
            "({} == {})", call("fabs"),
            computes_in_double(d) ? "__longlong_as_double(0x7ff0000000000000ll)" : "__uint_as_float(0x7f800000u)");
      default: no_code(op, d);
    }
  }

  std::string binary(const ir::Op& op, BinaryOp b, DType d, const std::string& x, const std::string& y) {
    const TypeInfo t = type_info(d);
    switch (b) {
      case BinaryOp::Equal: return fmt::format("({} == {})", x, y);
      case BinaryOp::NotEqual: return fmt::format("({} != {})", x, y);
      case BinaryOp::Greater: return fmt::format("({} > {})", x, y);
      case BinaryOp::GreaterEqual: return fmt::format("({} >= {})", x, y);
      case BinaryOp::Less: return fmt::format("({} < {})", x, y);
      case BinaryOp::LessEqual: return fmt::format("({} <= {})", x, y);
      default: break;
    }
    if (t.is_bool) {
      switch (b) {
        case BinaryOp::LogicalAnd: return fmt::format("({} && {})", x, y);
        case BinaryOp::LogicalOr: return fmt::format("({} || {})", x, y);
        case BinaryOp::LogicalXor: return fmt::format("({} != {})", x, y);
        default: no_code(op, d);
      }
    }
    if (t.is_float) {
      const bool wide = computes_in_double(d);
      const std::string f = wide ? "" : "f";
      const std::string nan = wide ? "__longlong_as_double(0x7ff8000000000000ll)" : "__uint_as_float(0x7fc00000u)";
      switch (b) {
        case BinaryOp::Add: return fmt::format("({} + {})", x, y);
        case BinaryOp::Sub: return fmt::format("({} - {})", x, y);
        case BinaryOp::Mul: return fmt::format("({} * {})", x, y);
        case BinaryOp::Div: return fmt::format("({} / {})", x, y);
        case BinaryOp::Rem:
          need(wide ? "rem_f64" : "rem_f32");
          return fmt::format("burn_rem_{}({}, {})", wide ? "f64" : "f32", x, y);
        case BinaryOp::Pow: return fmt::format("pow{}({}, {})", f, x, y);
        case BinaryOp::Atan2: return fmt::format("atan2{}({}, {})", f, x, y);
        // NaN in either operand gives NaN.
        case BinaryOp::Max:
          return fmt::format("(({0} != {0} || {1} != {1}) ? {2} : ({0} > {1} ? {0} : {1}))", x, y, nan);
        case BinaryOp::Min:
          return fmt::format("(({0} != {0} || {1} != {1}) ? {2} : ({0} < {1} ? {0} : {1}))", x, y, nan);
        default: no_code(op, d);
      }
    }
    const std::string T = t.compute;
    const std::string U = t.unsigned_compute;
    switch (b) {
      case BinaryOp::Add: return fmt::format("({})(({}){} + ({}){})", T, U, x, U, y);
      case BinaryOp::Sub: return fmt::format("({})(({}){} - ({}){})", T, U, x, U, y);
      case BinaryOp::Mul: return fmt::format("({})(({}){} * ({}){})", T, U, x, U, y);
      case BinaryOp::Div: return fmt::format("{}({}, {}, p.error)", need_int("div", t), x, y);
      case BinaryOp::Rem: return fmt::format("{}({}, {}, p.error)", need_int("rem", t), x, y);
      case BinaryOp::Pow: return fmt::format("{}({}, {}, p.error)", need_int("pow", t), x, y);
      case BinaryOp::Max: return fmt::format("({0} > {1} ? {0} : {1})", x, y);
      case BinaryOp::Min: return fmt::format("({0} < {1} ? {0} : {1})", x, y);
      case BinaryOp::BitAnd: return fmt::format("({})({} & {})", T, x, y);
      case BinaryOp::BitOr: return fmt::format("({})({} | {})", T, x, y);
      case BinaryOp::BitXor: return fmt::format("({})({} ^ {})", T, x, y);
      case BinaryOp::Shl: return fmt::format("{}({}, {}, {}, p.error)", need_int("shl", t), x, y, t.bits);
      case BinaryOp::Shr: return fmt::format("{}({}, {}, {}, p.error)", need_int("shr", t), x, y, t.bits);
      default: no_code(op, d);
    }
  }

  /// Casts: float -> int truncates toward zero, saturates and maps NaN to 0;
  /// -> bool is != 0; ints convert as C does (the narrowing wraps).
  static std::string cast(DType from, DType to, const std::string& x) {
    const TypeInfo f = type_info(from);
    const TypeInfo t = type_info(to);
    if (t.is_bool) return f.is_bool ? x : fmt::format("({} != 0)", x);
    if (f.is_bool) return fmt::format("({})({} ? 1 : 0)", t.compute, x);
    if (f.is_float && !t.is_float) {
      // Bounds: the int range's ends as powers of two, exact in every float
      // type; a value at or past one saturates.
      const int value_bits = t.is_signed ? t.bits - 1 : t.bits;
      const std::string hi = fmt::format("{:.1f}", std::ldexp(1.0, value_bits));
      const std::string lo = t.is_signed ? "-" + hi : std::string("0.0");
      const unsigned long long max = value_bits == 64 ? ~0ull : (1ull << value_bits) - 1;
      const std::string max_literal = fmt::format("{}{}", max, t.is_signed ? "ll" : "ull");
      const std::string min_literal = t.is_signed ? fmt::format("-{}ll - 1", max) : std::string("0");
      return fmt::format(
          "({0} != {0} ? ({1})0 : {0} <= ({2}){3} ? ({1})({4}) : {0} >= ({2}){5} ? ({1})({6}) : ({1}){0})", x,
          t.compute, f.compute, lo, min_literal, hi, max_literal);
    }
    return fmt::format("({}){}", t.compute, x);
  }

  const fusion::ElementwiseProgram& p_;
  Indexing indexing_;
  std::size_t rank_;
  ElementwiseLayout layout_;
  KernelText text_;
  /// Row kernels: which inputs and values are per row (run_rows).
  std::vector<bool> row_input_, row_value_;
};

}  // namespace

const char* KernelText::compute_type(DType d) { return type_info(d).compute; }
const char* KernelText::storage_type(DType d) { return type_info(d).storage; }
const char* KernelText::wrapping_type(DType d) {
  return d == DType::I64 || d == DType::U64 ? "unsigned long long" : "unsigned int";
}

std::string KernelText::load(DType d, const std::string& element) {
  switch (d) {
    case DType::F16: need("f16", kF16Helpers); return fmt::format("burn_f16_load({})", element);
    case DType::BF16: need("bf16", kBf16Helpers); return fmt::format("burn_bf16_load({})", element);
    case DType::Bool: return fmt::format("({} != 0)", element);
    default: return fmt::format("({}){}", type_info(d).compute, element);
  }
}

std::string KernelText::store(DType d, const std::string& value) {
  switch (d) {
    case DType::F16: need("f16", kF16Helpers); return fmt::format("burn_f16_store({})", value);
    case DType::BF16: need("bf16", kBf16Helpers); return fmt::format("burn_bf16_store({})", value);
    case DType::Bool: return fmt::format("(unsigned char)({} ? 1 : 0)", value);
    default: return fmt::format("({}){}", type_info(d).storage, value);
  }
}

std::string KernelText::narrow(DType d, const std::string& value) {
  switch (d) {
    case DType::F16:
    case DType::BF16:
    case DType::I16:
    case DType::I8:
    case DType::U16:
    case DType::U8: return load(d, store(d, value));
    default: return value;
  }
}

void KernelText::need(const std::string& name, const std::string& definition) { helpers_.emplace(name, definition); }

std::string KernelText::helpers() const {
  std::string out;
  for (const auto& [name, definition] : helpers_) out += definition;
  return out;
}

LineFold line_fold(ir::ReduceOp op, DType in, DType out, const std::string& name, const std::string& element,
                   const std::string& position, const std::string& length) {
  using ir::ReduceOp;
  const std::string T = KernelText::compute_type(in);
  const std::string& a = name;
  const std::string& v = element;
  const std::string o = a + "_o";  // the other partial fold's accumulator
  const bool flt = is_float(in);
  // Whether `x` replaces the accumulator: larger (smaller), or NaN where the
  // accumulator is not.
  const auto greater = [&](const std::string& x) {
    return flt ? fmt::format("({0} == {0}) && ({1} != {1} || {1} > {0})", a, x) : fmt::format("{} > {}", x, a);
  };
  const auto less = [&](const std::string& x) {
    return flt ? fmt::format("({0} == {0}) && ({1} != {1} || {1} < {0})", a, x) : fmt::format("{} < {}", x, a);
  };
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod: {
      const bool sum = op == ReduceOp::Sum;
      // Float sums in the compute type, float products in double; ints wrap
      // in their unsigned twin.
      const std::string acc = flt ? (sum ? T : "double") : KernelText::wrapping_type(in);
      const char* sign = sum ? "+" : "*";
      return {fmt::format("    {} {} = {};\n", acc, a, sum ? "0" : "1"),
              fmt::format("      {} {}= ({}){};\n", a, sign, acc, v),
              fmt::format("({}){}", T, a),
              {{acc, a}},
              fmt::format("      {} {}= {};\n", a, sign, o)};
    }
    case ReduceOp::Mean: {
      if (flt)
        return {fmt::format("    {} {} = 0;\n", T, a),
                fmt::format("      {} += {};\n", a, v),
                fmt::format("{} / ({}){}", a, T, length),
                {{T, a}},
                fmt::format("      {} += {};\n", a, o)};
      // Ints sum in 64 bits, then divide truncating toward zero.
      const std::string A = in <= DType::I8 ? "long long" : "unsigned long long";
      return {fmt::format("    {} {} = 0;\n", A, a),
              fmt::format("      {} += ({}){};\n", a, A, v),
              fmt::format("({0})({1} ? {2} / ({3}){1} : 0)", T, length, a, A),
              {{A, a}},
              fmt::format("      {} += {};\n", a, o)};
    }
    case ReduceOp::Max:
    case ReduceOp::Min: {
      const bool max = op == ReduceOp::Max;
      std::string init;
      if (flt)
        init = fmt::format(
            "{}{}", max ? "-" : "",
            in == DType::F64 ? "__longlong_as_double(0x7ff0000000000000ll)" : "__uint_as_float(0x7f800000u)");
      else init = max ? int_range(in).first : int_range(in).second;
      return {fmt::format("    {0} {1} = ({0})({2});\n", T, a, init),
              fmt::format("      {0} = ({1}) ? {2} : {0};\n", a, max ? greater(v) : less(v), v),
              a,
              {{T, a}},
              fmt::format("      {0} = ({1}) ? {2} : {0};\n", a, max ? greater(o) : less(o), o)};
    }
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: {
      const bool max = op == ReduceOp::ArgMax;
      // Merging: the other's value if it is better, or equal (both NaN
      // included) at an earlier position.
      const std::string same =
          flt ? fmt::format("(({0} != {0} && {1} != {1}) || {0} == {1})", a, o) : fmt::format("{} == {}", a, o);
      return {fmt::format("    {0} {1} = 0;\n    long long {1}_at = 0;\n    bool {1}_has = false;\n", T, a),
              fmt::format("      if (!{0}_has || ({1})) {{ {0} = {2}; {0}_at = (long long)({3}); {0}_has = true; }}\n",
                          a, max ? greater(v) : less(v), v, position),
              fmt::format("({}){}_at", KernelText::compute_type(out), a),
              {{T, a}, {"long long", a + "_at"}, {"bool", a + "_has"}},
              fmt::format("      if ({1}_has_o && (!{1}_has || ({2}) || ({3} && {1}_at_o < {1}_at))) {{\n"
                          "        {1} = {0}; {1}_at = {1}_at_o; {1}_has = true;\n"
                          "      }}\n",
                          o, a, max ? greater(o) : less(o), same)};
    }
    case ReduceOp::Any:
    case ReduceOp::All: {
      const bool any = op == ReduceOp::Any;
      const std::string zero = in == DType::Bool ? "false" : fmt::format("({})0", T);
      const char* join = any ? "||" : "&&";
      return {fmt::format("    bool {} = {};\n", a, any ? "false" : "true"),
              fmt::format("      {0} = {0} {1} ({2} != {3});\n", a, join, v, zero),
              a,
              {{"bool", a}},
              fmt::format("      {0} = {0} {1} {2};\n", a, join, o)};
    }
  }
  throw Error(ir::reduce_name(op), "the CUDA code generator has no fold for this reduction");
}

bool folds_by_block(std::uint64_t len, std::uint64_t lines, std::uint64_t inner) {
  // Lines across memory: a thread per line reads a row of `inner` elements
  // per step together with its neighbours; enough of them fill the GPU.
  constexpr std::uint64_t kManyLines = 16384;
  return len >= kBlockFoldMin && (inner == 1 || lines < kManyLines);
}

std::string block_fold(const LineFold& fold) {
  // A tree over the threads' partial folds: in each round thread t < h
  // merges in thread t + h's, so the merge order (and the result) depends
  // on the block size alone. The partials go through the kernel's one
  // shared buffer (block_stride_kernel), a slot of BURN_BLOCK 8-byte words
  // per variable: every fold of a row kernel reuses it, so a group of many
  // reductions needs no more shared memory than one.
  if (fold.vars.size() > kBlockFoldSlots)
    throw Error("cuda", "a fold with more variables than block_stride_kernel's shared slots (internal error)");
  std::string s = "    {\n";
  for (std::size_t slot = 0; slot < fold.vars.size(); ++slot) {
    const auto& [type, var] = fold.vars[slot];
    s += fmt::format("      {0}* const {1}_s = ({0}*)(burn_block_shared + {2} * BURN_BLOCK);\n      {1}_s[t] = {1};\n",
                     type, var, slot);
  }
  s += "      __syncthreads();\n"
       "      for (unsigned int h = BURN_BLOCK / 2; h > 0; h >>= 1) {\n"
       "        if (t < h) {\n";
  for (const auto& [type, var] : fold.vars) s += fmt::format("          const {0} {1}_o = {1}_s[t + h];\n", type, var);
  s += fold.combine;
  for (const auto& [type, var] : fold.vars) s += fmt::format("          {0}_s[t] = {0};\n", var);
  s += "        }\n"
       "        __syncthreads();\n"
       "      }\n";
  for (const auto& [type, var] : fold.vars) s += fmt::format("      {0} = {0}_s[0];\n", var);
  // Before the shared slots serve the next line.
  s += "      __syncthreads();\n    }\n";
  return s;
}

bool generates(const ir::Op& op, std::span<const ir::TensorSpec> /*inputs*/) {
  return std::holds_alternative<ir::Unary>(op) || std::holds_alternative<ir::Binary>(op) ||
         std::holds_alternative<ir::Clamp>(op) || std::holds_alternative<ir::Cast>(op) ||
         std::holds_alternative<ir::MaskWhere>(op) || std::holds_alternative<ir::MaskFill>(op);
}

ElementwiseKernel generate_elementwise(const fusion::ElementwiseProgram& program, Indexing indexing, std::size_t rank) {
  // CUDA C++ has no zero-length arrays (a host compiler may accept them):
  // a group whose results nobody reads is not compiled at all.
  if (program.outputs.empty())
    throw Error("fused elementwise", "a kernel with no outputs was asked for (internal error)");
  return Generator(program, indexing, rank).run();
}

bool generates_in_rows(const ir::Op& op, std::span<const ir::TensorSpec> inputs) {
  return generates(op, inputs) || std::holds_alternative<ir::Reduce>(op);
}

ElementwiseKernel generate_rows(const fusion::ElementwiseProgram& program) {
  if (program.shape.rank() == 0)
    throw Error("fused rows", "a row kernel needs a shape of rank 1 or more (internal error)");
  if (program.outputs.empty()) throw Error("fused rows", "a kernel with no outputs was asked for (internal error)");
  return Generator(program, Indexing::Strided, program.shape.rank()).run_rows();
}

}  // namespace burn::cuda
