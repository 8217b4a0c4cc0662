// The int8 GEMM behind quantized matmul and Linear layers: int8 activations
// times int8 weights with 32-bit accumulation and per-column f32 output
// scales. Three implementations, one chosen per process
// (burn::quant::detail::Int8Kernel):
//  - OneDnn: oneDNN's int8 matmul (the flex backend's dependency), the
//    choice where the CPU has VNNI;
//  - Avx2 and Avx2FewerMultiplies: our own AVX2 kernel (int8_gemm_avx2.cpp)
//    with one of its two inner steps, the choice on AVX2 CPUs without VNNI,
//    where Debian's oneDNN 2.6 int8 GEMM is slower than its f32 one;
//  - Reference: plain loops, anywhere.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <burn/quant/quantized_tensor.hpp>

namespace burn::quant::kernels {

using detail::Int8Kernel;

/// Whether `device` keeps tensors in host memory (cpu, flex, ndarray), where
/// the int8 GEMM computes; other devices compute the same values in f32.
inline bool host_memory_device(const Device& device) {
  const DeviceType t = device.type();
  return t == DeviceType::Flex || t == DeviceType::Cpu || t == DeviceType::NdArray;
}

/// The kernel in use (the default choice unless a test picked another).
Int8Kernel active_kernel();

/// The largest |activation| the active kernel sums exactly. The u8 x s8
/// products of oneDNN without VNNI and of the AVX2 kernel go through
/// vpmaddubsw, which adds two products into a saturating 16-bit lane: exact
/// only for activations within ±63 (7 bits, the reason PyTorch's fbgemm
/// uses reduce_range; the AVX2 kernel spends the spare bit on adding two
/// lanes before widening). VNNI (vpdpbusd) and the reference loops take ±127.
int exact_activation_qmax();

struct Avx2Panels;        // int8_gemm_avx2.cpp
struct OneDnnPrimitives;  // int8_gemm_onednn.cpp

/// Makes a layer's int8 weights [k, n] in row-major order (from its int8
/// tensor, where a kernel asks for them).
using Int8Source = std::function<std::vector<std::int8_t>()>;

/// Weights [k, n] prepared once for repeated products; each kernel's own
/// layout is made on its first use. The plain values are kept only where a
/// kernel reads them plain (the reference loops): the AVX2 and oneDNN
/// kernels pack them once and keep only their own layout. Once one of these
/// copies exists, the values are read back from it (read_values) and the
/// source is no longer needed: the layer may release its int8 tensor.
struct Int8Weights {
  std::size_t k = 0, n = 0;
  std::vector<float> scales;  // one per column
  Int8Source source;

  /// The [k, n] row-major values, made on first use and kept.
  const std::vector<std::int8_t>& values() const {
    std::call_once(values_once, [&] {
      plain = read_values();
      plain_held.store(true, std::memory_order_release);
    });
    return plain;
  }
  /// The [k, n] row-major values, from a copy this object holds (the plain
  /// values, the AVX2 panels or oneDNN's layout), else from the source.
  std::vector<std::int8_t> read_values() const;
  /// Whether this object holds a copy of the values of its own.
  bool holds_copy() const {
    return plain_held.load(std::memory_order_acquire) || avx2_held.load(std::memory_order_acquire) ||
           onednn_held.load(std::memory_order_acquire);
  }

  mutable std::once_flag values_once;
  mutable std::vector<std::int8_t> plain;

  mutable std::once_flag avx2_once;
  mutable std::shared_ptr<const Avx2Panels> avx2;
  mutable std::once_flag onednn_once;
  mutable std::shared_ptr<OneDnnPrimitives> onednn;

  // Set, with release order, once the copy beside them is complete.
  mutable std::atomic<bool> plain_held{false}, avx2_held{false}, onednn_held{false};
};

std::shared_ptr<const Int8Weights> prepare_int8_weights(Int8Source source, std::size_t k, std::size_t n,
                                                        std::span<const float> scales);

/// Where the int8 GEMM writes element [i, j] of its product: data[i *
/// row_stride + j * col_stride], plus bias[j] where a bias is given. A
/// Linear layer writes rows; a convolution writes one image's channels
/// (row_stride 1, col_stride the plane size), each with its bias.
struct Int8Output {
  float* data = nullptr;
  std::size_t row_stride = 0;
  std::size_t col_stride = 1;
  const float* bias = nullptr;

  float& at(std::size_t i, std::size_t j) const { return data[i * row_stride + j * col_stride]; }
  /// `v` plus column j's bias.
  float with_bias(float v, std::size_t j) const { return bias ? v + bias[j] : v; }
  /// The value stored for a sum: scaled, plus the column's bias.
  float value(std::int32_t sum, float scale, std::size_t j) const {
    return with_bias(static_cast<float>(sum) * scale, j);
  }
};

/// out[i, j] = a_scale * scale[j] * sum_l a[i, l] w[l, j] (+ bias[j]), for
/// activations with every |a| <= exact_activation_qmax().
void int8_matmul(const std::int8_t* a, std::size_t m, float a_scale, const Int8Weights& w, const Int8Output& out);
/// The same into a contiguous [m, n] output without bias.
inline void int8_matmul(const std::int8_t* a, std::size_t m, float a_scale, const Int8Weights& w, float* out) {
  int8_matmul(a, m, a_scale, w, Int8Output{out, w.n});
}

/// Rounds x / scale to the nearest integer (ties to even), clamped to
/// ±qmax: how quantized layers quantize their input. Vectorizes (no libm
/// call per element).
void quantize_activations(const float* x, std::size_t count, float scale, int qmax, std::int8_t* q);

/// The same for any int8 activations: where the active kernel takes 7 bits,
/// values past ±63 are split as a = 64 h + l (h in [-2, 1], l in [0, 63]) and
/// computed as two exact products.
void int8_matmul_any_range(const std::int8_t* a, std::size_t m, float a_scale, const Int8Weights& w, float* out);

// ---- the kernels (each file's entry points) ---------------------------------------------------------------
/// Whether this CPU runs the AVX2 kernel.
bool avx2_supported();
/// Whether the AVX2 kernel's fewer-multiplies step is the faster one here.
bool avx2_prefers_fewer_multiplies();
/// The [k, n] row-major values of the AVX2 kernel's panels.
std::vector<std::int8_t> unpack_avx2(const Avx2Panels& panels, std::size_t k, std::size_t n);
/// out = (sum a w) * col_scales, for |a| <= 63, by either inner step.
void int8_matmul_avx2(const std::int8_t* a, std::size_t m, const Int8Weights& w, const float* col_scales,
                      const Int8Output& out, bool fewer_multiplies);

/// Whether the build has oneDNN, and whether this CPU gives it VNNI.
bool onednn_available();
bool onednn_has_vnni();
void int8_matmul_onednn(const std::int8_t* a, std::size_t m, const Int8Weights& w, const float* col_scales,
                        int zero_point, const Int8Output& out);
/// The [k, n] row-major values of the first layout oneDNN's kernel keeps
/// (reordered back to plain), or nothing when it keeps none.
std::vector<std::int8_t> unpack_onednn(OneDnnPrimitives& primitives, std::size_t k, std::size_t n);

/// The thread count of the int8 kernels: as many as flex's kernels use
/// (BURN_NUM_THREADS, the device's set_num_threads), so a quantized layer
/// keeps a run's thread budget.
int int8_threads();

}  // namespace burn::quant::kernels
