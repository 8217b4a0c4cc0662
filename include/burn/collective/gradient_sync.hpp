// Data-parallel training: every rank runs the same model on its own shard of
// the batch, and GradientSync makes the ranks take the same step, as
// PyTorch's DistributedDataParallel does. The parameters start from rank 0's;
// the gradients are averaged over the ranks in buckets, each bucket's
// all-reduce starting while the backward pass is still producing the others
// (docs/distributed.md).
//
//   namespace coll = burn::collective;
//   auto group = coll::ProcessGroup::from_env();
//   coll::GradientSync sync(group);
//   model = sync.broadcast_parameters(model);          // rank 0's values everywhere
//   for (...) {
//     auto loss = model.forward(shard_of_batch) ...;
//     auto grads = sync.backward(loss, model);          // averaged over the ranks
//     model = optim.step(lr, model, std::move(grads));
//   }
#pragma once

#include <burn/config.hpp>

#if BURN_HAS_COLLECTIVE

#include <cstddef>
#include <memory>
#include <vector>

#include <burn/autodiff.hpp>
#include <burn/collective.hpp>
#include <burn/module/module.hpp>
#include <burn/optim/gradients_params.hpp>

namespace burn::collective {

struct GradientSyncOptions {
  /// Gradients are packed into buckets of about this many bytes (a larger
  /// parameter gets a bucket of its own); each bucket is one all-reduce.
  /// Smaller buckets start communicating earlier, larger ones pay the
  /// per-call latency fewer times. 25 MiB, as PyTorch's default.
  std::size_t bucket_bytes = std::size_t{25} << 20;
  /// Start each bucket's all-reduce as soon as its gradients are complete,
  /// while backward goes on. False: every bucket after backward (the same
  /// result; for measuring what the overlap hides).
  bool overlap = true;
};

/// What the last backward() spent on communication.
struct GradientSyncStats {
  std::size_t buckets = 0;
  std::size_t bytes = 0;
  /// Time the all-reduces took, on the communication thread.
  double communication_seconds = 0;
  /// Of that, how long the caller waited after its backward pass finished:
  /// the part the overlap did not hide.
  double exposed_seconds = 0;
};

/// Gradient synchronisation over a process group (which must outlive it).
/// Every rank must call the same methods in the same order with modules of
/// the same structure; a rank that dies or errs makes the others throw, as
/// the group's collectives do. Not thread-safe: one thread of each rank
/// calls it (replicas in threads of one process each have their own group
/// and GradientSync).
class GradientSync {
 public:
  explicit GradientSync(ProcessGroup& group, GradientSyncOptions options = {});
  GradientSync(GradientSync&&) noexcept;
  GradientSync& operator=(GradientSync&&) noexcept;
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;
  ~GradientSync();

  /// `module` with every parameter and running state replaced by rank 0's
  /// (same ParamIds, devices and trainability): the ranks start equal.
  template <module::Module M>
  M broadcast_parameters(const M& module) {
    return module::map_tensors(module,
                               [&](const std::string& path, const module::ParamBase& p) { return broadcast(path, p); });
  }

  /// Runs backward from `loss` and returns the gradients of `module`'s
  /// trainable parameters averaged over the ranks (what Optimizer::step
  /// takes). A parameter no rank's loss reached has no gradient; one that
  /// only some ranks' did gets their sum divided by the world size, on every
  /// rank. Gradients of other leaves are dropped.
  template <module::Module M, std::size_t D>
  optim::GradientsParams backward(const Tensor<D>& loss, const M& module) {
    return backward_ref(loss.ref(), trainable_params(module));
  }

  /// Averages gradients computed already (no overlap): for a backward pass
  /// run by other means. Every rank passes gradients of the same module.
  template <module::Module M>
  optim::GradientsParams all_reduce(const optim::GradientsParams& grads, const M& module) {
    return all_reduce_ref(grads, trainable_params(module));
  }

  const GradientSyncStats& last_stats() const noexcept;
  ProcessGroup& group() noexcept;

  /// A trainable parameter as the synchronisation sees it.
  struct ParamSlot {
    module::ParamId id;
    burn::detail::TensorRef value;
  };
  struct Impl;

 private:
  template <module::Module M>
  static std::vector<ParamSlot> trainable_params(const M& module) {
    std::vector<ParamSlot> out;
    module::for_each_param(module, [&](const std::string&, const module::ParamBase& p) {
      if (p.is_trainable()) out.push_back({p.id(), p.ref()});
    });
    return out;
  }
  burn::detail::TensorRef broadcast(const std::string& path, const module::ParamBase& p);
  optim::GradientsParams backward_ref(const burn::detail::TensorRef& loss, std::vector<ParamSlot> params);
  optim::GradientsParams all_reduce_ref(const optim::GradientsParams& grads, std::vector<ParamSlot> params);

  std::unique_ptr<Impl> impl_;
};

}  // namespace burn::collective

#endif  // BURN_HAS_COLLECTIVE
