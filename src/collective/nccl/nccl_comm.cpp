#include "collective/nccl/nccl_comm.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>

#include <cstring>
#include <thread>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include <burn/error.hpp>

namespace burn::collective::nccl {
namespace {

using Clock = std::chrono::steady_clock;

/// The NCCL functions burn calls, from libnccl.so.2 (loaded once, on first use).
struct Library {
  void* handle = nullptr;
  std::string error;  // why it cannot be used; empty when it can
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRankConfig) init_rank_config = nullptr;
  decltype(&ncclCommGetAsyncError) get_async_error = nullptr;
  decltype(&ncclCommAbort) abort = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
};

template <class Fn>
void resolve(Library& lib, Fn& fn, const char* name) {
  void* symbol = ::dlsym(lib.handle, name);
  // POSIX guarantees data and function pointers convert (dlsym's contract).
  std::memcpy(&fn, &symbol, sizeof(fn));
  static_assert(sizeof(fn) == sizeof(symbol));
  if (fn == nullptr && lib.error.empty())
    lib.error = fmt::format("libnccl.so.2 has no {} (burn needs NCCL 2.14 or newer)", name);
}

const Library& library() {
  static const Library lib = [] {
    Library l;
    l.handle = ::dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (l.handle == nullptr) {
      const char* why = ::dlerror();
      l.error = why ? why : "libnccl.so.2 was not found";
      return l;
    }
    resolve(l, l.get_unique_id, "ncclGetUniqueId");
    resolve(l, l.init_rank_config, "ncclCommInitRankConfig");
    resolve(l, l.get_async_error, "ncclCommGetAsyncError");
    resolve(l, l.abort, "ncclCommAbort");
    resolve(l, l.destroy, "ncclCommDestroy");
    resolve(l, l.all_reduce, "ncclAllReduce");
    resolve(l, l.broadcast, "ncclBroadcast");
    resolve(l, l.all_gather, "ncclAllGather");
    resolve(l, l.error_string, "ncclGetErrorString");
    return l;
  }();
  return lib;
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::F64: return ncclFloat64;
    case DType::F32: return ncclFloat32;
    case DType::F16: return ncclFloat16;
    case DType::BF16: return ncclBfloat16;
    case DType::I64: return ncclInt64;
    case DType::I32: return ncclInt32;
    case DType::I8: return ncclInt8;
    case DType::U64: return ncclUint64;
    case DType::U32: return ncclUint32;
    case DType::U8: return ncclUint8;
    default: break;
  }
  throw Error("ProcessGroup", fmt::format("NCCL cannot reduce {} tensors", dtype_name(dtype)));
}

void check_cuda(cudaError_t result, const char* op, const char* what) {
  if (result != cudaSuccess)
    throw ExecutionError(op, fmt::format("CUDA {} failed: {}", what, ::cudaGetErrorString(result)));
}

}  // namespace

int device_count() noexcept {
  int n = 0;
  if (::cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)::cudaGetLastError();  // no driver or no GPU: not an error for the caller
    return 0;
  }
  return n;
}

bool supports(DType dtype) noexcept {
  switch (dtype) {
    case DType::F64:
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::I64:
    case DType::I32:
    case DType::I8:
    case DType::U64:
    case DType::U32:
    case DType::U8: return true;
    default: return false;
  }
}

struct Communicator::State {
  const Library* lib = nullptr;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int device = 0;
  int world_size = 1;
  std::chrono::milliseconds timeout{30'000};
  void* buffer = nullptr;
  std::size_t capacity = 0;
  bool aborted = false;

  ~State() {
    if (comm != nullptr && !aborted) (void)lib->destroy(comm);
    if (buffer != nullptr) (void)::cudaFree(buffer);
    if (stream != nullptr) (void)::cudaStreamDestroy(stream);
  }
  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  void* device_buffer(std::size_t bytes, const char* op) {
    if (bytes > capacity) {
      if (buffer != nullptr) check_cuda(::cudaFree(buffer), op, "cudaFree");
      buffer = nullptr;
      capacity = 0;
      check_cuda(::cudaMalloc(&buffer, bytes), op, "cudaMalloc");
      capacity = bytes;
    }
    return buffer;
  }

  [[noreturn]] void fail(const char* op, const std::string& reason, const std::function<std::string()>& who) {
    if (!aborted && comm != nullptr) (void)lib->abort(comm);
    aborted = true;
    throw ExecutionError(op, fmt::format("{} (NCCL: {})", who ? who() : std::string("a peer failed"), reason));
  }

  void usable(const char* op) const {
    if (aborted)
      throw ExecutionError(op, "the NCCL communicator was aborted after an earlier failure: restart every rank");
  }

  /// Waits for an issued NCCL call and the stream's work, within the timeout.
  void wait(const char* op, ncclResult_t issued, const std::function<std::string()>& who) {
    if (issued != ncclSuccess && issued != ncclInProgress) fail(op, lib->error_string(issued), who);
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      ncclResult_t state = ncclSuccess;
      (void)lib->get_async_error(comm, &state);
      if (state != ncclSuccess && state != ncclInProgress) fail(op, lib->error_string(state), who);
      if (state == ncclSuccess) {
        const cudaError_t query = ::cudaStreamQuery(stream);
        if (query == cudaSuccess) return;
        if (query != cudaErrorNotReady) fail(op, ::cudaGetErrorString(query), who);
      }
      if (Clock::now() > deadline)
        fail(op, fmt::format("no answer within {} ms; the communicator was aborted", timeout.count()), who);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  void copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind, const char* op) {
    check_cuda(::cudaMemcpyAsync(to, from, bytes, kind, stream), op, "cudaMemcpyAsync");
  }
};

Communicator::Communicator(std::unique_ptr<State> state) : state_(std::move(state)) {}
Communicator::~Communicator() = default;

std::unique_ptr<Communicator> Communicator::create(int rank, int world_size, int device,
                                                   const std::function<std::string(const std::string&)>& exchange_id,
                                                   std::chrono::milliseconds timeout) {
  constexpr const char* op = "ProcessGroup::create";
  const int devices = device_count();
  if (device < 0 || device >= devices)
    throw DeviceError(DeviceErrorKind::NotAvailable, op,
                      fmt::format("no CUDA device: rank {} needs CUDA device {} for NCCL and this machine has {} "
                                  "(LOCAL_RANK picks the device; without GPUs use the Gloo engine, "
                                  "BURN_COLLECTIVE_ENGINE=gloo)",
                                  rank, device, devices));
  const Library& lib = library();
  if (!lib.error.empty())
    throw ConfigurationError(op, fmt::format("NCCL cannot be loaded: {}; install NCCL (it comes with the CUDA "
                                             "toolkit) where the dynamic loader finds it, or use the Gloo engine",
                                             lib.error));
  auto state = std::make_unique<State>();
  state->lib = &lib;
  state->device = device;
  state->world_size = world_size;
  state->timeout = timeout;
  check_cuda(::cudaSetDevice(device), op, "cudaSetDevice");

  ncclUniqueId id{};
  std::string mine;
  if (rank == 0) {
    const ncclResult_t made = lib.get_unique_id(&id);
    if (made != ncclSuccess) throw ExecutionError(op, fmt::format("ncclGetUniqueId: {}", lib.error_string(made)));
    mine.assign(reinterpret_cast<const char*>(&id), sizeof(id));
  }
  const std::string shared = exchange_id(mine);
  if (shared.size() != sizeof(id))
    throw ExecutionError(op, fmt::format("rank 0's NCCL id has {} bytes, not {}: the ranks run different NCCL versions",
                                         shared.size(), sizeof(id)));
  std::memcpy(&id, shared.data(), sizeof(id));

  // Non-blocking: a rank that never joins ends in the timeout, not a hang.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t joined = lib.init_rank_config(&state->comm, world_size, id, rank, &config);
  const auto deadline = Clock::now() + timeout;
  while (joined == ncclInProgress) {
    if (Clock::now() > deadline) {
      (void)lib.abort(state->comm);
      state->aborted = true;
      throw ExecutionError(op, fmt::format("the NCCL communicator of {} ranks did not form within {} ms (a rank "
                                           "is missing or cannot reach the others)",
                                           world_size, timeout.count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    (void)lib.get_async_error(state->comm, &joined);
  }
  if (joined != ncclSuccess) {
    if (state->comm != nullptr) (void)lib.abort(state->comm);
    state->aborted = true;
    throw ExecutionError(op, fmt::format("NCCL could not form the communicator: {}", lib.error_string(joined)));
  }
  check_cuda(::cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking), op, "cudaStreamCreate");
  return std::unique_ptr<Communicator>(new Communicator(std::move(state)));
}

void Communicator::all_reduce(void* data, std::size_t count, DType dtype, bool max,
                              const std::function<std::string()>& who) {
  constexpr const char* op = "ProcessGroup::all_reduce";
  State& s = *state_;
  s.usable(op);
  const std::size_t bytes = count * dtype_size(dtype);
  if (bytes == 0) return;
  check_cuda(::cudaSetDevice(s.device), op, "cudaSetDevice");
  void* on_device = s.device_buffer(bytes, op);
  s.copy(on_device, data, bytes, cudaMemcpyHostToDevice, op);
  s.wait(op,
         s.lib->all_reduce(on_device, on_device, count, nccl_type(dtype), max ? ncclMax : ncclSum, s.comm, s.stream),
         who);
  s.copy(data, on_device, bytes, cudaMemcpyDeviceToHost, op);
  check_cuda(::cudaStreamSynchronize(s.stream), op, "cudaStreamSynchronize");
}

void Communicator::broadcast(void* data, std::size_t bytes, int root, const std::function<std::string()>& who) {
  constexpr const char* op = "ProcessGroup::broadcast";
  State& s = *state_;
  s.usable(op);
  if (bytes == 0) return;
  check_cuda(::cudaSetDevice(s.device), op, "cudaSetDevice");
  void* on_device = s.device_buffer(bytes, op);
  s.copy(on_device, data, bytes, cudaMemcpyHostToDevice, op);
  s.wait(op, s.lib->broadcast(on_device, on_device, bytes, ncclUint8, root, s.comm, s.stream), who);
  s.copy(data, on_device, bytes, cudaMemcpyDeviceToHost, op);
  check_cuda(::cudaStreamSynchronize(s.stream), op, "cudaStreamSynchronize");
}

void Communicator::all_gather(const void* in, void* out, std::size_t bytes_per_rank,
                              const std::function<std::string()>& who) {
  constexpr const char* op = "ProcessGroup::all_gather";
  State& s = *state_;
  s.usable(op);
  if (bytes_per_rank == 0) return;
  check_cuda(::cudaSetDevice(s.device), op, "cudaSetDevice");
  const std::size_t total = bytes_per_rank * static_cast<std::size_t>(s.world_size);
  auto* on_device = static_cast<std::byte*>(s.device_buffer(bytes_per_rank + total, op));
  s.copy(on_device, in, bytes_per_rank, cudaMemcpyHostToDevice, op);
  s.wait(op, s.lib->all_gather(on_device, on_device + bytes_per_rank, bytes_per_rank, ncclUint8, s.comm, s.stream),
         who);
  s.copy(out, on_device + bytes_per_rank, total, cudaMemcpyDeviceToHost, op);
  check_cuda(::cudaStreamSynchronize(s.stream), op, "cudaStreamSynchronize");
}

}  // namespace burn::collective::nccl
