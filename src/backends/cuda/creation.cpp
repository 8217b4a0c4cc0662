// Creation ops on the CUDA device: full writes one stored bit pattern per
// element (a kernel per element size), arange converts start + i · step to
// the dtype as the CPU backends do, random draws each element from Philox
// (philox.hpp) and shapes it as the CPU backends shape their generator's
// numbers (backends/host/random_fill.cpp): a 53-bit uniform in [0, 1),
// Box-Muller for normals, computed in double and converted (ints floored).
#include <bit>
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"
#include "backends/cuda/philox.hpp"

namespace burn::cuda {
namespace {

/// `s` stored as `dtype` (its bits, zero-extended to 64).
std::uint64_t stored_bits(const Scalar& s, DType dtype) {
  switch (dtype) {
    case DType::F64: return std::bit_cast<std::uint64_t>(s.as<double>());
    case DType::F32: return std::bit_cast<std::uint32_t>(s.as<float>());
    case DType::F16: return s.as<f16>().bits;
    case DType::BF16: return s.as<bf16>().bits;
    case DType::I64: return static_cast<std::uint64_t>(s.as<std::int64_t>());
    case DType::I32: return static_cast<std::uint32_t>(s.as<std::int32_t>());
    case DType::I16: return static_cast<std::uint16_t>(s.as<std::int16_t>());
    case DType::I8: return static_cast<std::uint8_t>(s.as<std::int8_t>());
    case DType::U64: return s.as<std::uint64_t>();
    case DType::U32: return s.as<std::uint32_t>();
    case DType::U16: return s.as<std::uint16_t>();
    case DType::U8: return s.as<std::uint8_t>();
    case DType::Bool: return s.as<bool>() ? 1 : 0;
  }
  return 0;
}

}  // namespace

std::vector<Launch> plan_creation(const ir::Op& op, std::span<const Operand> outputs, const RandomStream& random) {
  const Operand& out = outputs[0];
  const std::uint64_t n = out.spec.shape.num_elements();
  if (n == 0) return {};
  if (const auto* f = std::get_if<ir::Full>(&op)) {
    const char* type = raw_type(dtype_size(f->dtype));
    Launch l;
    l.source = grid_stride_kernel("full", "", "  unsigned long long dst;\n  unsigned long long bits;\n",
                                  fmt::format("    (({0}*)p.dst)[i] = ({0})p.bits;\n", type));
    l.params = {n, out.address, stored_bits(f->value, f->dtype)};
    return {l};
  }
  if (const auto* a = std::get_if<ir::Arange>(&op)) {
    KernelText text;
    // Converted as the CPU backends do: exactly for ints in range, by C
    // conversion (wrapping) otherwise; floats round.
    const std::string value = fmt::format("({})(p.start + (long long)i * p.step)", text.compute_type(a->dtype));
    const std::string body =
        fmt::format("    (({}*)p.dst)[i] = {};\n", text.storage_type(a->dtype), text.store(a->dtype, value));
    Launch l;
    l.source = grid_stride_kernel("arange", text.helpers(),
                                  "  unsigned long long dst;\n  long long start;\n  long long step;\n", body);
    l.params = {n, out.address, static_cast<std::uint64_t>(a->start), static_cast<std::uint64_t>(a->step)};
    return {l};
  }
  if (const auto* r = std::get_if<ir::Random>(&op)) {
    KernelText text;
    text.need("philox", kPhiloxDeviceCode);
    text.need("unit",
              "__device__ __forceinline__ double burn_unit(unsigned int hi, unsigned int lo) {\n"
              "  return (double)(((unsigned long long)(hi >> 5) << 26) | (lo >> 6)) * 0x1.0p-53;\n"
              "}\n");
    std::string value;
    switch (r->dist) {
      case ir::DistributionKind::Default: value = "u"; break;
      case ir::DistributionKind::Uniform: value = "a + (b - a) * u"; break;
      case ir::DistributionKind::Bernoulli: value = "u < a ? 1.0 : 0.0"; break;
      // 1 - u is in (0, 1], so the log is finite.
      case ir::DistributionKind::Normal:
        value = "a + b * sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * burn_unit(c[2], c[3]))";
        break;
    }
    const DType d = r->dtype;
    std::string converted;
    if (is_float(d)) converted = text.store(d, fmt::format("({})v", text.compute_type(d)));
    else if (d == DType::Bool) converted = text.store(d, "v != 0.0");
    else converted = fmt::format("({})(long long)fmax(fmin(floor(v), 9.2e18), -9.2e18)", text.storage_type(d));
    const std::string body = fmt::format(
        "    unsigned int c[4] = {{(unsigned int)i, (unsigned int)(i >> 32), (unsigned int)p.draw, "
        "(unsigned int)(p.draw >> 32)}};\n"
        "    burn_philox(c, (unsigned int)p.seed, (unsigned int)(p.seed >> 32));\n"
        "    const double a = __longlong_as_double((long long)p.a);\n"
        "    const double b = __longlong_as_double((long long)p.b);\n"
        "    (void)a;\n"
        "    (void)b;\n"
        "    const double u = burn_unit(c[0], c[1]);\n"
        "    const double v = {};\n"
        "    (({}*)p.dst)[i] = {};\n",
        value, text.storage_type(d), converted);
    Launch l;
    l.source = grid_stride_kernel("random", text.helpers(),
                                  "  unsigned long long dst;\n  unsigned long long seed;\n  unsigned long long draw;\n"
                                  "  unsigned long long a;\n  unsigned long long b;\n",
                                  body);
    l.params = {n,
                out.address,
                random.seed,
                random.draw,
                std::bit_cast<std::uint64_t>(r->a),
                std::bit_cast<std::uint64_t>(r->b)};
    return {l};
  }
  throw Error(ir::op_name(op), "not a creation op (an internal error of the cuda backend)");
}

}  // namespace burn::cuda
