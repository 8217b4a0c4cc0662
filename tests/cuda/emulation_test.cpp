// The CUDA backend's kernels run on the CPU, against flex.
//
// No GPU is needed to check what the generated kernels compute: a kernel is
// C++ apart from a few CUDA built-ins, so this test plans each op exactly as
// the backend does (plan(), launch.hpp: sources and parameter blocks, with
// host addresses in place of device ones), compiles every distinct source
// with the host's C++ compiler over a small shim (one thread walks the
// whole grid-stride loop; the PTX half conversions become _Float16 ones),
// runs the launches in order and compares every element with flex running
// the same op. Covered: each elementwise op on each dtype with broadcast
// operands and scalars, on "wild" inputs (zeros, extremes, NaN, infinities:
// error bits and wrapping) and "tame" ones (small positive divisors and
// shift counts); the layout ops; full and arange; every reduction and scan
// along each dim. Results flex computes with its own vectorised math (exp,
// erf, ...) or in another order (float sums) are compared within a
// tolerance; the rest must be equal.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <fmt/format.h>

#include <burn/burn.hpp>
#include <burn/ir/op.hpp>

#include "backends/cuda/launch.hpp"
#include "device/runtime.hpp"
#include "planned_cases.hpp"

#ifndef BURN_TEST_CXX
#error "tests/CMakeLists.txt defines BURN_TEST_CXX, the C++ compiler the kernels are compiled with"
#endif

namespace burn::cuda {
namespace {

using testing::Case;

constexpr const char* kShim = R"(#include <math.h>
#include <string.h>
#define __global__
#define __device__
#define __forceinline__ inline
struct BurnDim3 { unsigned int x; };
static const BurnDim3 blockIdx{0}, threadIdx{0}, blockDim{1}, gridDim{1};
static inline unsigned int atomicOr(unsigned int* p, unsigned int v) { unsigned int o = *p; *p |= v; return o; }
static inline float __uint_as_float(unsigned int u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned int __float_as_uint(float f) { unsigned int u; memcpy(&u, &f, 4); return u; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
static inline float burn_host_f16_to_f32(unsigned short h) { _Float16 v; memcpy(&v, &h, 2); return (float)v; }
static inline unsigned short burn_host_f32_to_f16(float f) { _Float16 v = (_Float16)f; unsigned short h; memcpy(&h, &v, 2); return h; }
)";

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

/// A kernel's source as host C++ in namespace k<index>, with an entry
/// burn_run_<index>(const void* params).
std::string host_version(std::string source, std::size_t index) {
  replace_all(source, fmt::format("extern \"C\" __global__ void {}", kKernelEntry),
              fmt::format("void {}", kKernelEntry));
  replace_all(source, R"(asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));)", "f = burn_host_f16_to_f32(h);");
  replace_all(source, R"(asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));)", "h = burn_host_f32_to_f16(f);");
  EXPECT_EQ(source.find("asm("), std::string::npos) << "inline PTX the shim does not cover:\n" << source;
  return fmt::format(
      "namespace k{0} {{\n{1}}}\nextern \"C\" void burn_run_{0}(const void* p) {{ k{0}::{2}(*static_cast<const "
      "k{0}::Params*>(p)); }}\n",
      index, source, kKernelEntry);
}

// ---- running --------------------------------------------------------------------

/// flex's results, or nullopt when flex refuses the inputs (division by zero...).
std::optional<std::vector<TensorData>> run_on_flex(const Case& c) {
  backend::Backend& flex = Device::flex().runtime().backend();
  std::vector<backend::Input> inputs;
  for (const auto& d : c.inputs) inputs.push_back({flex.from_data(d), {d.shape(), d.dtype()}, false});
  try {
    const auto outputs = flex.execute(c.op, inputs, c.outputs);
    std::vector<TensorData> out;
    for (std::size_t k = 0; k < outputs.size(); ++k) out.push_back(flex.to_data(outputs[k], c.outputs[k]));
    return out;
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool close(double want, double got, DType dtype, bool approximate) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (want == got) return true;
  if (!approximate || std::isinf(want) || std::isinf(got)) return false;
  const double rel = dtype == DType::F64 ? 1e-13 : dtype == DType::F32 ? 1e-5 : dtype == DType::F16 ? 2e-3 : 1e-2;
  return std::abs(want - got) <= rel * std::max(1.0, std::abs(want));
}

/// One case planned with host memory: output buffers and the launches.
struct Planned {
  std::vector<std::vector<std::byte>> outputs;
  std::vector<Launch> launches;
  std::unique_ptr<std::uint32_t> error_bits = std::make_unique<std::uint32_t>(0);
};

Planned plan_on_host(const Case& c) {
  Planned p;
  std::vector<Operand> in, out;
  for (const auto& d : c.inputs)
    in.push_back({{d.shape(), d.dtype()}, reinterpret_cast<std::uint64_t>(d.bytes().data())});
  // One spare byte each, so an empty output still has an address.
  for (const auto& spec : c.outputs) p.outputs.emplace_back(spec.shape.num_elements() * dtype_size(spec.dtype) + 1);
  for (std::size_t k = 0; k < c.outputs.size(); ++k)
    out.push_back({c.outputs[k], reinterpret_cast<std::uint64_t>(p.outputs[k].data())});
  p.launches = plan(c.op, in, out, reinterpret_cast<std::uint64_t>(p.error_bits.get()));
  return p;
}

TEST(CudaKernelsOnTheCpu, EveryPlannedOpMatchesFlex) {
  const std::vector<Case> cases = testing::all_cases();
  ASSERT_GT(cases.size(), 2500u);
  // Every family is there (the IR refuses no whole family by mistake).
  for (std::string_view family : {"gather_", "select_", "scatter_", "select_assign_", "cat_", "slice_assign_",
                                  "arange_", "full_", "sum_dim", "argmax_dim", "cumulative", "mask_where_"}) {
    const auto n =
        std::count_if(cases.begin(), cases.end(), [&](const Case& c) { return c.label.starts_with(family); });
    EXPECT_GE(n, 10) << family;
  }
  std::vector<Planned> planned;
  std::map<std::string, std::size_t> sources;  // source -> index in the library
  for (const Case& c : cases) {
    planned.push_back(plan_on_host(c));
    for (const Launch& l : planned.back().launches) sources.emplace(l.source, sources.size());
  }

  const auto dir = std::filesystem::temp_directory_path() / fmt::format("burn-cuda-emulation-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const auto source_path = dir / "kernels.cpp";
  const auto library_path = dir / "kernels.so";
  {
    std::ofstream source(source_path);
    source << kShim;
    for (const auto& [text, index] : sources) source << host_version(text, index);
  }
  const std::string command = fmt::format("{} -std=c++17 -O0 -shared -fPIC -w -o {} {} 2>&1", BURN_TEST_CXX,
                                          library_path.string(), source_path.string());
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  void* library = ::dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << ::dlerror();
  std::filesystem::remove_all(dir);

  std::size_t compared = 0, errors_matched = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    Planned& p = planned[k];
    for (const Launch& l : p.launches) {
      void* symbol = ::dlsym(library, fmt::format("burn_run_{}", sources.at(l.source)).c_str());
      ASSERT_NE(symbol, nullptr) << c.label;
      void (*run)(const void*) = nullptr;
      std::memcpy(&run, &symbol, sizeof(run));
      run(l.params.data());
    }
    const auto want = run_on_flex(c);
    if (!want) {
      EXPECT_NE(*p.error_bits, 0u) << c.label << ": flex refused the inputs, the kernel reported nothing";
      ++errors_matched;
      continue;
    }
    EXPECT_EQ(*p.error_bits, 0u) << c.label << ": the kernel reported an error flex did not";
    for (std::size_t o = 0; o < c.outputs.size(); ++o) {
      const ir::TensorSpec& spec = c.outputs[o];
      std::vector<std::byte> bytes(p.outputs[o].begin(), p.outputs[o].end() - 1);
      const TensorData got(std::move(bytes), spec.shape, spec.dtype);
      if (is_float(spec.dtype)) {
        const auto w = (*want)[o].convert(DType::F64).to_vec<double>();
        const auto g = got.convert(DType::F64).to_vec<double>();
        std::size_t bad = 0;
        for (std::size_t i = 0; i < w.size() && bad < 3; ++i)
          if (!close(w[i], g[i], spec.dtype, c.approximate)) {
            ++bad;
            ADD_FAILURE() << c.label << " element " << i << ": flex " << w[i] << ", kernel " << g[i];
          }
      } else {
        const auto w = (*want)[o].bytes();
        const auto g = got.bytes();
        EXPECT_TRUE(std::equal(w.begin(), w.end(), g.begin(), g.end())) << c.label << ": results differ";
      }
    }
    ++compared;
  }
  std::printf("%zu cases, %zu distinct kernels: %zu compared with flex, %zu refused by both\n", cases.size(),
              sources.size(), compared, errors_matched);
  EXPECT_GT(compared, 2000u);
  EXPECT_GT(errors_matched, 10u);  // the wild inputs reach the error paths
}

}  // namespace
}  // namespace burn::cuda
