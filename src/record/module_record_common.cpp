// The pieces save_module and load_module share.
#include <cstring>

#include "module_record_detail.hpp"

namespace burn::record::detail {

bool stored_transposed(const module::ParamBase& tensor, Adapter adapter) noexcept {
  return adapter == Adapter::PyTorch && tensor.is_pytorch_transposed();
}

TensorData transpose_2d(const TensorData& data) {
  const Shape& s = data.shape();
  if (s.rank() != 2)
    throw Error("record", "only 2-D tensors have a PyTorch transposed layout, got shape " + s.to_string());
  const std::size_t rows = s[0], cols = s[1], size = dtype_size(data.dtype());
  const auto in = data.bytes();
  std::vector<std::byte> out(in.size());
  // Element (i, j) of [rows, cols] becomes element (j, i) of [cols, rows].
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) std::memcpy(&out[(j * rows + i) * size], &in[(i * cols + j) * size], size);
  return TensorData(std::move(out), transposed_shape(s), data.dtype());
}

Shape transposed_shape(const Shape& shape) {
  if (shape.rank() != 2) return shape;
  return Shape{shape[1], shape[0]};
}

}  // namespace burn::record::detail
