// The int8 GEMM's front: kernel choice, prepared weights, the reference
// loops, and the split that makes 7-bit kernels exact for 8-bit inputs.
#include "quant/int8_gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include <omp.h>

#include <fmt/format.h>

#include <burn/config.hpp>
#include <burn/error.hpp>

#if BURN_HAS_FLEX
#include "backends/flex/threads.hpp"
#endif

namespace burn::quant::kernels {

namespace {

Int8Kernel default_kernel() {
  if (onednn_available() && onednn_has_vnni()) return Int8Kernel::OneDnn;
  if (avx2_supported()) return avx2_prefers_fewer_multiplies() ? Int8Kernel::Avx2FewerMultiplies : Int8Kernel::Avx2;
  if (onednn_available()) return Int8Kernel::OneDnn;
  return Int8Kernel::Reference;
}

std::atomic<Int8Kernel> chosen{Int8Kernel::Auto};

const char* kernel_name(Int8Kernel k) {
  switch (k) {
    case Int8Kernel::Auto: return "Auto";
    case Int8Kernel::OneDnn: return "OneDnn";
    case Int8Kernel::Avx2: return "Avx2";
    case Int8Kernel::Avx2FewerMultiplies: return "Avx2FewerMultiplies";
    case Int8Kernel::Reference: return "Reference";
  }
  return "?";
}

void reference_matmul(const std::int8_t* a, std::size_t m, const Int8Weights& w, const float* col_scales,
                      const Int8Output& out) {
  const std::vector<std::int8_t>& values = w.values();
  std::vector<std::int32_t> acc(w.n);
  for (std::size_t i = 0; i < m; ++i) {
    std::fill(acc.begin(), acc.end(), 0);
    for (std::size_t l = 0; l < w.k; ++l) {
      const auto x = static_cast<std::int32_t>(a[i * w.k + l]);  // NOLINT(bugprone-signed-char-misuse): a number
      const std::int8_t* row = values.data() + l * w.n;
      for (std::size_t j = 0; j < w.n; ++j) acc[j] += x * row[j];
    }
    for (std::size_t j = 0; j < w.n; ++j) out.at(i, j) = out.value(acc[j], col_scales[j], j);
  }
}

}  // namespace

Int8Kernel active_kernel() {
  const Int8Kernel k = chosen.load(std::memory_order_relaxed);
  if (k != Int8Kernel::Auto) return k;
  static const Int8Kernel fallback = default_kernel();
  return fallback;
}

int int8_threads() {
#if BURN_HAS_FLEX
  return static_cast<int>(burn::flex::pool_size());
#else
  return omp_get_max_threads();
#endif
}

int exact_activation_qmax() {
  switch (active_kernel()) {
    case Int8Kernel::OneDnn: return onednn_has_vnni() ? 127 : 63;
    case Int8Kernel::Avx2:
    case Int8Kernel::Avx2FewerMultiplies: return 63;
    default: return 127;
  }
}

std::shared_ptr<const Int8Weights> prepare_int8_weights(Int8Source source, std::size_t k, std::size_t n,
                                                        std::span<const float> scales) {
  if (scales.size() != 1 && scales.size() != n)
    throw Error("int8 matmul", "weights need one scale or one per output column");
  auto w = std::make_shared<Int8Weights>();
  w->k = k;
  w->n = n;
  w->source = std::move(source);
  w->scales.assign(n, scales[0]);
  if (scales.size() == n) std::copy(scales.begin(), scales.end(), w->scales.begin());
  return w;
}

std::vector<std::int8_t> Int8Weights::read_values() const {
  if (plain_held.load(std::memory_order_acquire)) return plain;
  if (avx2_held.load(std::memory_order_acquire)) return unpack_avx2(*avx2, k, n);
  if (onednn_held.load(std::memory_order_acquire)) return unpack_onednn(*onednn, k, n);
  return source();
}

void int8_matmul(const std::int8_t* a, std::size_t m, float a_scale, const Int8Weights& w, const Int8Output& out) {
  if (m == 0 || w.n == 0) return;
  std::vector<float> col_scales(w.n);
  for (std::size_t j = 0; j < w.n; ++j) col_scales[j] = a_scale * w.scales[j];
  switch (active_kernel()) {
    case Int8Kernel::Avx2: return int8_matmul_avx2(a, m, w, col_scales.data(), out, false);
    case Int8Kernel::Avx2FewerMultiplies: return int8_matmul_avx2(a, m, w, col_scales.data(), out, true);
    case Int8Kernel::OneDnn: return int8_matmul_onednn(a, m, w, col_scales.data(), exact_activation_qmax() + 1, out);
    default: return reference_matmul(a, m, w, col_scales.data(), out);
  }
}

void quantize_activations(const float* x, std::size_t count, float scale, int qmax, std::int8_t* q) {
  // Adding and subtracting 1.5 * 2^23 rounds a float below 2^22 in magnitude
  // to an integer in the current (nearest-even) rounding mode; clamping first
  // keeps every value in that range.
  constexpr float kRound = 12582912.0f;
  const float hi = static_cast<float>(qmax);
  for (std::size_t i = 0; i < count; ++i) {
    float v = x[i] / scale;
    v = v < -hi ? -hi : (v > hi ? hi : v);
    q[i] = static_cast<std::int8_t>((v + kRound) - kRound);
  }
}

void int8_matmul_any_range(const std::int8_t* a, std::size_t m, float a_scale, const Int8Weights& w, float* out) {
  const int qmax = exact_activation_qmax();
  const std::size_t count = m * w.k;
  const bool fits = std::all_of(a, a + count, [&](std::int8_t v) { return std::abs(int{v}) <= qmax; });
  if (fits) return int8_matmul(a, m, a_scale, w, out);
  // a = 64 h + l with h = floor(a / 64) in [-2, 1] and l in [0, 63]: both
  // parts are within ±63, and the two f32 results add up to the product.
  std::vector<std::int8_t> high(count), low(count);
  for (std::size_t i = 0; i < count; ++i) {
    const auto v = static_cast<int>(a[i]);  // NOLINT(bugprone-signed-char-misuse): a number
    const int h = v >= 0 ? v / 64 : -((-v + 63) / 64);
    high[i] = static_cast<std::int8_t>(h);
    low[i] = static_cast<std::int8_t>(v - 64 * h);
  }
  std::vector<float> low_out(m * w.n);
  int8_matmul(high.data(), m, 64.0f * a_scale, w, out);
  int8_matmul(low.data(), m, a_scale, w, low_out.data());
  for (std::size_t i = 0; i < low_out.size(); ++i) out[i] += low_out[i];
}

}  // namespace burn::quant::kernels

namespace burn::quant::detail {

std::vector<Int8Kernel> available_int8_kernels() {
  std::vector<Int8Kernel> out;
  if (kernels::onednn_available()) out.push_back(Int8Kernel::OneDnn);
  if (kernels::avx2_supported()) {
    out.push_back(Int8Kernel::Avx2);
    out.push_back(Int8Kernel::Avx2FewerMultiplies);
  }
  out.push_back(Int8Kernel::Reference);
  return out;
}

void use_int8_kernel(Int8Kernel kernel) {
  if (kernel != Int8Kernel::Auto) {
    const auto available = available_int8_kernels();
    if (std::find(available.begin(), available.end(), kernel) == available.end())
      throw Error("use_int8_kernel", fmt::format("the {} int8 kernel is not available in this build on this CPU",
                                                 kernels::kernel_name(kernel)));
  }
  kernels::chosen.store(kernel, std::memory_order_relaxed);
}

}  // namespace burn::quant::detail
