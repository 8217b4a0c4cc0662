#include "backends/cpu_common/cpu_tensor.hpp"

#include <cstring>

namespace burn::cpu {

std::vector<std::int64_t> contiguous_strides(const std::vector<std::size_t>& shape) {
  std::vector<std::int64_t> s(shape.size());
  std::int64_t acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= static_cast<std::int64_t>(shape[i]);
  }
  return s;
}

std::size_t CpuTensor::num_elements() const noexcept {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

bool CpuTensor::is_contiguous() const noexcept {
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= static_cast<std::int64_t>(shape[i]);
  }
  return true;
}

CpuTensorPtr CpuTensor::allocate(const std::shared_ptr<Allocator>& alloc, const ir::TensorSpec& spec) {
  auto t = std::make_shared<CpuTensor>();
  t->dtype = spec.dtype;
  t->shape = spec.shape.dims();
  t->strides = contiguous_strides(t->shape);
  t->buffer = std::make_shared<Buffer>(alloc, spec.shape.num_elements() * dtype_size(spec.dtype));
  return t;
}

CpuTensorPtr CpuTensor::view(std::vector<std::size_t> new_shape, std::vector<std::int64_t> new_strides,
                             std::int64_t new_offset) const {
  auto t = std::make_shared<CpuTensor>();
  t->buffer = buffer;
  t->dtype = dtype;
  t->shape = std::move(new_shape);
  t->strides = std::move(new_strides);
  t->offset = new_offset;
  return t;
}

const CpuTensor& as_cpu(const backend::PrimitivePtr& p) { return *as_cpu_ptr(p); }

CpuTensorPtr as_cpu_ptr(const backend::PrimitivePtr& p) {
  auto t = std::dynamic_pointer_cast<CpuTensor>(p);
  if (!t) throw Error("cpu backend", "the tensor's storage does not belong to a CPU backend");
  return t;
}

namespace {
// Copies a strided view element by element into dst (row-major).
void gather_bytes(const CpuTensor& t, std::byte* dst) {
  const std::size_t width = dtype_size(t.dtype);
  const std::byte* src = t.buffer ? t.buffer->data() : nullptr;
  if (t.is_contiguous()) {
    if (t.num_elements()) std::memcpy(dst, src + t.offset * static_cast<std::int64_t>(width), t.num_elements() * width);
    return;
  }
  for_each_offset(t.shape, t.strides, t.offset, [&](std::size_t i, std::int64_t off) {
    std::memcpy(dst + i * width, src + off * static_cast<std::int64_t>(width), width);
  });
}
}  // namespace

TensorData to_tensor_data(const CpuTensor& t) {
  TensorData data = TensorData::zeros(Shape(t.shape), t.dtype);
  gather_bytes(t, data.bytes_mut().data());
  return data;
}

CpuTensorPtr from_tensor_data(const std::shared_ptr<Allocator>& alloc, const TensorData& data) {
  auto t = CpuTensor::allocate(alloc, {data.shape(), data.dtype()});
  if (!data.bytes().empty()) std::memcpy(t->base(), data.bytes().data(), data.bytes().size());
  return t;
}

CpuTensorPtr contiguous(const std::shared_ptr<Allocator>& alloc, const CpuTensorPtr& t, bool force_copy) {
  if (t->is_contiguous() && !force_copy) return t;
  auto out = CpuTensor::allocate(alloc, {Shape(t->shape), t->dtype});
  gather_bytes(*t, out->base());
  return out;
}

}  // namespace burn::cpu
