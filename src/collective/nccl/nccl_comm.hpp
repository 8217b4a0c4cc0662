// A process group's NCCL communicator: the collectives between CUDA devices
// (one GPU per rank), used by ProcessGroup when GroupOptions::engine is
// Engine::Nccl. Built with BURN_NCCL (where the CUDA toolkit and NCCL's
// header are found).
//
// NCCL is loaded with dlopen when a group asks for it, and the CUDA runtime
// is linked statically, so a build with NCCL still loads and runs (with
// Gloo) on a machine without an NVIDIA driver or without libnccl.so.2.
// Until a CUDA backend hands over device memory, data is staged: host
// buffer -> device buffer -> NCCL -> host buffer.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <burn/collective.hpp>
#include <burn/dtype.hpp>

namespace burn::collective::nccl {

/// CUDA devices this process sees (0 without a driver or a GPU).
int device_count() noexcept;

/// Whether NCCL reduces this dtype (bool and 16-bit integers: no).
bool supports(DType dtype) noexcept;

class Communicator {
 public:
  /// Joins the communicator of `world_size` ranks on CUDA device `device`.
  /// `exchange_id(bytes)` is given rank 0's unique id on rank 0 and returns
  /// rank 0's on every rank (the rendezvous store carries it). Throws
  /// DeviceError when there is no such CUDA device, ConfigurationError when
  /// NCCL cannot be loaded, ExecutionError when the ranks do not all join
  /// within `timeout`.
  static std::unique_ptr<Communicator> create(int rank, int world_size, int device,
                                              const std::function<std::string(const std::string&)>& exchange_id,
                                              std::chrono::milliseconds timeout);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  /// In place on `count` elements of host memory. Each call ends within the
  /// timeout: otherwise the communicator is aborted and ExecutionError thrown
  /// (`who` says which rank went, asked after the failure).
  void all_reduce(void* data, std::size_t count, DType dtype, bool max, const std::function<std::string()>& who);
  void broadcast(void* data, std::size_t bytes, int root, const std::function<std::string()>& who);
  void all_gather(const void* in, void* out, std::size_t bytes_per_rank, const std::function<std::string()>& who);

  struct State;

 private:
  explicit Communicator(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace burn::collective::nccl
