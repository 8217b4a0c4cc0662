// One layer of a quantization plan (include/burn/quant/ptq.hpp), shared by
// the layer hooks and the record reader and writer.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <burn/quant/ptq.hpp>

#include "quant/int8_conv.hpp"
#include "quant/int8_gemm.hpp"

namespace burn::quant::detail {

/// Whether a layer with weights in `scheme` quantizes its activations too
/// (int8 per tensor or per output channel), or its weights only (blocks).
inline bool computes_in_int8(const QuantScheme& scheme) {
  return scheme.bits == QuantBits::Int8 && scheme.level != QuantLevel::Block;
}

struct QuantizedLayer {
  LayerKind kind;
  QuantScheme scheme;
  /// The values and scales. q.values is read through values(): an int8
  /// layer on a host device releases it once its kernel keeps its own copy.
  mutable QuantizedRefs q;
  Shape shape;                      // the values' (the weight's)
  std::optional<float> input_amax;  // nullopt: dynamic
  burn::detail::TensorRef weight;   // what the model holds (held_weight; kept alive: the plan's key)

  /// The int8 values as a tensor on the layer's device: the one it was
  /// made with, or, once released, made again from the kernel's copy (for
  /// records and model()).
  burn::detail::TensorRef values() const;
  /// Drops the int8 tensor once every prepared GEMM operand holds a copy of
  /// its own, so that the kernel's packed form is the only one in memory.
  void release_values() const;

  /// Whether the layer computes with quantized activations (int8 per tensor
  /// or per output channel), or quantizes its weights only (block schemes).
  bool quantizes_activations() const { return computes_in_int8(scheme); }

  /// A Linear layer's weights in the int8 GEMM's form, prepared on first use.
  const kernels::Int8Weights& int8_weights() const {
    std::call_once(prepared_once, [&] {
      const auto scales = burn::detail::to_data(q.scales).to_vec<float>();
      prepared.push_back(kernels::prepare_int8_weights(int8_source(), shape[0], shape[1], scales));
    });
    return *prepared.front();
  }

  /// A Conv2d layer's weights as one GEMM operand per group, prepared on
  /// first use (a layer's geometry is the same on every call but the input size).
  const std::vector<std::shared_ptr<const kernels::Int8Weights>>& int8_conv_weights(
      const kernels::Int8Conv2dGeometry& geometry) const {
    std::call_once(prepared_once, [&] {
      const auto scales = burn::detail::to_data(q.scales).to_vec<float>();
      prepared = kernels::prepare_int8_conv_weights(int8_source(), geometry, scales);
    });
    return prepared;
  }

  /// The int8 values read from the layer's tensor when a kernel asks (the
  /// host keeps no copy beside the kernel's own form). The prepared operands
  /// live in the layer, so they may point back at it.
  kernels::Int8Source int8_source() const {
    return [this] { return burn::detail::to_data(values()).to_vec<std::int8_t>(); };
  }

  /// The bias on the host, read again only when another bias tensor comes
  /// (a layer's bias is the same parameter on every call).
  std::shared_ptr<const std::vector<float>> bias_values(const burn::detail::TensorRef& bias) const {
    std::lock_guard lock(bias_mutex);
    if (bias_key != bias) {
      bias_host =
          std::make_shared<const std::vector<float>>(burn::detail::to_data(bias).convert(DType::F32).to_vec<float>());
      bias_key = bias;
    }
    return bias_host;
  }

 private:
  mutable std::mutex bias_mutex;
  mutable burn::detail::TensorRef bias_key;  // held, so its address cannot be reused by another tensor
  mutable std::shared_ptr<const std::vector<float>> bias_host;
  mutable std::once_flag prepared_once;
  mutable std::vector<std::shared_ptr<const kernels::Int8Weights>> prepared;
  mutable std::mutex values_mutex;  // guards q.values
};

}  // namespace burn::quant::detail
