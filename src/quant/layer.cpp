// A quantized layer's int8 values: the tensor it was made with until its
// kernel holds a copy of its own, then that copy alone.
#include "quant/layer.hpp"

#include <burn/detail/ops.hpp>

namespace burn::quant::detail {

using burn::detail::TensorRef;

TensorRef QuantizedLayer::values() const {
  std::lock_guard lock(values_mutex);
  if (q.values) return q.values;
  // Released: the prepared operands hold the values. A Linear layer's one
  // operand is its [d_in, d_out] weight; a convolution's group g holds
  // column o = output channel g * group_out + o, whose k weights are
  // consecutive in the [out, in / groups, kh, kw] layout.
  std::vector<std::int8_t> all(shape.num_elements());
  std::size_t start = 0;
  for (const auto& operand : prepared) {
    const std::vector<std::int8_t> columns = operand->read_values();
    for (std::size_t o = 0; o < operand->n; ++o)
      for (std::size_t l = 0; l < operand->k; ++l)
        all[kind == LayerKind::Linear ? l * operand->n + o : start + o * operand->k + l] = columns[l * operand->n + o];
    start += operand->k * operand->n;
  }
  return burn::detail::from_data(TensorData(all, shape), TensorCreationOptions(q.scales->device, DType::I8),
                                 TensorKind::Int);
}

void QuantizedLayer::release_values() const {
  std::lock_guard lock(values_mutex);
  if (!q.values || prepared.empty()) return;
  for (const auto& operand : prepared)
    if (!operand->holds_copy()) return;
  q.values = nullptr;
}

}  // namespace burn::quant::detail
