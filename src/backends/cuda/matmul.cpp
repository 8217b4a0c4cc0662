// Matmul on the CUDA device: a generated kernel, one thread per output
// element summing its row-by-column product in order, with the batch dims
// broadcast (stride 0 where an operand has 1). It serves every numeric
// dtype: floats accumulate in the compute type (f32 for f32 and the half
// types, rounded once at the end), ints wrap. cuBLASLt for the float types
// is the fast path still to come (docs/cuda.md); this kernel stays for the
// dtypes cuBLASLt lacks.
#include <fmt/format.h>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {

std::vector<Launch> plan_matmul(std::span<const Operand> inputs, std::span<const Operand> outputs) {
  const Operand& a = inputs[0];
  const Operand& b = inputs[1];
  const Operand& out = outputs[0];
  const std::size_t rank = out.spec.shape.rank();
  const std::size_t batch_rank = rank - 2;
  const std::uint64_t m = out.spec.shape[rank - 2];
  const std::uint64_t n = out.spec.shape[rank - 1];
  const std::uint64_t k = a.spec.shape[rank - 1];
  if (out.spec.shape.num_elements() == 0) return {};
  const DType d = out.spec.dtype;
  KernelText text;
  const std::string T = KernelText::compute_type(d);
  // Ints accumulate in the unsigned twin of their compute type (wrapping).
  const std::string acc = is_float(d) ? T : KernelText::wrapping_type(d);
  const std::string storage = KernelText::storage_type(d);
  const std::string x = text.load(d, fmt::format("((const {}*)p.a)[ao + r * p.k + c]", storage));
  const std::string y = text.load(d, fmt::format("((const {}*)p.b)[bo + c * p.cols + col]", storage));
  // One batch dim at least, so the arrays have a size (a size-1 dim when
  // the operands have none).
  const std::size_t arrays = std::max<std::size_t>(1, batch_rank);
  const std::string body = fmt::format(
      "    const unsigned long long col = i % p.cols;\n"
      "    const unsigned long long r = (i / p.cols) % p.rows;\n"
      "    unsigned long long rest = i / p.cols / p.rows;\n"
      "    long long ao = 0, bo = 0;\n"
      "#pragma unroll\n"
      "    for (int d = {0} - 1; d >= 0; --d) {{\n"
      "      const long long c = (long long)(rest % p.batch[d]);\n"
      "      rest /= p.batch[d];\n"
      "      ao += c * p.a_stride[d];\n"
      "      bo += c * p.b_stride[d];\n"
      "    }}\n"
      "    {1} sum = 0;\n"
      "    for (unsigned long long c = 0; c < p.k; ++c) sum += ({1})({2}) * ({1})({3});\n"
      "    (({4}*)p.out)[i] = {5};\n",
      arrays, acc, x, y, storage, text.store(d, fmt::format("({})sum", T)));
  Launch l;
  l.source = grid_stride_kernel("matmul", text.helpers(),
                                fmt::format("  unsigned long long rows;\n"
                                            "  unsigned long long cols;\n"
                                            "  unsigned long long k;\n"
                                            "  unsigned long long batch[{0}];\n"
                                            "  long long a_stride[{0}];\n"
                                            "  long long b_stride[{0}];\n"
                                            "  unsigned long long a;\n"
                                            "  unsigned long long b;\n"
                                            "  unsigned long long out;\n",
                                            arrays),
                                body);
  auto& w = l.params;
  w = {out.spec.shape.num_elements(), m, n, k};
  // Batch strides in elements: a's batch holds m·k elements, b's k·n; a
  // dim of 1 broadcast against a larger one has stride 0.
  const auto batch_strides = [&](const Shape& s, std::uint64_t matrix) {
    std::vector<std::uint64_t> strides(arrays, 0);
    std::uint64_t step = matrix;
    for (std::size_t dim = batch_rank; dim-- > 0;) {
      strides[dim] = s[dim] == 1 && out.spec.shape[dim] != 1 ? 0 : step;
      step *= s[dim];
    }
    return strides;
  };
  for (std::size_t dim = 0; dim < arrays; ++dim) w.push_back(batch_rank == 0 ? 1 : out.spec.shape[dim]);
  for (std::uint64_t s : batch_strides(a.spec.shape, m * k)) w.push_back(s);
  for (std::uint64_t s : batch_strides(b.spec.shape, k * n)) w.push_back(s);
  w.insert(w.end(), {a.address, b.address, out.address});
  return {l};
}

}  // namespace burn::cuda
