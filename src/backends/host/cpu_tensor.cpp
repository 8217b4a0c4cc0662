#include "backends/host/cpu_tensor.hpp"

#include <array>
#include <cstring>
#include <mutex>
#include <typeinfo>
#include <utility>

#include "core/huge_pages.hpp"
#include "core/object_pool.hpp"

namespace burn::host {

Strides contiguous_strides(const Extents& shape) {
  Strides s(shape.size());
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

// The primitive and its buffer record come from the per-thread object pool:
// every op makes them, and a tiny op would otherwise spend a large share of
// its time in malloc and free.
CpuTensorPtr CpuTensor::allocate(const std::shared_ptr<Allocator>& alloc, const ir::TensorSpec& spec) {
  auto t = detail::make_pooled<CpuTensor>();
  t->dtype = spec.dtype;
  t->shape = spec.shape.dims();
  // Row-major strides written in place (contiguous_strides would build and
  // move a second vector).
  t->strides.resize(t->shape.size());
  std::int64_t acc = 1;
  for (std::size_t i = t->shape.size(); i-- > 0;) {
    t->strides[i] = acc;
    acc *= static_cast<std::int64_t>(t->shape[i]);
  }
  t->buffer = detail::make_pooled<Buffer>(alloc, spec.shape.num_elements() * dtype_size(spec.dtype));
  return t;
}

CpuTensorPtr CpuTensor::view(Extents new_shape, Strides new_strides, std::int64_t new_offset) const {
  auto t = detail::make_pooled<CpuTensor>();
  t->buffer = buffer;
  t->dtype = dtype;
  t->shape = std::move(new_shape);
  t->strides = std::move(new_strides);
  t->offset = new_offset;
  return t;
}

namespace {
// Opaque-layout changes are rare (one per convolution output at most), so a
// few striped mutexes serve every tensor without making CpuTensor larger.
std::mutex& opaque_mutex(const CpuTensor* t) {
  static std::array<std::mutex, 16> stripes;
  return stripes[(reinterpret_cast<std::uintptr_t>(t) >> 6) % stripes.size()];
}
}  // namespace

void CpuTensor::make_plain_locked() const {
  std::lock_guard lock(opaque_mutex(this));
  if (!opaque_flag_.load(std::memory_order_relaxed)) return;  // another thread did it
  auto plain = opaque_->to_plain(*this, buffer);
  // The representation changes under the value: holders of this tensor see
  // the same elements, now row-major (buffer is otherwise immutable here).
  const_cast<CpuTensor*>(this)->buffer = std::move(plain);
  opaque_.reset();
  opaque_flag_.store(false, std::memory_order_release);
}

void CpuTensor::set_opaque(std::shared_ptr<const OpaqueLayout> layout, std::shared_ptr<Buffer> blocked) {
  std::lock_guard lock(opaque_mutex(this));
  buffer = std::move(blocked);
  offset = 0;
  opaque_ = std::move(layout);
  opaque_flag_.store(true, std::memory_order_release);
}

CpuTensor::OpaqueView CpuTensor::opaque_view() const {
  if (!is_opaque()) return {};
  std::lock_guard lock(opaque_mutex(this));
  if (!opaque_flag_.load(std::memory_order_relaxed)) return {};
  return {opaque_, buffer};
}

void CpuTensor::keep_copy(OpaqueView copy) const {
  std::lock_guard lock(opaque_mutex(this));
  kept_ = std::move(copy);
}

CpuTensor::OpaqueView CpuTensor::kept_copy() const {
  std::lock_guard lock(opaque_mutex(this));
  return kept_;
}

CpuTensor::OpaqueView CpuTensor::take_kept_copy() const {
  std::lock_guard lock(opaque_mutex(this));
  return std::exchange(kept_, {});
}

void make_inputs_plain(std::span<const backend::Input> inputs, std::size_t skip) {
  for (std::size_t i = skip; i < inputs.size(); ++i) as_cpu(inputs[i].primitive).make_plain();
}

namespace {
// CpuTensor is final: comparing the dynamic type is exact and much cheaper
// than dynamic_cast on every operand of every op.
void check_cpu(const backend::PrimitivePtr& p) {
  const backend::Primitive* primitive = p.get();
  if (primitive == nullptr || typeid(*primitive) != typeid(CpuTensor))
    throw Error("cpu backend", "the tensor's storage does not belong to a CPU backend");
}
}  // namespace

const CpuTensor& as_cpu(const backend::PrimitivePtr& p) {
  check_cpu(p);
  return static_cast<const CpuTensor&>(*p);
}

CpuTensorPtr as_cpu_ptr(const backend::PrimitivePtr& p) {
  check_cpu(p);
  return std::static_pointer_cast<CpuTensor>(p);
}

namespace {
// Copies a strided view into dst (row-major). Dims that are adjacent in
// memory are merged first, so a permuted or sliced tensor becomes a few
// loops over long runs: contiguous runs go through memcpy, strided ones
// through a loop specialised on the element width (the per-element memcpy
// call of the generic walk costs ~20x a plain copy).
template <class W>
void copy_run(std::byte* dst, const std::byte* src, std::int64_t stride, std::size_t n) {
  auto* d = reinterpret_cast<W*>(dst);
  const auto* s = reinterpret_cast<const W*>(src);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(d + i, s + static_cast<std::int64_t>(i) * stride, sizeof(W));
}

void gather_bytes(const CpuTensor& t, std::byte* dst) {
  const std::size_t width = dtype_size(t.dtype);
  const std::byte* src = t.buffer ? t.buffer->data() : nullptr;
  const std::size_t n = t.num_elements();
  if (n == 0) return;
  if (t.is_contiguous()) {
    std::memcpy(dst, src + t.offset * static_cast<std::int64_t>(width), n * width);
    return;
  }
  // Drop size-1 dims and merge dims d, d+1 when stride[d] == stride[d+1] * shape[d+1].
  std::vector<std::size_t> shape;
  std::vector<std::int64_t> strides;
  for (std::size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] == 1) continue;
    if (!shape.empty() && strides.back() == t.strides[d] * static_cast<std::int64_t>(t.shape[d])) {
      shape.back() *= t.shape[d];
      strides.back() = t.strides[d];
    } else {
      shape.push_back(t.shape[d]);
      strides.push_back(t.strides[d]);
    }
  }
  if (shape.empty()) {  // a single element (every dim has size 1)
    std::memcpy(dst, src + t.offset * static_cast<std::int64_t>(width), width);
    return;
  }
  const std::size_t inner = shape.back();
  const std::int64_t inner_stride = strides.back();
  shape.pop_back();
  strides.pop_back();
  const std::size_t run_bytes = inner * width;
  auto copy = [&](std::byte* out, const std::byte* in) {
    if (inner_stride == 1) {
      std::memcpy(out, in, run_bytes);
      return;
    }
    switch (width) {
      case 1: copy_run<std::uint8_t>(out, in, inner_stride, inner); break;
      case 2: copy_run<std::uint16_t>(out, in, inner_stride, inner); break;
      case 4: copy_run<std::uint32_t>(out, in, inner_stride, inner); break;
      case 8: copy_run<std::uint64_t>(out, in, inner_stride, inner); break;
      default:
        for (std::size_t i = 0; i < inner; ++i)
          std::memcpy(out + i * width,
                      in + static_cast<std::int64_t>(i) * inner_stride * static_cast<std::int64_t>(width), width);
    }
  };
  const std::byte* base = src + t.offset * static_cast<std::int64_t>(width);
  if (shape.empty()) {
    copy(dst, base);
    return;
  }
  for_each_offset(shape, strides, 0, [&](std::size_t row, std::int64_t off) {
    copy(dst + row * run_bytes, base + off * static_cast<std::int64_t>(width));
  });
}
}  // namespace

TensorData to_tensor_data(const CpuTensor& t) {
  t.make_plain();
  const Shape shape(t.shape);
  // A tensor's shape was checked when it was made: this cannot overflow.
  const std::size_t n = shape.num_elements() * dtype_size(t.dtype);
  std::vector<std::byte> bytes;
  detail::reserve_with_huge_pages(bytes, n);
  bytes.resize(n);
  gather_bytes(t, bytes.data());
  return TensorData(std::move(bytes), shape, t.dtype);
}

CpuTensorPtr from_tensor_data(const std::shared_ptr<Allocator>& alloc, const TensorData& data) {
  auto t = CpuTensor::allocate(alloc, {data.shape(), data.dtype()});
  if (!data.bytes().empty()) std::memcpy(t->base(), data.bytes().data(), data.bytes().size());
  return t;
}

CpuTensorPtr contiguous(const std::shared_ptr<Allocator>& alloc, const CpuTensorPtr& t, bool force_copy) {
  t->make_plain();
  if (t->is_contiguous() && !force_copy) return t;
  auto out = CpuTensor::allocate(alloc, {Shape(t->shape), t->dtype});
  gather_bytes(*t, out->base());
  return out;
}

}  // namespace burn::host
