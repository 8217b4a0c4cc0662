// Collectives between processes: the ranks of a data-parallel job exchange
// tensors over Gloo (TCP). Each process has its own devices; a collective
// takes a tensor on any device, moves its data through host memory, and
// returns the result on the same device (docs/distributed.md).
//
//   namespace coll = burn::collective;
//   coll::ProcessGroup group = coll::ProcessGroup::from_env();  // RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   Tensor<2> s = group.all_reduce(t, coll::ReduceOp::Sum);
#pragma once

#include <burn/config.hpp>

#if BURN_HAS_COLLECTIVE

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <burn/tensor.hpp>
#include <burn/tensor_data.hpp>

namespace burn::collective {

class StoreServer;  // the rendezvous rank 0 serves (src/collective/store.hpp)
class GradientSync;

enum class ReduceOp : std::uint8_t {
  Sum,
  Mean,  ///< the sum divided by the world size (floating-point tensors only)
  Max,
};

/// What carries the collectives' data.
enum class Engine : std::uint8_t {
  /// Gloo over TCP: any machines, tensors of any device through host memory.
  Gloo,
  /// NCCL between CUDA devices, one GPU per rank (LOCAL_RANK's); needs a
  /// build with BURN_NCCL and NCCL at run time. Gloo still carries the
  /// rendezvous, the call checks and barriers.
  Nccl,
};

/// Where a process group meets and how long it waits. from_env() fills it
/// from the variables torchrun (and burn-run) set.
struct GroupOptions {
  int rank = 0;
  int world_size = 1;
  /// The rendezvous: rank 0 serves it on this address, the others connect.
  std::string master_addr = "127.0.0.1";
  std::uint16_t master_port = 29500;
  /// The address the other ranks reach this one at. Empty: 127.0.0.1 when
  /// the master is on loopback, else this machine's host name.
  std::string local_addr;
  /// Every wait (rendezvous, each collective) ends in an ExecutionError
  /// after this long.
  std::chrono::milliseconds timeout{30'000};
  Engine engine = Engine::Gloo;
  /// This rank's index among the ranks on its machine: with NCCL, the CUDA
  /// device it uses.
  int local_rank = 0;
};

/// CUDA devices NCCL could use in this process (0 in a build without NCCL,
/// without a driver or without a GPU).
int nccl_device_count() noexcept;

/// The processes of one job, connected to each other. Every collective must
/// be called by every rank, in the same order, with tensors of the same shape
/// and dtype. Not thread-safe: one thread of each rank calls it.
class ProcessGroup {
 public:
  /// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (required; as torchrun sets
  /// them), and optionally LOCAL_RANK, BURN_COLLECTIVE_TIMEOUT_MS,
  /// BURN_COLLECTIVE_LOCAL_ADDR and BURN_COLLECTIVE_ENGINE (gloo or nccl). A missing or malformed variable is a
  /// ConfigurationError naming it.
  static ProcessGroup from_env();
  /// Connects to the other ranks; returns once all world_size ranks have.
  /// A rank that does not come within the timeout, a master that cannot be
  /// reached, or ranks that disagree on the world size: ExecutionError.
  /// Sets SIGPIPE to be ignored unless the program handles it (a write to a
  /// dead peer must fail, not kill this rank).
  static ProcessGroup create(const GroupOptions& options);
  /// `world_size` ranks in this process, for replicas on several devices of
  /// one machine, each driven by its own thread (group i by thread i): they
  /// meet on 127.0.0.1 at a port the kernel picks. Collectives still cross
  /// loopback TCP, as between processes.
  static std::vector<ProcessGroup> create_local(int world_size,
                                                std::chrono::milliseconds timeout = std::chrono::seconds(30));

  ProcessGroup(ProcessGroup&&) noexcept;
  ProcessGroup& operator=(ProcessGroup&&) noexcept;
  ~ProcessGroup();

  int rank() const;
  int world_size() const;
  Engine engine() const;

  /// Every rank's tensor reduced element-wise; every rank gets the result.
  /// A failed rank: ExecutionError naming it; ranks whose calls differ
  /// (collective, shape, dtype, op, root): Error naming the rank.
  template <std::size_t D, class K>
  Tensor<D, K> all_reduce(const Tensor<D, K>& t, ReduceOp op) {
    return Tensor<D, K>::from_data(all_reduce_data(t.to_data(), op), t.device());
  }
  /// Root's tensor, on every rank (the others' input gives the shape and dtype).
  template <std::size_t D, class K>
  Tensor<D, K> broadcast(const Tensor<D, K>& t, int root) {
    return Tensor<D, K>::from_data(broadcast_data(t.to_data(), root), t.device());
  }
  /// Every rank's tensor, in rank order, concatenated along dimension 0.
  template <std::size_t D, class K>
  Tensor<D, K> all_gather(const Tensor<D, K>& t) {
    return Tensor<D, K>::from_data(all_gather_data(t.to_data()), t.device());
  }
  /// The tensors reduced, then split along dimension 0 into world_size equal
  /// parts: rank r gets part r. Dimension 0 must divide by the world size.
  template <std::size_t D, class K>
  Tensor<D, K> reduce_scatter(const Tensor<D, K>& t, ReduceOp op) {
    return Tensor<D, K>::from_data(reduce_scatter_data(t.to_data(), op), t.device());
  }
  /// Returns once every rank has called it.
  void barrier();

  // The same on host data.
  TensorData all_reduce_data(TensorData data, ReduceOp op);
  TensorData broadcast_data(TensorData data, int root);
  TensorData all_gather_data(const TensorData& data);
  TensorData reduce_scatter_data(const TensorData& data, ReduceOp op);

  struct Impl;

 private:
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  friend class GradientSync;
  /// all_reduce_data without first exchanging descriptors: for a caller
  /// whose ranks agreed on the layout of every call once (GradientSync's
  /// buckets), saving a round trip per call.
  TensorData all_reduce_agreed(TensorData data, ReduceOp op);
  /// create(), rank 0 serving the rendezvous on `server` when given.
  static ProcessGroup create_with(const GroupOptions& options, std::unique_ptr<StoreServer> server);
  std::unique_ptr<Impl> impl_;
};

}  // namespace burn::collective

#endif  // BURN_HAS_COLLECTIVE
