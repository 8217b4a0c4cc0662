// Quantized tensors: integer values plus f32 scales, on any device.
//
//   auto q = burn::quant::quantize(w, burn::quant::QuantScheme::int8_per_channel(1));
//   burn::Tensor<2> back = q.dequantize();            // f32, |back - w| <= scale / 2
//   burn::Tensor<2> y = burn::quant::quantized_matmul(qx, q);   // int8 x int8, f32 out
//
// A QuantizedTensor is a pair of ordinary tensors on one device: `values`
// (I8, the tensor's shape; int4 values are kept one per byte in memory and
// packed two per byte in records) and `scales` (F32, one per group of the
// scheme). Being made of ordinary tensors, it works on every device and moves
// between devices like any tensor; quantize and dequantize are tensor
// operations that run where the data is.
#pragma once

#include <cstddef>
#include <vector>

#include <burn/quant/scheme.hpp>
#include <burn/tensor.hpp>

namespace burn::quant {

namespace detail {

struct QuantizedRefs {
  burn::detail::TensorRef values;  // I8, the original shape
  burn::detail::TensorRef scales;  // F32 [groups]
};

/// The number of scales `scheme` gives a tensor of `shape`; throws
/// burn::Error naming `op` when the scheme does not fit the shape.
std::size_t scale_count(const Shape& shape, const QuantScheme& scheme, const char* op);
/// On the host-memory devices an f32 tensor is quantized in two passes over
/// its bytes; elsewhere, and for f16/bf16, by quantize_with_operations.
QuantizedRefs quantize(const burn::detail::TensorRef& x, const QuantScheme& scheme);
/// quantize as tensor operations on the tensor's device (|x|, max, divide,
/// round, clamp, cast): the same values and scales, bit for bit.
QuantizedRefs quantize_with_operations(const burn::detail::TensorRef& x, const QuantScheme& scheme);
burn::detail::TensorRef dequantize(const QuantizedRefs& q, const QuantScheme& scheme);
/// Checks a values/scales pair against the scheme (dtypes, shapes, device).
void check_quantized(const QuantizedRefs& q, const QuantScheme& scheme);
burn::detail::TensorRef quantized_matmul(const QuantizedRefs& a, const QuantScheme& a_scheme, const QuantizedRefs& b,
                                         const QuantScheme& b_scheme);

/// The int8 GEMM implementations on the host (docs/precision.md): oneDNN's,
/// our AVX2 kernel with either of its inner steps (activations with a zero
/// point; the weights' signs moved onto the activations, fewer multiplies),
/// plain loops. Auto is the default choice for this CPU.
enum class Int8Kernel { Auto, OneDnn, Avx2, Avx2FewerMultiplies, Reference };
/// The ones this build and CPU can run.
std::vector<Int8Kernel> available_int8_kernels();
/// Makes the process use `kernel` (tests compare them); Auto restores the
/// default. Throws burn::Error for a kernel this CPU or build cannot run.
void use_int8_kernel(Int8Kernel kernel);

}  // namespace detail

template <std::size_t D>
class QuantizedTensor {
 public:
  /// Wraps already quantized data; throws burn::Error when `values` is not
  /// I8, the scales are not F32 [groups], or they sit on different devices.
  QuantizedTensor(Tensor<D, Int> values, Tensor<1> scales, QuantScheme scheme)
      : values_(std::move(values)), scales_(std::move(scales)), scheme_(scheme) {
    detail::check_quantized({values_.ref(), scales_.ref()}, scheme_);
  }

  const Tensor<D, Int>& values() const noexcept { return values_; }
  const Tensor<1>& scales() const noexcept { return scales_; }
  const QuantScheme& scheme() const noexcept { return scheme_; }
  Shape shape() const { return values_.shape(); }
  Device device() const { return values_.device(); }

  /// The f32 tensor these values stand for: scale * value per group.
  Tensor<D> dequantize() const { return Tensor<D>(detail::dequantize({values_.ref(), scales_.ref()}, scheme_)); }
  QuantizedTensor to_device(const Device& device) const {
    return QuantizedTensor(values_.to_device(device), scales_.to_device(device), scheme_);
  }
  /// Bytes a record of this tensor holds: the values at their bit width
  /// (int4 packed two per byte) plus four per scale.
  std::size_t storage_bytes() const {
    const std::size_t n = shape().num_elements();
    const std::size_t value_bytes = scheme_.bits == QuantBits::Int4 ? (n + 1) / 2 : n;
    return value_bytes + 4 * scales_.shape()[0];
  }

 private:
  Tensor<D, Int> values_;
  Tensor<1> scales_;
  QuantScheme scheme_;
};

/// Quantizes a float tensor (any float dtype; scales are computed in f32) on
/// its own device. Throws burn::Error("[quantize] ...") when the scheme does
/// not fit: a channel axis past the rank, or a block size that does not
/// divide the number of elements.
template <std::size_t D>
QuantizedTensor<D> quantize(const Tensor<D>& x, const QuantScheme& scheme) {
  auto q = detail::quantize(x.ref(), scheme);
  return QuantizedTensor<D>(Tensor<D, Int>(std::move(q.values)), Tensor<1>(std::move(q.scales)), scheme);
}

template <std::size_t D>
Tensor<D> dequantize(const QuantizedTensor<D>& q) {
  return q.dequantize();
}

/// The largest |value| quantized layers give their activations on this
/// machine: 63 (7 bits, as PyTorch's fbgemm reduce_range) where the int8
/// GEMM adds pairs of u8 x s8 products in saturating 16-bit lanes (AVX2
/// without VNNI), else 127 (VNNI, or the plain loops).
int activation_qmax();

/// a [m, k] times b [k, n], both int8, with 32-bit integer accumulation and
/// an f32 result: scale_a * scale_b[j] * sum_k a[i,k] b[k,j]. `a` is per
/// tensor; `b` per tensor or per channel along axis 1 (one scale per output
/// column). On host devices the product runs in the int8 GEMM (oneDNN with
/// VNNI, else our AVX2 kernel); elsewhere
/// it is computed from the dequantized operands in f32.
inline Tensor<2> quantized_matmul(const QuantizedTensor<2>& a, const QuantizedTensor<2>& b) {
  return Tensor<2>(detail::quantized_matmul({a.values().ref(), a.scales().ref()}, a.scheme(),
                                            {b.values().ref(), b.scales().ref()}, b.scheme()));
}

}  // namespace burn::quant
