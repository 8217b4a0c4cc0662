// The fusion decorator: a Backend that queues the ops some fuser may take and
// runs them, grouped, on an inner backend when the queue drains — on flush(),
// sync(), a data read, an op no fuser takes that reads a queued result, use
// from another thread, or a full queue (kMaxQueued ops). Any backend can be wrapped: it supplies the
// inner backend and the fusers (with its compiler for fused kernels).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <burn/backend/backend.hpp>

#include "dispatch/program.hpp"
#include "fusion/planner.hpp"
#include "fusion/stats.hpp"

namespace burn::fusion {

class FusionProgram;

class FusionBackend final : public backend::Backend,
                            public backend::Stream,
                            public backend::SingleOutputExecution,
                            public backend::HostAccess,
                            public detail::ProgramCompiler {
 public:
  FusionBackend(std::string name, std::unique_ptr<backend::Backend> inner, std::vector<std::unique_ptr<Fuser>> fusers);
  ~FusionBackend() override;

  /// Ops queued before the queue drains by itself: long enough to group a
  /// layer's elementwise work, short enough to bound what a drain holds.
  static constexpr std::size_t kMaxQueued = 128;

  std::string name() const override { return name_; }
  std::string description() const override;
  bool supports_dtype(DType dtype) const override { return inner_->supports_dtype(dtype); }
  bool supports_op(const ir::Op& op) const override { return inner_->supports_op(op); }
  bool fuses_elementwise() const override { return true; }
  bool times_own_ops() const override { return true; }
  DeviceSettings default_settings() const override { return inner_->default_settings(); }

  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override;
  /// The one-output form dispatch prefers (no result vector per op).
  backend::PrimitivePtr execute_single(const ir::Op& op, std::span<const backend::Input> inputs,
                                       const ir::TensorSpec& output) override;
  backend::PrimitivePtr from_data(TensorData data) override;
  TensorData to_data(const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec) override;

  void seed(std::uint64_t seed) override;
  PhysicalIdentity identity() const override { return inner_->identity(); }
  std::string physical_name() const override { return inner_->physical_name(); }

  // Services: the queue is this backend's stream; memory and threads are the
  // inner backend's.
  backend::Stream* stream() override { return this; }
  backend::MemoryManager* memory() override { return inner_->memory(); }
  backend::ThreadControl* threads() override { return inner_->threads(); }
  backend::PrecisionControl* precision() override { return inner_->precision(); }
  backend::SingleOutputExecution* single_output() override { return this; }
  /// The inner backend's host memory, where it has one: a new tensor is
  /// filled in place, and an existing one is read in place once the queue
  /// has computed it.
  backend::HostAccess* host_access() override { return inner_->host_access() ? this : nullptr; }
  Writable allocate_host(const ir::TensorSpec& spec) override;
  std::optional<std::span<const std::byte>> host_bytes(const backend::PrimitivePtr& primitive,
                                                       const ir::TensorSpec& spec) override;
  void sync() override;
  void flush() override;
  /// The inner backend's device clock, where it has one. Queued ops are not
  /// drained: those that drain inside the window run inside it (Device::
  /// profile's flush option drains before the window closes).
  std::unique_ptr<backend::DeviceClockWindow> open_profile_window() override;

  /// Plans a recorded program once (fusion_program.cpp): its fusable ops
  /// grouped across the whole program, as a queue holding all of it would
  /// group them, and the rest run alone in the order the queue would run
  /// them. A run then goes straight to the plans and the inner backend.
  std::unique_ptr<detail::CompiledProgram> compile(const detail::Program& program) override;

  FusionStats stats() const;
  void reset_stats();
  backend::Backend& inner() noexcept { return *inner_; }

 private:
  /// execute() and execute_single(): queues `op` or runs it now, writing
  /// its outputs' primitives to `results` (outputs.size() of them).
  void submit(const ir::Op& op, std::span<const backend::Input> inputs, std::span<const ir::TensorSpec> outputs,
              backend::PrimitivePtr* results);
  /// Runs `op` on the inner backend into `results`, through its one-output
  /// entry point when it has one.
  void run_inner(const ir::Op& op, std::span<const backend::Input> inputs, std::span<const ir::TensorSpec> outputs,
                 backend::PrimitivePtr* results);
  /// Runs everything queued. Caller holds mutex_.
  void drain_locked();
  /// The inner tensor behind `primitive` once everything queued has run;
  /// null when an op it depends on failed.
  backend::PrimitivePtr computed(const backend::PrimitivePtr& primitive);
  /// Runs queued op `q` (op `index` of `batch`, in strategy step `step`)
  /// alone on the inner backend.
  void run_eager(const Batch& batch, std::size_t index, std::size_t step);
  /// Whether input `slot` of op `index` may give its storage to an output
  /// when step `step` runs: dispatch said so when the op was queued, or
  /// nothing outside the queue holds the tensor any more, this step reads it
  /// last and this op reads it once.
  bool input_reusable(const Batch& batch, std::size_t index, std::size_t slot, std::size_t step) const;
  /// After step `step` ran op `index` with `input` (its slot `slot`): an
  /// input handed over as reusable that this step read last is dead, and its
  /// value is dropped at once rather than when the queue is cleared, so that
  /// storage an output took over has that output as its only owner again
  /// and a later step of the same drain can take it (or freed storage) in
  /// turn.
  void release_if_dead(const Batch& batch, std::size_t index, std::size_t slot, std::size_t step,
                       backend::Input& input);
  LazyPtr wrap(backend::PrimitivePtr value);
  /// Runs a compiled program (fusion_program.cpp) under the queue's lock,
  /// after what is queued.
  friend class FusionProgram;
  void run_program(const FusionProgram& program, std::vector<backend::PrimitivePtr>& slots);

  const std::string name_;
  std::unique_ptr<backend::Backend> inner_;
  backend::SingleOutputExecution* const inner_single_;  // inner_'s one-output entry point, if any
  mutable std::mutex mutex_;
  Planner planner_;
  /// The queue: slots_[0, queued_) in submission order. kMaxQueued slots
  /// exist from the start and are refilled in place after each drain, so
  /// their input and output lists keep their capacity (queueing an op
  /// allocates no lists once warm) and Batch's pointers into them stay put.
  std::vector<QueuedOp> slots_;
  std::size_t queued_ = 0;
  /// The batch being drained, rebuilt over the same storage each drain.
  Batch batch_;
  std::thread::id queue_owner_;
  std::uint64_t next_id_ = 1;
  FusionStats stats_;
  // Per-op scratch reused across calls (guarded by mutex_), so queueing or
  // running an op allocates no spec or input lists.
  std::vector<ir::TensorSpec> in_specs_, out_specs_;
  std::vector<backend::Input> inner_inputs_;
  std::vector<backend::PrimitivePtr> eager_results_;
  std::vector<const QueuedOp*> group_;  // a fused step's queued ops
  /// Per value of the batch being drained: the last strategy step reading it.
  std::vector<std::uint32_t> last_reader_;
  /// Drops the scratch inputs' references when an eager op is done (they
  /// must not keep tensors alive, or in-place reuse would see them shared).
  struct ScratchRelease {
    std::vector<backend::Input>& inputs;
    ~ScratchRelease() { inputs.clear(); }
  };
};

}  // namespace burn::fusion
