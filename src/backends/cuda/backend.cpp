#include "backends/cuda/backend.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <random>
#include <string_view>
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/driver.hpp"
#include "backends/cuda/nvrtc.hpp"

namespace burn::cuda {
namespace {

constexpr unsigned kThreadsPerBlock = 256;

/// Device memory from the driver, in the device's primary context.
class DriverMemory final : public DeviceMemory {
 public:
  explicit DriverMemory(CUcontext context) : context_(context) {}
  std::uint64_t allocate(std::size_t bytes) override {
    const DriverApi& api = driver().api;
    check(api.ctx_set_current(context_), "cuda", "cuCtxSetCurrent");
    CUdeviceptr address = 0;
    const CUresult r = api.mem_alloc(&address, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return 0;
    check(r, "cuda", "cuMemAlloc");
    return static_cast<std::uint64_t>(address);
  }
  void release(std::uint64_t address, std::size_t /*bytes*/) noexcept override {
    // Errors are ignored: at exit the driver may already be shutting down.
    const DriverApi& api = driver().api;
    if (api.ctx_set_current(context_) == CUDA_SUCCESS) (void)api.mem_free(static_cast<CUdeviceptr>(address));
  }

 private:
  CUcontext context_;
};

/// The driver's side of the staging buffers: pinned memory from
/// cuMemHostAlloc, copies on the device's stream, one event per buffer.
class DriverStaging final : public StagingDevice {
 public:
  DriverStaging(CUcontext context, CUstream stream) : context_(context), stream_(stream) {}
  ~DriverStaging() override {
    const DriverApi& api = driver().api;
    if (api.ctx_set_current(context_) != CUDA_SUCCESS) return;
    for (CUevent e : events_)
      if (e) (void)api.event_destroy(e);
  }
  DriverStaging(const DriverStaging&) = delete;
  DriverStaging& operator=(const DriverStaging&) = delete;

  std::byte* allocate_pinned(std::size_t bytes) override {
    void* pinned = nullptr;
    if (driver().api.mem_host_alloc(&pinned, bytes, 0) != CUDA_SUCCESS) return nullptr;
    return static_cast<std::byte*>(pinned);
  }
  void free_pinned(std::byte* pinned) noexcept override { (void)driver().api.mem_free_host(pinned); }
  void copy_to_device(std::uint64_t dst, const std::byte* src, std::size_t bytes) override {
    check(driver().api.memcpy_htod_async(static_cast<CUdeviceptr>(dst), src, bytes, stream_), "from_data",
          "cuMemcpyHtoDAsync");
  }
  void copy_to_host(std::byte* dst, std::uint64_t src, std::size_t bytes) override {
    check(driver().api.memcpy_dtoh_async(dst, static_cast<CUdeviceptr>(src), bytes, stream_), "to_data",
          "cuMemcpyDtoHAsync");
  }
  void mark(std::size_t slot) override {
    const DriverApi& api = driver().api;
    if (events_.at(slot) == nullptr)
      check(api.event_create(&events_[slot], CU_EVENT_DISABLE_TIMING), "cuda", "cuEventCreate");
    check(api.event_record(events_[slot], stream_), "cuda", "cuEventRecord");
    marked_.at(slot) = true;
  }
  void wait(std::size_t slot) override {
    if (!marked_.at(slot)) return;
    check(driver().api.event_synchronize(events_[slot]), "cuda", "cuEventSynchronize (a staged copy)");
  }

 private:
  CUcontext context_;
  CUstream stream_;
  std::array<CUevent, 2> events_{};
  std::array<bool, 2> marked_{};
};

/// An environment switch: 0 or 1, `fallback` when unset; anything else is
/// a ConfigurationError naming it.
bool env_switch(const char* name, bool fallback, std::string_view meaning) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  if (std::string_view(value) == "0") return false;
  if (std::string_view(value) == "1") return true;
  throw ConfigurationError("Device::cuda", fmt::format("{} must be 0 or 1 ({}), got '{}'", name, meaning, value));
}

/// BURN_CUDA_ALLOW_TF32=1 lets f32 matmuls and convolutions round their
/// inputs to TF32 (10 mantissa bits) on the tensor cores, as PyTorch's
/// allow_tf32 does: faster, less exact. Off by default.
bool allow_tf32() { return env_switch("BURN_CUDA_ALLOW_TF32", false, "1 lets f32 matmuls and convolutions use TF32"); }

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  check(driver().api.device_get_attribute(&value, which, device), "Device::cuda", "cuDeviceGetAttribute");
  return value;
}

}  // namespace

/// An event recorded on a device's stream, destroyed with its last holder
/// (a profile window may outlive the sync cycle it began in).
struct CudaEvent {
  CudaEvent(CUcontext c, CUstream stream, std::string_view op) : context(c) {
    const DriverApi& api = driver().api;
    check(api.event_create(&event, CU_EVENT_DEFAULT), op, "cuEventCreate");
    if (const CUresult r = api.event_record(event, stream); r != CUDA_SUCCESS) {
      (void)api.event_destroy(event);  // the destructor does not run for a throwing constructor
      check(r, op, "cuEventRecord");
    }
  }
  ~CudaEvent() {
    const DriverApi& api = driver().api;
    if (api.ctx_set_current(context) == CUDA_SUCCESS) (void)api.event_destroy(event);
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  CUcontext context;
  CUevent event = nullptr;
};

namespace {

class EventWindow final : public backend::DeviceClockWindow {
 public:
  EventWindow(std::shared_ptr<CudaEvent> begin, CUstream stream, std::string label)
      : begin_(std::move(begin)), stream_(stream), label_(std::move(label)) {}

  std::shared_future<std::optional<ProfileTicks>> close() override {
    check(driver().api.ctx_set_current(begin_->context), "Device::profile", "cuCtxSetCurrent");
    auto end = std::make_shared<CudaEvent>(begin_->context, stream_, "Device::profile");
    // Resolving waits for the device; closing does not.
    return std::async(std::launch::deferred,
                      [begin = begin_, end, label = label_]() -> std::optional<ProfileTicks> {
                        const DriverApi& api = driver().api;
                        float ms = 0;
                        CUresult r = api.ctx_set_current(end->context);
                        if (r == CUDA_SUCCESS) r = api.event_synchronize(end->event);
                        if (r == CUDA_SUCCESS) r = api.event_elapsed_time(&ms, begin->event, end->event);
                        if (r != CUDA_SUCCESS)
                          throw ExecutionError("Device::profile",
                                               fmt::format("{}: the window's work failed or the device went "
                                                           "away, so it has no measurement ({}); sync() reports "
                                                           "the device's error",
                                                           label, describe(api, r)));
                        return ProfileTicks(std::chrono::nanoseconds(std::llround(double{ms} * 1e6)));
                      })
        .share();
  }

 private:
  std::shared_ptr<CudaEvent> begin_;
  CUstream stream_;
  std::string label_;
};

}  // namespace

CudaBackend::CudaBackend(std::size_t index) : index_(index) {
  const Driver& d = driver();
  if (!d.unavailable.empty())
    throw DeviceError(DeviceErrorKind::NotAvailable, "Device::cuda", "no CUDA device: " + d.unavailable);
  const DriverApi& api = d.api;
  constexpr std::string_view op = "Device::cuda";
  check(api.device_get(&device_, static_cast<int>(index)), op, "cuDeviceGet");
  check(api.primary_ctx_retain(&context_, device_), op, "cuDevicePrimaryCtxRetain");
  make_current();
  capability_ = 10 * attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
                attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  multiprocessors_ = std::max(1, attribute(device_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  char name[256] = {};
  check(api.device_get_name(name, sizeof(name) - 1, device_), op, "cuDeviceGetName");
  gpu_name_ = name;
  check(api.device_total_mem(&total_memory_, device_), op, "cuDeviceTotalMem");
  char bus_id[64] = {};
  if (api.device_get_pci_bus_id(bus_id, sizeof(bus_id) - 1, device_) == CUDA_SUCCESS) pci_bus_id_ = bus_id;
  check(api.stream_create(&stream_, CU_STREAM_NON_BLOCKING), op, "cuStreamCreate");
  // Unseeded, a device draws differently in every process, as the CPU
  // backends do.
  std::random_device entropy;
  random_.seed = (std::uint64_t{entropy()} << 32) | entropy();
  allocator_ = CachingAllocator::create(std::make_unique<DriverMemory>(context_));
  staging_device_ = std::make_unique<DriverStaging>(context_, stream_);
  staging_ = std::make_unique<StagedCopies>(*staging_device_);
  // The libraries are optional: without one, its ops run on the generated
  // kernels. BURN_CUDA_CUBLASLT=0 and BURN_CUDA_CUDNN=0 leave one out.
  const bool tf32 = allow_tf32();
  if (env_switch("BURN_CUDA_CUBLASLT", true, "0 runs matmul on burn's own kernel")) {
    try {
      lt_ = std::make_unique<LtMatmul>(stream_, tf32);
    } catch (const Error& e) {
      lt_missing_ = e.what();
    }
  } else {
    lt_missing_ = "BURN_CUDA_CUBLASLT=0";
  }
  if (env_switch("BURN_CUDA_CUDNN", true, "0 runs convolutions on burn's own kernels")) {
    try {
      dnn_ = std::make_unique<DnnConv>(stream_, tf32);
    } catch (const Error& e) {
      dnn_missing_ = e.what();
    }
  } else {
    dnn_missing_ = "BURN_CUDA_CUDNN=0";
  }
  error_word_ = allocator_->allocate(sizeof(std::uint32_t), op);
  check(api.memset_d32_async(static_cast<CUdeviceptr>(error_word_->address()), 0, 1, stream_), op, "cuMemsetD32Async");
  // Where pinned memory cannot be had, sync copies the word from pageable
  // memory after the wait instead (a second wait).
  void* pinned = nullptr;
  if (api.mem_host_alloc(&pinned, sizeof(std::uint32_t), 0) == CUDA_SUCCESS)
    error_host_ = static_cast<std::uint32_t*>(pinned);
}

CudaBackend::~CudaBackend() {
  const DriverApi& api = driver().api;
  if (api.ctx_set_current(context_) == CUDA_SUCCESS) {
    (void)api.stream_synchronize(stream_);
    lt_.reset();
    dnn_.reset();
    owed_since_.reset();
    staging_.reset();
    staging_device_.reset();
    for (CUmodule m : modules_) (void)api.module_unload(m);
    (void)api.stream_destroy(stream_);
    if (error_host_ != nullptr) (void)api.mem_free_host(error_host_);
  }
  error_word_.reset();
  // Tensors still alive keep the allocator (and their memory) until they go.
  allocator_->cleanup();
  (void)api.primary_ctx_release(device_);
}

void CudaBackend::make_current() const { check(driver().api.ctx_set_current(context_), "cuda", "cuCtxSetCurrent"); }

std::string CudaBackend::description() const {
  const int version = driver().version;
  std::string matmul;
  if (lt_) {
    const std::size_t v = cublaslt_version();
    matmul = fmt::format("matmul by cuBLASLt {}.{}.{}{}", v / 10000, v / 100 % 100, v % 100,
                         lt_->allow_tf32() ? " (TF32 allowed)" : "");
  } else {
    matmul = "matmul by generated kernels: " + lt_missing_;
  }
  if (dnn_) {
    const std::size_t v = cudnn_version();
    matmul += fmt::format(", convolutions by cuDNN {}.{}.{}", v / 10000, v / 100 % 100, v % 100);
  } else {
    matmul += ", convolutions by generated kernels: " + dnn_missing_;
  }
  return fmt::format("CUDA {} (compute capability {}.{}, {:.1f} GiB, driver API {}.{}; {})", gpu_name_,
                     capability_ / 10, capability_ % 10, static_cast<double>(total_memory_) / (1 << 30), version / 1000,
                     version % 1000 / 10, matmul);
}

PhysicalIdentity CudaBackend::identity() const {
  PhysicalIdentity id;
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  // cuDeviceGetPCIBusId: "domain:bus:device.function" in hex, e.g. 0000:3b:00.0.
  if (std::sscanf(pci_bus_id_.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) == 4) {
    id.pci_address = PciAddress{domain, static_cast<std::uint8_t>(bus), static_cast<std::uint8_t>(device),
                                static_cast<std::uint8_t>(function)};
  } else {
    id.label = fmt::format("cuda-{}", index_);
  }
  return id;
}

bool CudaBackend::supports_dtype(DType dtype) const {
  // Native on every GPU the driver supports, except bf16 arithmetic before
  // Ampere, which the kernels do in f32 anyway (bf16 is only stored).
  (void)dtype;
  return true;
}

std::shared_ptr<CudaTensor> CudaBackend::new_tensor(const ir::TensorSpec& spec, std::string_view op) {
  return std::make_shared<CudaTensor>(allocator_->allocate(spec.shape.num_elements() * dtype_size(spec.dtype), op));
}

backend::PrimitivePtr CudaBackend::allocate(const ir::TensorSpec& spec, std::string_view op) {
  std::lock_guard lock(mutex_);
  make_current();
  return new_tensor(spec, op);
}

std::uint64_t CudaBackend::address_of(const backend::Primitive& tensor) const {
  return static_cast<const CudaTensor&>(tensor).block->address();
}

void CudaBackend::enqueue(const Launch& launch, std::string_view op) {
  std::lock_guard lock(mutex_);
  make_current();
  run(launch, op);
}

backend::PrimitivePtr CudaBackend::from_data(TensorData data) {
  std::lock_guard lock(mutex_);
  make_current();
  auto t = new_tensor(ir::TensorSpec{data.shape(), data.dtype()}, "from_data");
  const auto bytes = data.bytes();
  if (!bytes.empty()) mark_owed_work();
  // Large tensors through the pinned buffers; from pageable memory the copy
  // returns once the bytes are staged. Either way `data` may go when this
  // returns.
  if (bytes.size() >= StagedCopies::kMinStagedBytes && staging_->available()) staging_->to_device(t->address(), bytes);
  else if (!bytes.empty())
    check(driver().api.memcpy_htod_async(t->address(), bytes.data(), bytes.size(), stream_), "from_data",
          "cuMemcpyHtoDAsync");
  return t;
}

TensorData CudaBackend::to_data(const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec) {
  std::lock_guard lock(mutex_);
  make_current();
  const auto& t = static_cast<const CudaTensor&>(*primitive);
  std::vector<std::byte> bytes(spec.shape.num_elements() * dtype_size(spec.dtype));
  if (bytes.size() >= StagedCopies::kMinStagedBytes && staging_->available()) {
    // The queued work first, so a kernel's error is raised before any read.
    sync_locked("to_data");
    staging_->to_host(bytes, t.address());
    return TensorData(std::move(bytes), spec.shape, spec.dtype);
  }
  if (!bytes.empty())
    check(driver().api.memcpy_dtoh_async(bytes.data(), t.address(), bytes.size(), stream_), "to_data",
          "cuMemcpyDtoHAsync");
  sync_locked("to_data");
  return TensorData(std::move(bytes), spec.shape, spec.dtype);
}

void CudaBackend::seed(std::uint64_t seed) {
  std::lock_guard lock(mutex_);
  random_ = {seed, 0};
}

void CudaBackend::sync() {
  std::lock_guard lock(mutex_);
  make_current();
  sync_locked("sync");
}

void CudaBackend::sync_locked(std::string_view op) {
  const DriverApi& api = driver().api;
  // A kernel that faulted poisons the context: every later call fails too,
  // and the message says so.
  owed_since_.reset();  // a window opened from now on begins at the next work
  const auto word = static_cast<CUdeviceptr>(error_word_->address());
  // The error word's copy into pinned memory is queued behind the work, so
  // one wait covers both (a wait per sync is what a synchronising loop pays).
  const CUresult queued =
      error_host_ != nullptr ? api.memcpy_dtoh_async(error_host_, word, sizeof(std::uint32_t), stream_) : CUDA_SUCCESS;
  if (const CUresult r = api.stream_synchronize(stream_); r != CUDA_SUCCESS)
    throw ExecutionError(
        op, fmt::format("the CUDA device {} failed while running queued work: {}", index_, describe(api, r)));
  check(queued, op, "cuMemcpyDtoHAsync");
  std::uint32_t bits = 0;
  if (error_host_ != nullptr) {
    bits = *error_host_;
  } else {
    check(api.memcpy_dtoh_async(&bits, word, sizeof(bits), stream_), op, "cuMemcpyDtoHAsync");
    check(api.stream_synchronize(stream_), op, "cuStreamSynchronize");
  }
  if (bits == 0) return;
  check(api.memset_d32_async(word, 0, 1, stream_), op, "cuMemsetD32Async");
  throw device_error(bits, fmt::format("cuda:{}", index_));
}

ExecutionError device_error(std::uint32_t bits, std::string_view device) {
  std::string first_op, what;
  const auto raised = [&](std::uint32_t bit, std::string_view op, std::string_view message) {
    if ((bits & bit) == 0) return;
    if (first_op.empty()) first_op = op;
    if (!what.empty()) what += "; ";
    what += message;
  };
  raised(kErrorDivByZero, "div", "integer division by zero");
  raised(kErrorRemByZero, "remainder", "integer remainder by zero");
  raised(kErrorPowNegative, "pow", "0 cannot be raised to a negative integer power (division by zero)");
  raised(kErrorNegativeShift, "shift", "a shift count is negative");
  raised(kErrorGatherIndex, "gather", "a gather index is out of bounds for its dim");
  raised(kErrorSelectIndex, "select", "a select index is out of bounds for its dim");
  raised(kErrorScatterIndex, "scatter", "a scatter index is out of bounds for its dim");
  raised(kErrorSelectAssignIndex, "select_assign", "a select_assign index is out of bounds for its dim");
  if (first_op.empty()) return ExecutionError(device, fmt::format("a kernel reported error bits {:#x}", bits));
  return ExecutionError(first_op, fmt::format("{} (found on {} at the next sync; tensors computed since the "
                                              "previous sync hold undefined values)",
                                              what, device));
}

CUfunction CudaBackend::function(const std::string& source, std::string_view op) {
  if (auto it = functions_.find(source); it != functions_.end()) return it->second;
  const CompiledKernel compiled = compile_kernel(source, op, capability_);
  const DriverApi& api = driver().api;
  CUmodule module = nullptr;
  check(api.module_load_data(&module, compiled.image.data()), op, "cuModuleLoadData");
  modules_.push_back(module);
  CUfunction fn = nullptr;
  check(api.module_get_function(&fn, module, kKernelEntry), op, "cuModuleGetFunction");
  functions_.emplace(source, fn);
  return fn;
}

void CudaBackend::mark_owed_work() {
  if (!owed_since_) owed_since_ = std::make_shared<CudaEvent>(context_, stream_, "cuda");
}

std::unique_ptr<backend::DeviceClockWindow> CudaBackend::open_profile_window() {
  std::lock_guard lock(mutex_);
  make_current();
  auto begin = owed_since_ ? owed_since_ : std::make_shared<CudaEvent>(context_, stream_, "Device::profile");
  return std::make_unique<EventWindow>(std::move(begin), stream_, fmt::format("cuda:{}", index_));
}

void CudaBackend::run(const Launch& launch, std::string_view op) {
  const std::uint64_t items = launch.items();
  if (items == 0) return;
  mark_owed_work();
  const CUfunction fn = function(launch.source, op);
  // The kernels loop over their items, so the grid only needs to fill the
  // GPU: a few blocks per multiprocessor. A block-fold kernel takes an item
  // per block, with the block size its source was written for.
  const unsigned threads = launch.per_block ? kBlockThreads : kThreadsPerBlock;
  const std::uint64_t wanted = launch.per_block ? items : (items + threads - 1) / threads;
  const auto blocks = static_cast<unsigned>(std::min<std::uint64_t>(wanted, std::uint64_t{32} * multiprocessors_));
  std::vector<std::uint64_t> params = launch.params;
  void* args[] = {params.data()};
  check(driver().api.launch_kernel(fn, blocks, 1, 1, threads, 1, 1, 0, stream_, args, nullptr), op, "cuLaunchKernel");
}

bool CudaBackend::supports_op(const ir::Op& op) const { return can_plan(op); }

std::vector<backend::PrimitivePtr> CudaBackend::execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                                        std::span<const ir::TensorSpec> outputs) {
  const std::string_view name = ir::op_name(op);
  std::lock_guard lock(mutex_);
  make_current();
  // Tensors here are row-major blocks, so a reshape is the same block.
  if (std::holds_alternative<ir::Reshape>(op))
    return {std::make_shared<CudaTensor>(static_cast<const CudaTensor&>(*inputs[0].primitive).block)};
  std::vector<Operand> in;
  for (const auto& input : inputs)
    in.push_back({input.spec, static_cast<const CudaTensor&>(*input.primitive).block->address()});
  std::vector<backend::PrimitivePtr> results;
  std::vector<Operand> out;
  for (const auto& spec : outputs) {
    auto t = new_tensor(spec, name);
    out.push_back({spec, t->block->address()});
    results.push_back(std::move(t));
  }
  if (std::holds_alternative<ir::Matmul>(op) && matmul_by_library(in, out)) return results;
  if (convolution_by_library(op, in, out)) return results;
  RandomStream random;
  if (std::holds_alternative<ir::Random>(op)) random = {random_.seed, random_.draw++};
  for (const Launch& launch : plan(op, in, out, error_word_->address(), random)) run(launch, name);
  return results;
}

bool CudaBackend::convolution_by_library(const ir::Op& op, std::span<const Operand> inputs,
                                         std::span<const Operand> outputs) {
  if (!dnn_) return false;
  std::vector<ir::TensorSpec> in, out;
  for (const Operand& o : inputs) in.push_back(o.spec);
  for (const Operand& o : outputs) out.push_back(o.spec);
  if (!cudnn_takes(op, in, out)) return false;
  std::size_t bytes = 0;
  if (!dnn_->prepare(op, inputs, outputs, bytes)) return false;
  // Back to the cache when this returns, as the matmul's workspace.
  const auto workspace = bytes > 0 ? allocator_->allocate(bytes, ir::op_name(op)) : nullptr;
  mark_owed_work();
  dnn_->run(op, inputs, outputs, workspace ? workspace->address() : 0);
  return true;
}

bool CudaBackend::matmul_by_library(std::span<const Operand> inputs, std::span<const Operand> outputs) {
  if (!lt_ || !cublaslt_takes(inputs[0].spec, inputs[1].spec, outputs[0].spec)) return false;
  // Back to the cache when this returns: the next user of the block is
  // queued on the same stream, after the matmul.
  const auto workspace = allocator_->allocate(LtMatmul::kWorkspaceBytes, "matmul");
  mark_owed_work();
  return lt_->run(lt_problem(inputs[0].spec, inputs[1].spec, outputs[0].spec), inputs[0].address, inputs[1].address,
                  outputs[0].address, workspace->address());
}

}  // namespace burn::cuda
