// Batch normalisation with the batch's statistics (ir::BatchNorm) on the
// CUDA device: one block per channel, in one kernel. The block folds the
// channel's N·L values (N samples of L positions, L the product of the dims
// after the channel) into their sum, merges the threads' partial sums
// (block_fold), folds the squared deviations from the mean the same way,
// and then writes the channel's normalised values; thread 0 writes the
// mean and the biased variance. Statistics and the affine map are computed
// in double for every float dtype, as the reference backend computes them.
// An empty batch gives NaN statistics and no values.
#include <bit>
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {
namespace {

std::string batch_norm_source(DType d) {
  KernelText text;
  const std::string T = KernelText::compute_type(d);
  const std::string storage = KernelText::storage_type(d);
  const auto element = [&](const char* pointer, const char* at) {
    return fmt::format("(double){}", text.load(d, fmt::format("((const {}*)p.{})[{}]", storage, pointer, at)));
  };
  // Element e of channel i is position e % len of sample e / len. A thread
  // steps BURN_BLOCK elements at a time, so it carries (sample, position)
  // along instead of dividing by len for every element.
  const char* at = "(sample * p.n + i) * p.len + pos";
  const std::string loop =
      "    for (unsigned long long e = t, sample = t / p.len, pos = t % p.len; e < count;\n"
      "         e += BURN_BLOCK, sample += jump_samples, pos += jump_positions,\n"
      "         sample += pos >= p.len ? 1 : 0, pos -= pos >= p.len ? p.len : 0) {\n";
  const LineFold sum = line_fold(ir::ReduceOp::Sum, DType::F64, DType::F64, "s", "v", "e", "count");
  const LineFold squares = line_fold(ir::ReduceOp::Sum, DType::F64, DType::F64, "q", "dv * dv", "e", "count");
  std::string body =
      "    const unsigned long long count = p.batch * p.len;\n"
      "    if (count == 0) {\n"  // an empty batch: NaN statistics, no values
      "      if (t == 0) {\n";
  body += fmt::format("        (({0}*)p.mean)[i] = {1};\n        (({0}*)p.var)[i] = {1};\n", storage,
                      text.store(d, fmt::format("({})__longlong_as_double(0x7ff8000000000000ll)", T)));
  body +=
      "      }\n"
      "      continue;\n"
      "    }\n"
      "    const unsigned long long jump_samples = BURN_BLOCK / p.len, jump_positions = BURN_BLOCK % p.len;\n";
  body += sum.declare + loop + fmt::format("      const double v = {};\n", element("x", at)) + sum.step + "    }\n";
  body += block_fold(sum);
  body += "    const double mean = s / (double)count;\n";
  body += squares.declare + loop + fmt::format("      const double dv = {} - mean;\n", element("x", at)) +
          squares.step + "    }\n";
  body += block_fold(squares);
  body += fmt::format(
      "    const double var = q / (double)count;\n"
      "    const double scale = {} / sqrt(var + p.epsilon);\n"
      "    const double shift = {} - mean * scale;\n",
      element("weight", "i"), element("bias", "i"));
  body += loop +
          fmt::format("      (({0}*)p.y)[{1}] = {2};\n", storage, at,
                      text.store(d, fmt::format("({})({} * scale + shift)", T, element("x", at)))) +
          "    }\n";
  body += fmt::format(
      "    if (t == 0) {{\n"
      "      (({0}*)p.mean)[i] = {1};\n"
      "      (({0}*)p.var)[i] = {2};\n"
      "    }}\n",
      storage, text.store(d, fmt::format("({})mean", T)), text.store(d, fmt::format("({})var", T)));
  return block_stride_kernel("batch norm", text.helpers(),
                             "  unsigned long long batch;\n"
                             "  unsigned long long len;\n"
                             "  unsigned long long x;\n"
                             "  unsigned long long weight;\n"
                             "  unsigned long long bias;\n"
                             "  unsigned long long y;\n"
                             "  unsigned long long mean;\n"
                             "  unsigned long long var;\n"
                             "  double epsilon;\n",
                             body);
}

}  // namespace

std::vector<Launch> plan_norm(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs) {
  const auto* bn = std::get_if<ir::BatchNorm>(&op);
  if (bn == nullptr) throw Error(ir::op_name(op), "not a normalisation the cuda backend plans (internal error)");
  const Shape& shape = inputs[0].spec.shape;
  const std::uint64_t batch = shape[0], channels = shape[1];
  std::uint64_t len = 1;
  for (std::size_t d = 2; d < shape.rank(); ++d) len *= shape[d];
  Launch l;
  l.per_block = true;
  l.source = batch_norm_source(inputs[0].spec.dtype);
  // One item (a block) per channel.
  l.params = {channels,
              batch,
              len,
              inputs[0].address,
              inputs[1].address,
              inputs[2].address,
              outputs[0].address,
              outputs[1].address,
              outputs[2].address,
              std::bit_cast<std::uint64_t>(bn->epsilon)};
  if (l.items() == 0) return {};
  return {l};
}

}  // namespace burn::cuda
