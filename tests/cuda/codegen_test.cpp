// Every kernel the CUDA backend can generate, compiled by NVRTC for sm_90
// (NVRTC needs no GPU): each elementwise op on each dtype the IR accepts it
// for, with a tensor or scalar operand, contiguous and strided; a set of
// fused chains; and the kernels of every op the backend plans
// (planned_cases.hpp: layout, creation, reduce, scan, indexing). Each must
// compile with an empty log (no warning). Kernels are compiled in batches,
// each wrapped in a namespace of its own, to keep the test's time down; a
// failing batch is compiled again kernel by kernel to name the one that
// fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include <burn/burn.hpp>
#include <burn/ir/op.hpp>

#include <fmt/format.h>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/nvrtc.hpp"
#include "planned_cases.hpp"

namespace burn::cuda {
namespace {

constexpr int kArchitecture = 90;

using testing::all_dtypes;

struct ProgramCase {
  std::string label;
  fusion::ElementwiseProgram program;
};

/// A one-instruction program for `op` on `inputs`, or nullopt where the IR
/// refuses that combination.
std::optional<ProgramCase> single(const ir::Op& op, std::vector<ir::TensorSpec> inputs, std::string label) {
  std::vector<ir::TensorSpec> outputs;
  try {
    outputs = ir::infer_outputs(op, inputs);
  } catch (const Error&) {
    return std::nullopt;
  }
  ProgramCase c{std::move(label), {}};
  auto& p = c.program;
  p.shape = outputs[0].shape;
  p.inputs = inputs;
  p.values = {outputs[0]};
  p.outputs = {0};
  p.ops = {op};
  fusion::ElementwiseProgram::Instr instr;
  for (std::size_t k = 0; k < inputs.size(); ++k) instr.args.push_back({true, static_cast<std::uint32_t>(k)});
  p.instrs = {instr};
  return c;
}

std::vector<ProgramCase> single_op_cases() {
  std::vector<ProgramCase> cases;
  const Shape shape{2, 3, 4};
  const auto add = [&](std::optional<ProgramCase> c) {
    if (c) cases.push_back(std::move(*c));
  };
  for (DType d : all_dtypes()) {
    const ir::TensorSpec t{shape, d};
    const ir::TensorSpec mask{shape, DType::Bool};
    const std::string dn(dtype_name(d));
    for (unsigned u = 0; u < ir::kValueCount<ir::UnaryOp>; ++u) {
      const auto op = static_cast<ir::UnaryOp>(u);
      add(single(ir::Unary{op}, {t}, fmt::format("{}_{}", ir::unary_name(op), dn)));
    }
    for (unsigned b = 0; b < ir::kValueCount<ir::BinaryOp>; ++b) {
      const auto op = static_cast<ir::BinaryOp>(b);
      add(single(ir::Binary{op, std::nullopt}, {t, t}, fmt::format("{}_{}", ir::binary_name(op), dn)));
      add(single(ir::Binary{op, Scalar(2)}, {t}, fmt::format("{}_scalar_{}", ir::binary_name(op), dn)));
    }
    add(single(ir::Clamp{Scalar(1), std::nullopt}, {t}, "clamp_min_" + dn));
    add(single(ir::Clamp{std::nullopt, Scalar(5)}, {t}, "clamp_max_" + dn));
    add(single(ir::Clamp{Scalar(1), Scalar(5)}, {t}, "clamp_" + dn));
    for (DType to : all_dtypes()) add(single(ir::Cast{to}, {t}, fmt::format("cast_{}_{}", dn, dtype_name(to))));
    add(single(ir::MaskWhere{}, {t, mask, t}, "mask_where_" + dn));
    add(single(ir::MaskFill{Scalar(3)}, {t, mask}, "mask_fill_" + dn));
  }
  return cases;
}

/// Chains the fusion layer builds: values[k] = ops[k](args), outputs last.
ProgramCase chain(std::string label, DType d, std::vector<ir::Op> ops, std::vector<std::vector<int>> args,
                  std::size_t inputs, std::vector<std::uint32_t> outputs) {
  ProgramCase c{std::move(label), {}};
  auto& p = c.program;
  p.shape = Shape{8, 16};
  p.inputs.assign(inputs, ir::TensorSpec{p.shape, d});
  p.ops = std::move(ops);
  for (std::size_t k = 0; k < p.ops.size(); ++k) {
    fusion::ElementwiseProgram::Instr instr;
    instr.op = static_cast<std::uint32_t>(k);
    instr.result = static_cast<std::uint32_t>(k);
    std::vector<ir::TensorSpec> specs;
    // Negative: input -a-1; else an earlier value.
    for (int a : args[k]) {
      const bool is_input = a < 0;
      const auto index = static_cast<std::uint32_t>(is_input ? -a - 1 : a);
      instr.args.push_back({is_input, index});
      specs.push_back(is_input ? p.inputs[index] : p.values[index]);
    }
    p.values.push_back(ir::infer_outputs(p.ops[k], specs).at(0));
    p.instrs.push_back(instr);
  }
  p.outputs = std::move(outputs);
  return c;
}

std::vector<ProgramCase> fused_cases() {
  using ir::BinaryOp;
  using ir::UnaryOp;
  std::vector<ProgramCase> cases;
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    const std::string dn(dtype_name(d));
    // gelu(x * w + b) with erf: the fused epilogue of a linear layer.
    cases.push_back(chain("gelu_" + dn, d,
                          {ir::Binary{BinaryOp::Mul, std::nullopt}, ir::Binary{BinaryOp::Add, std::nullopt},
                           ir::Binary{BinaryOp::Div, Scalar(1.4142135623730951)}, ir::Unary{UnaryOp::Erf},
                           ir::Binary{BinaryOp::Add, Scalar(1.0)}, ir::Binary{BinaryOp::Mul, std::nullopt},
                           ir::Binary{BinaryOp::Mul, Scalar(0.5)}},
                          {{-1, -2}, {0, -3}, {1}, {2}, {3}, {1, 4}, {5}}, 3, {6}));
    // Adam's update: two outputs, a clamp, a cast to bool and a mask.
    cases.push_back(chain(
        "adam_like_" + dn, d,
        {ir::Binary{BinaryOp::Mul, Scalar(0.9)}, ir::Binary{BinaryOp::Add, std::nullopt}, ir::Unary{UnaryOp::Sqrt},
         ir::Binary{BinaryOp::Add, Scalar(1e-8)}, ir::Binary{BinaryOp::Div, std::nullopt},
         ir::Clamp{Scalar(-1.0), Scalar(1.0)}, ir::Unary{UnaryOp::IsNan}, ir::MaskFill{Scalar(0.0)}},
        {{-1}, {0, -2}, {1}, {2}, {1, 3}, {4}, {5}, {5, 6}}, 2, {1, 7}));
  }
  for (DType d : {DType::I64, DType::I32, DType::I8, DType::U8}) {
    const std::string dn(dtype_name(d));
    cases.push_back(chain("int_chain_" + dn, d,
                          {ir::Binary{BinaryOp::Mul, std::nullopt}, ir::Binary{BinaryOp::Div, Scalar(3)},
                           ir::Binary{BinaryOp::Rem, std::nullopt}, ir::Binary{BinaryOp::Shl, Scalar(2)},
                           ir::Binary{BinaryOp::Greater, Scalar(4)}, ir::Cast{DType::F32}},
                          {{-1, -2}, {0}, {1, -2}, {2}, {3}, {3}}, 2, {4, 5}));
  }
  return cases;
}

/// Row-reduce groups (the row kernel): softmax, a layer norm with its mean
/// as a second output, and int and bool folds, with per-row results read
/// back by full-size ops.
std::vector<ProgramCase> row_cases() {
  using ir::BinaryOp;
  using ir::ReduceOp;
  using ir::UnaryOp;
  std::vector<ProgramCase> cases;
  const auto reduce = [](ReduceOp op) { return ir::Reduce{op, 1}; };
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    const std::string dn(dtype_name(d));
    cases.push_back(chain("softmax_" + dn, d,
                          {reduce(ReduceOp::Max), ir::Binary{BinaryOp::Sub, std::nullopt}, ir::Unary{UnaryOp::Exp},
                           reduce(ReduceOp::Sum), ir::Binary{BinaryOp::Div, std::nullopt}},
                          {{-1}, {-1, 0}, {1}, {2}, {2, 3}}, 1, {4}));
    cases.push_back(
        chain("layer_norm_" + dn, d,
              {reduce(ReduceOp::Mean), ir::Binary{BinaryOp::Sub, std::nullopt}, ir::Binary{BinaryOp::Mul, std::nullopt},
               reduce(ReduceOp::Mean), ir::Binary{BinaryOp::Add, Scalar(1e-5)}, ir::Unary{UnaryOp::Sqrt},
               ir::Binary{BinaryOp::Div, std::nullopt}, ir::Binary{BinaryOp::Mul, std::nullopt},
               ir::Binary{BinaryOp::Add, std::nullopt}},
              {{-1}, {-1, 0}, {1, 1}, {2}, {3}, {4}, {1, 5}, {6, -2}, {7, -3}}, 3, {8, 0}));
    cases.push_back(chain("argmax_prod_min_" + dn, d,
                          {ir::Unary{UnaryOp::Abs}, reduce(ReduceOp::ArgMax), reduce(ReduceOp::Prod),
                           reduce(ReduceOp::Min), reduce(ReduceOp::ArgMin)},
                          {{-1}, {0}, {0}, {-1}, {0}}, 1, {1, 2, 3, 4}));
  }
  for (DType d : {DType::I64, DType::I32, DType::I8, DType::U8, DType::Bool}) {
    const std::string dn(dtype_name(d));
    if (d == DType::Bool) {
      cases.push_back(
          chain("any_all_" + dn, d, {reduce(ReduceOp::Any), reduce(ReduceOp::All)}, {{-1}, {-1}}, 1, {0, 1}));
      continue;
    }
    cases.push_back(chain("int_rows_" + dn, d,
                          {reduce(ReduceOp::Sum), reduce(ReduceOp::Mean), reduce(ReduceOp::Max),
                           ir::Binary{BinaryOp::Sub, std::nullopt}, reduce(ReduceOp::Any)},
                          {{-1}, {-1}, {-1}, {-1, 2}, {3}}, 1, {0, 1, 3, 4}));
  }
  return cases;
}

/// `c` over another loop shape (its inputs of the loop's shape, the values
/// inferred again): the row cases with rows long enough to fold by block.
ProgramCase with_shape(ProgramCase c, const Shape& shape) {
  auto& p = c.program;
  p.shape = shape;
  for (auto& input : p.inputs) input.shape = shape;
  for (std::size_t k = 0; k < p.instrs.size(); ++k) {
    std::vector<ir::TensorSpec> specs;
    for (const auto& a : p.instrs[k].args) specs.push_back(a.is_input ? p.inputs[a.index] : p.values[a.index]);
    p.values[p.instrs[k].result] = ir::infer_outputs(p.ops[p.instrs[k].op], specs).at(0);
  }
  c.label += "_long";
  return c;
}

std::string wrapped(std::string source, std::size_t index) {
  const std::string entry = fmt::format("extern \"C\" __global__ void {}", kKernelEntry);
  const auto at = source.find(entry);
  EXPECT_NE(at, std::string::npos);
  source.replace(at, entry.size(), fmt::format("__global__ void {}", kKernelEntry));
  return fmt::format("namespace k{} {{\n{}}}\n", index, source);
}

/// Kernel sources by label.
using Kernels = std::vector<std::pair<std::string, std::string>>;

/// Compiles kernels [begin, end) as one program; returns the failures, each
/// named (a failing or warning batch is compiled again kernel by kernel,
/// as the backend compiles them, to name the culprits).
std::vector<std::string> compile_batch(const Kernels& kernels, std::size_t begin, std::size_t end) {
  std::string source;
  for (std::size_t k = begin; k < end; ++k) source += wrapped(kernels[k].second, k);
  try {
    const CompiledKernel out = compile_kernel(source, "batch", kArchitecture);
    if (out.is_cubin && out.log.empty()) return {};
  } catch (const ExecutionError&) {
  }
  std::vector<std::string> failures;
  for (std::size_t k = begin; k < end; ++k) {
    try {
      const CompiledKernel out = compile_kernel(kernels[k].second, kernels[k].first, kArchitecture);
      if (!out.is_cubin) failures.push_back(kernels[k].first + ": NVRTC made PTX, not a CUBIN for sm_90");
      if (!out.log.empty()) failures.push_back(fmt::format("{} warns:\n{}", kernels[k].first, out.log));
    } catch (const ExecutionError& e) {
      failures.push_back(fmt::format("{}:\n{}\n{}", kernels[k].first, e.what(), kernels[k].second));
    }
  }
  return failures;
}

/// Compiles every kernel, in batches spread over the machine's cores (NVRTC
/// compiles separate programs concurrently; the GPU machine has 16, CI 2);
/// returns the failures.
std::vector<std::string> compile_all(const Kernels& kernels) {
  constexpr std::size_t kBatch = 128;
  const std::size_t batches = (kernels.size() + kBatch - 1) / kBatch;
  std::vector<std::vector<std::string>> found(batches);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t b = next++; b < batches; b = next++)
      found[b] = compile_batch(kernels, b * kBatch, std::min(kernels.size(), (b + 1) * kBatch));
  };
  std::vector<std::thread> helpers(std::clamp<std::size_t>(std::thread::hardware_concurrency(), 2, 16) - 1);
  for (auto& helper : helpers) helper = std::thread(work);
  work();
  for (auto& helper : helpers) helper.join();
  std::vector<std::string> failures;
  for (auto& f : found) failures.insert(failures.end(), f.begin(), f.end());
  return failures;
}

class CudaCodegen : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!nvrtc_unavailable().empty()) GTEST_SKIP() << "NVRTC cannot be used here: " << nvrtc_unavailable();
    const auto& archs = nvrtc_architectures();
    if (std::find(archs.begin(), archs.end(), kArchitecture) == archs.end())
      GTEST_SKIP() << "this NVRTC does not compile for sm_90";
  }
};

TEST_F(CudaCodegen, EveryGeneratedKernelCompilesWithoutWarnings) {
  Kernels kernels;
  std::size_t ops = 0;
  for (const ProgramCase& c : single_op_cases()) {
    ++ops;
    kernels.emplace_back(c.label + "/contiguous", generate_elementwise(c.program, Indexing::Contiguous, 1).source);
    kernels.emplace_back(c.label + "/strided", generate_elementwise(c.program, Indexing::Strided, 3).source);
  }
  for (const ProgramCase& c : fused_cases()) {
    kernels.emplace_back(c.label + "/contiguous", generate_elementwise(c.program, Indexing::Contiguous, 1).source);
    kernels.emplace_back(c.label + "/strided", generate_elementwise(c.program, Indexing::Strided, 2).source);
  }
  for (const ProgramCase& c : row_cases()) {
    kernels.emplace_back(c.label + "/rows", generate_rows(c.program).source);
    const ProgramCase long_rows = with_shape(c, Shape{4, kBlockFoldMin * 4});
    const ElementwiseKernel block = generate_rows(long_rows.program);
    EXPECT_TRUE(block.layout.block) << long_rows.label;
    kernels.emplace_back(long_rows.label + "/rows", block.source);
  }
  // Every op family on every dtype: 31 unary ops, 23 binary ops twice, 169
  // casts, 3 clamps and 2 masks over 13 dtypes, less what the IR refuses.
  EXPECT_GT(ops, 700u);
  // The kernels of every planned op (addresses do not reach the source).
  std::set<std::string> seen;
  for (const auto& [label, source] : kernels) seen.insert(source);
  std::size_t planned = 0;
  for (const testing::Case& c : testing::all_cases()) {
    std::vector<Operand> in, out;
    for (const auto& d : c.inputs) in.push_back({{d.shape(), d.dtype()}, 0x1000});
    for (const auto& spec : c.outputs) out.push_back({spec, 0x2000});
    for (const Launch& l : plan(c.op, in, out, 0x3000))
      if (seen.insert(l.source).second) {
        kernels.emplace_back(c.label, l.source);
        ++planned;
      }
  }
  // Random draws, which flex computes with another generator (so they are
  // not among the cases compared with it).
  for (DType d : testing::all_dtypes())
    for (unsigned k = 0; k < ir::kValueCount<ir::DistributionKind>; ++k) {
      const ir::Random op{Shape{4}, static_cast<ir::DistributionKind>(k), 0.0, 1.0, d};
      const Operand out{{Shape{4}, d}, 0x2000};
      for (const Launch& l : plan(op, {}, std::span(&out, 1), 0x3000, RandomStream{1, 2}))
        if (seen.insert(l.source).second) kernels.emplace_back(fmt::format("random{}_{}", k, dtype_name(d)), l.source);
    }
  EXPECT_GT(planned, 100u);
  const auto failures = compile_all(kernels);
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << kernels.size() << " kernels failed";
}

TEST_F(CudaCodegen, LayoutMatchesTheGeneratedParameterBlock) {
  // clamp(x, 1, 5) on f16 over a strided rank-3 loop: 2 operands, 2 scalars.
  const auto c = single(ir::Clamp{Scalar(1), Scalar(5)}, {ir::TensorSpec{Shape{2, 3, 4}, DType::F16}}, "clamp");
  ASSERT_TRUE(c);
  const ElementwiseKernel k = generate_elementwise(c->program, Indexing::Strided, 3);
  const ElementwiseLayout& l = k.layout;
  EXPECT_EQ(l.operands, 2u);
  ASSERT_EQ(l.scalars.size(), 2u);
  EXPECT_EQ(l.scalars[0].source, ScalarSlot::Source::ClampMin);
  EXPECT_EQ(l.scalars[1].source, ScalarSlot::Source::ClampMax);
  EXPECT_EQ(l.scalars[0].dtype, DType::F16);
  // n, shape[3], ptr[2], stride[2][3], scalar[2], error.
  EXPECT_EQ(l.shape_word(), 1u);
  EXPECT_EQ(l.pointer_word(), 4u);
  EXPECT_EQ(l.stride_word(), 6u);
  EXPECT_EQ(l.scalar_word(), 12u);
  EXPECT_EQ(l.error_word(), 14u);
  EXPECT_EQ(l.bytes(), 120u);
  EXPECT_NE(k.source.find("unsigned long long shape[3];"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("long long stride[2][3];"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("unsigned long long scalar[2];"), std::string::npos) << k.source;
  // Contiguous kernels carry no shape or strides.
  const ElementwiseLayout contiguous = generate_elementwise(c->program, Indexing::Contiguous, 1).layout;
  EXPECT_EQ(contiguous.pointer_word(), 1u);
  EXPECT_EQ(contiguous.scalar_word(), 3u);
  EXPECT_EQ(contiguous.bytes(), 48u);
}

TEST_F(CudaCodegen, HalfResultsAreRoundedInsideFusedChains) {
  // Each f16 result goes through f16 before the next op reads it, so a
  // fused chain equals the ops run one by one.
  const auto c = single(ir::Unary{ir::UnaryOp::Exp}, {ir::TensorSpec{Shape{4}, DType::F16}}, "exp");
  ASSERT_TRUE(c);
  const std::string source = generate_elementwise(c->program, Indexing::Contiguous, 1).source;
  EXPECT_NE(source.find("burn_f16_load(burn_f16_store(expf(in0)))"), std::string::npos) << source;
}

TEST_F(CudaCodegen, CompileErrorsNameTheKernelAndCarryTheLog) {
  try {
    (void)compile_kernel("__global__ void broken() { undeclared_name = 1; }", "broken_kernel", kArchitecture);
    FAIL() << "a kernel with an undeclared name compiled";
  } catch (const ExecutionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("broken_kernel"), std::string::npos) << what;
    EXPECT_NE(what.find("undeclared_name"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace burn::cuda
