#include "backends/vulkan/backend.hpp"

#include <burn/backend/kernel_dispatch.hpp>

#include <fmt/format.h>

#include "backends/host/cpu_backend.hpp"
#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/vk_check.hpp"

namespace burn::vulkan {

VulkanBackend::VulkanBackend(std::string api, std::size_t adapter)
    : api_(std::move(api)), gpu_(std::make_shared<Gpu>(adapter, fmt::format("{}:{}", api_, adapter))) {
  pool_ = std::make_shared<MemoryPool>(gpu_, MemoryPool::Kind::Device);
  pipelines_ = std::make_unique<Pipelines>(gpu_);
  auto error_word = std::make_shared<DeviceBuffer>(pool_, pool_->allocate(4));
  stream_ = std::make_unique<vulkan::Stream>(gpu_, *pipelines_, std::move(error_word));
  clock_link_->backend = this;
}

VulkanBackend::~VulkanBackend() {
  // Profile windows resolved from now on find their stamps settled by the
  // stream's end (the lock keeps them waiting until it has settled them).
  std::lock_guard clock_lock(clock_link_->mutex);
  clock_link_->backend = nullptr;
  // The stream waits for the queue before anything it used goes away.
  stream_.reset();
  pipelines_.reset();
}

std::string VulkanBackend::description() const {
  const AdapterInfo& a = gpu_->adapter();
  return fmt::format("Vulkan compute on {} ({}, Vulkan {}.{})", a.name, adapter_type_name(a.type),
                     VK_API_VERSION_MAJOR(a.api_version), VK_API_VERSION_MINOR(a.api_version));
}

std::string VulkanBackend::physical_name() const {
  // A CPU adapter computes on the host processor: name it like the CPU backends do.
  if (gpu_->adapter().type == VK_PHYSICAL_DEVICE_TYPE_CPU) return host::cpu_name();
  return gpu_->adapter().name;
}

bool VulkanBackend::supports_dtype(DType dtype) const {
  const AdapterInfo& a = gpu_->adapter();
  switch (dtype) {
    case DType::F32:
    case DType::I32:
    case DType::U32: return true;
    case DType::F64: return a.float64;
    case DType::I64:
    case DType::U64: return a.int64;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
    case DType::U16: return a.storage16;
    case DType::I8:
    case DType::U8:
    case DType::Bool: return a.storage8;
  }
  return false;
}

void VulkanBackend::require_dtype(DType dtype, std::string_view op) const {
  if (supports_dtype(dtype)) return;
  const char* feature = dtype == DType::F64                          ? "shaderFloat64"
                        : dtype == DType::I64 || dtype == DType::U64 ? "shaderInt64"
                        : dtype_size(dtype) == 2                     ? "storageBuffer16BitAccess"
                                                                     : "storageBuffer8BitAccess";
  throw Error(op, fmt::format("{} is not supported by {} ({}): the adapter lacks the Vulkan feature {}; use a "
                              "dtype for which supports_dtype() is true, or another device",
                              dtype_name(dtype), label(), gpu_->adapter().name, feature));
}

bool VulkanBackend::supports_op(const ir::Op& op) const { return backend::has_kernel<Context>(op); }

std::vector<backend::PrimitivePtr> VulkanBackend::execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                                          std::span<const ir::TensorSpec> outputs) {
  const std::string_view name = ir::op_name(op);
  for (const auto& in : inputs) require_dtype(in.spec.dtype, name);
  for (const auto& out : outputs) require_dtype(out.dtype, name);
  std::lock_guard lock(mutex_);
  const Context ctx{*this, name};
  return backend::run_kernel(ctx, op, inputs, outputs, *this);
}

VkTensorPtr VulkanBackend::allocate(const ir::TensorSpec& spec, std::string_view op) {
  const std::uint64_t bytes = spec.shape.num_elements() * dtype_size(spec.dtype);
  // Shaders index elements with 32-bit ints.
  const std::uint64_t limit = std::min<std::uint64_t>(gpu_->adapter().limits.maxStorageBufferRange,
                                                      std::uint64_t{0x7fffffff} * dtype_size(spec.dtype));
  if (bytes > limit)
    throw Error(op, fmt::format("a {} tensor of shape {} needs {} bytes, more than {} can bind in one buffer ({} "
                                "bytes); split it or use another device",
                                dtype_name(spec.dtype), spec.shape.to_string(), bytes, label(), limit));
  Block block;
  try {
    block = pool_->allocate(bytes);
  } catch (const OutOfDeviceMemory&) {
    // Cached blocks may be what fills the device: wait, free them, retry once.
    stream_->sync();
    pool_->cleanup();
    try {
      block = pool_->allocate(bytes);
    } catch (const OutOfDeviceMemory& e) {
      throw Error(op, fmt::format("out of device memory on {} allocating {} bytes ({}); free tensors or use a "
                                  "smaller batch",
                                  label(), bytes, result_name(e.result)));
    }
  }
  auto t = std::make_shared<VkTensor>();
  t->buffer = std::make_shared<DeviceBuffer>(pool_, block);
  t->dtype = spec.dtype;
  t->shape = spec.shape.dims();
  t->strides = row_major_strides(t->shape);
  return t;
}

backend::PrimitivePtr VulkanBackend::from_data(TensorData data) {
  require_dtype(data.dtype(), "from_data");
  std::lock_guard lock(mutex_);
  auto t = allocate(ir::TensorSpec{data.shape(), data.dtype()}, "from_data");
  stream_->upload(data.bytes(), Binding{t->buffer->block().buffer, t->buffer->block().offset, data.bytes().size()});
  return t;
}

TensorData VulkanBackend::to_data(const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec) {
  std::lock_guard lock(mutex_);
  const Context ctx{*this, "to_data"};
  const VkTensorPtr t = contiguous(ctx, as_vk_ptr(primitive));
  std::vector<std::byte> bytes(t->num_elements() * dtype_size(t->dtype));
  const Block& b = t->buffer->block();
  const VkDeviceSize start = b.offset + static_cast<VkDeviceSize>(t->offset) * dtype_size(t->dtype);
  stream_->download(Binding{b.buffer, start, bytes.size()}, bytes);
  return TensorData(std::move(bytes), spec.shape, spec.dtype);
}

void VulkanBackend::seed(std::uint64_t seed) {
  std::lock_guard lock(mutex_);
  rng_.seed(seed);
}

void VulkanBackend::sync() {
  std::lock_guard lock(mutex_);
  stream_->sync();
}

void VulkanBackend::flush() {
  std::lock_guard lock(mutex_);
  stream_->flush();
}

void VulkanBackend::cleanup() {
  std::lock_guard lock(mutex_);
  stream_->sync();
  pool_->cleanup();
  stream_->upload_pool().cleanup();
  stream_->readback_pool().cleanup();
}

void VulkanBackend::fail_next_submit() {
  std::lock_guard lock(mutex_);
  stream_->fail_next_submit();
}

}  // namespace burn::vulkan
