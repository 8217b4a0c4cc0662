#include "fusion/fusion_backend.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/object_pool.hpp"
#include "device/runtime.hpp"
#include "dispatch/op_profile.hpp"
#include "fusion/diagnostics.hpp"

namespace burn::fusion {

FusionBackend::FusionBackend(std::string name, std::unique_ptr<backend::Backend> inner,
                             std::vector<std::unique_ptr<Fuser>> fusers)
    : name_(std::move(name)),
      inner_(std::move(inner)),
      inner_single_(inner_->single_output()),
      planner_(std::move(fusers)) {
  slots_.resize(kMaxQueued);
}

FusionBackend::~FusionBackend() {
  // Nothing queued can be observed any more (the device is going away with
  // every tensor handle); dropping the queue is enough.
}

std::string FusionBackend::description() const {
  return fmt::format("lazy op fusion over {} ({})", inner_->name(), inner_->description());
}

LazyPtr FusionBackend::wrap(backend::PrimitivePtr value) {
  auto t = detail::make_pooled<LazyTensor>(next_id_++);
  t->value = std::move(value);
  return t;
}

std::vector<backend::PrimitivePtr> FusionBackend::execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                                          std::span<const ir::TensorSpec> outputs) {
  std::vector<backend::PrimitivePtr> results(outputs.size());
  submit(op, inputs, outputs, results.data());
  return results;
}

backend::PrimitivePtr FusionBackend::execute_single(const ir::Op& op, std::span<const backend::Input> inputs,
                                                    const ir::TensorSpec& output) {
  backend::PrimitivePtr result;
  submit(op, inputs, std::span<const ir::TensorSpec>(&output, 1), &result);
  return result;
}

void FusionBackend::run_inner(const ir::Op& op, std::span<const backend::Input> inputs,
                              std::span<const ir::TensorSpec> outputs, backend::PrimitivePtr* results) {
  if (inner_single_ && outputs.size() == 1) {
    results[0] = inner_single_->execute_single(op, inputs, outputs[0]);
    return;
  }
  auto values = inner_->execute(op, inputs, outputs);
  if (values.size() != outputs.size())
    throw ExecutionError(ir::op_name(op), fmt::format("the {} backend returned {} outputs, {} expected", inner_->name(),
                                                      values.size(), outputs.size()));
  std::move(values.begin(), values.end(), results);
}

void FusionBackend::submit(const ir::Op& op, std::span<const backend::Input> inputs,
                           std::span<const ir::TensorSpec> outputs, backend::PrimitivePtr* results) {
  std::lock_guard lock(mutex_);
  // Work queued by another thread runs first: its order relative to this
  // thread's ops is not ours to choose, and it must not wait for a drain
  // that thread may never trigger.
  if (queued_ != 0 && queue_owner_ != std::this_thread::get_id()) drain_locked();
  queue_owner_ = std::this_thread::get_id();

  // Scratch kept across calls (under mutex_): a tiny op should not pay an
  // allocation for its spec list.
  in_specs_.clear();
  for (const auto& in : inputs) in_specs_.push_back(in.spec);
  if (planner_.may_queue(op, in_specs_, outputs)) {
    // Filled in place: the slot's lists still have the capacity an earlier
    // drain left them, so queueing allocates no lists once warm.
    QueuedOp& q = slots_[queued_];
    try {
      q.op = op;
      for (const auto& in : inputs) q.inputs.push_back({as_lazy(in.primitive), in.spec, in.reusable});
    } catch (...) {
      q.inputs.clear();  // the slot stays free
      throw;
    }
    // Counted once every input converted: a throw above leaves no count behind.
    for (const auto& in : q.inputs) in.tensor->queued_reads.fetch_add(1, std::memory_order_release);
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      auto t = detail::make_pooled<LazyTensor>(next_id_++);
      q.outputs.push_back({t, t->id, outputs[j]});
      results[j] = std::move(t);
    }
    ++queued_;
    ++stats_.ops_queued;
    if (queued_ >= kMaxQueued) drain_locked();
    return;
  }

  // An op no fuser takes runs now, alone. Queued ops are pure, so it waits
  // for the queue only when it reads a result still queued, or may overwrite
  // an input that queued ops still read: a parameter's reshape or a random
  // draw does not cut a chain of queued work in two.
  for (const auto& in : inputs) {
    const LazyTensor& lazy = lazy_of(in.primitive);
    if (!lazy.value || (in.reusable && lazy.queued_reads.load(std::memory_order_relaxed) != 0)) {
      drain_locked();
      break;
    }
  }
  const ScratchRelease release{inner_inputs_};
  inner_inputs_.clear();
  for (const auto& in : inputs)
    inner_inputs_.push_back({materialised(lazy_of(in.primitive), op), in.spec, in.reusable});
  if (trace_enabled()) std::fprintf(stderr, "[fusion] direct: %s\n", std::string(ir::op_name(op)).c_str());
  burn::detail::profile::run_timed(
      *inner_, [&] { return ir::op_name(op); }, [&] { run_inner(op, inner_inputs_, outputs, results); });
  ++stats_.ops_eager;
  for (std::size_t j = 0; j < outputs.size(); ++j) results[j] = wrap(std::move(results[j]));
}

bool FusionBackend::input_reusable(const Batch& batch, std::size_t index, std::size_t slot, std::size_t step) const {
  const QueuedOp& q = *batch.ops[index].queued;
  const QueuedInput& in = q.inputs[slot];
  if (in.reusable) return true;
  const std::uint32_t v = batch.ops[index].inputs[slot];
  if (last_reader_[v] != step) return false;
  // The queue's own input slots are the only references left (no handle,
  // no autodiff node), and the inner tensor is this LazyTensor's alone.
  if (static_cast<std::size_t>(in.tensor.use_count()) != batch.values[v].readers || !in.tensor->value ||
      in.tensor->value.use_count() != 1)
    return false;
  // x * x: an op reading the tensor twice keeps it (its kernel may not
  // expect an output aliasing two inputs).
  for (std::size_t s = 0; s < q.inputs.size(); ++s)
    if (s != slot && batch.ops[index].inputs[s] == v) return false;
  return true;
}

void FusionBackend::release_if_dead(const Batch& batch, std::size_t index, std::size_t slot, std::size_t step,
                                    backend::Input& input) {
  if (!input.reusable || last_reader_[batch.ops[index].inputs[slot]] != step) return;
  input.primitive.reset();
  batch.ops[index].queued->inputs[slot].tensor->value.reset();
}

void FusionBackend::run_eager(const Batch& batch, std::size_t index, std::size_t step) {
  const QueuedOp& q = *batch.ops[index].queued;
  const ScratchRelease release{inner_inputs_};
  inner_inputs_.clear();
  for (std::size_t s = 0; s < q.inputs.size(); ++s) {
    const auto& in = q.inputs[s];
    // Asked before materialised() hands out a second reference to the value,
    // which input_reusable would count as another holder.
    const bool reusable = input_reusable(batch, index, s, step);
    inner_inputs_.push_back({materialised(*in.tensor, q.op), in.spec, reusable});
  }
  out_specs_.clear();
  for (const auto& out : q.outputs) out_specs_.push_back(out.spec);
  std::vector<backend::PrimitivePtr>& values = eager_results_;
  values.assign(q.outputs.size(), nullptr);
  burn::detail::profile::run_timed(
      *inner_, [&] { return ir::op_name(q.op); }, [&] { run_inner(q.op, inner_inputs_, out_specs_, values.data()); });
  // As after a fused group: a pool that queues after its convolution frees
  // the convolution's output here, not at the end of the batch.
  for (std::size_t s = 0; s < q.inputs.size(); ++s) release_if_dead(batch, index, s, step, inner_inputs_[s]);
  for (std::size_t s = 0; s < q.outputs.size(); ++s)
    if (auto t = q.outputs[s].tensor.lock()) t->value = std::move(values[s]);
  values.clear();
  ++stats_.ops_eager;
}

void FusionBackend::drain_locked() {
  if (queued_ == 0) return;
  ++stats_.drains;
  // The queue is emptied however the drain ends: an op that throws (the
  // inner backend ran out of memory, say) must not be retried forever. The
  // slots keep their lists' capacity for the next ops.
  struct Clear {
    std::span<QueuedOp> queued;
    std::size_t& count;
    ~Clear() {
      for (auto& op : queued) {
        for (const auto& in : op.inputs) in.tensor->queued_reads.fetch_sub(1, std::memory_order_release);
        op.inputs.clear();
        op.outputs.clear();
      }
      count = 0;
    }
  } clear{std::span(slots_.data(), queued_), queued_};

  batch_.build(std::span<const QueuedOp>(slots_.data(), queued_));
  const Batch& batch = batch_;
  bool explored = false;
  const auto strategy = planner_.plan(batch, explored);
  if (explored) ++stats_.plans_built;
  else ++stats_.plan_cache_hits;
  if (explored && trace_enabled()) trace_strategy(batch, *strategy);

  // Storage an output may take: see input_reusable.
  last_reader_.assign(batch.values.size(), 0);
  for (std::size_t s = 0; s < strategy->size(); ++s)
    for (auto i : (*strategy)[s].ops)
      for (auto v : batch.ops[i].inputs) last_reader_[v] = static_cast<std::uint32_t>(s);

  std::vector<const QueuedOp*>& group = group_;
  for (std::size_t step_index = 0; step_index < strategy->size(); ++step_index) {
    const Step& step = (*strategy)[step_index];
    if (!step.plan) {
      // Results nobody holds and no other op reads are not computed at all
      // (queued ops are pure: they raise no errors worth a computation).
      const BatchOp& bop = batch.ops[step.ops[0]];
      bool needed = false;
      for (auto v : bop.outputs) needed = needed || batch.needed_outside(v, 0);
      if (needed) run_eager(batch, step.ops[0], step_index);
      else ++stats_.ops_skipped;
      continue;
    }
    group.clear();
    for (auto i : step.ops) group.push_back(&slots_[i]);
    const ScratchRelease release{inner_inputs_};
    std::vector<backend::Input>& inputs = inner_inputs_;
    inputs.clear();
    for (const IoRef& r : step.plan->inputs_from) {
      const QueuedInput& in = group[r.op]->inputs[r.slot];
      // Reusable only when the tensor is no other input of the plan too.
      bool reusable = input_reusable(batch, step.ops[r.op], r.slot, step_index);
      for (const IoRef& o : step.plan->inputs_from)
        reusable = reusable && (&o == &r || group[o.op]->inputs[o.slot].tensor != in.tensor);
      inputs.push_back({materialised(*in.tensor, group[r.op]->op), in.spec, reusable});
    }
    std::vector<backend::PrimitivePtr> values;
    burn::detail::profile::run_timed(
        *inner_, [&] { return group_name(group); }, [&] { values = step.plan->run(group, inputs); });
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const IoRef& r = step.plan->inputs_from[k];
      release_if_dead(batch, step.ops[r.op], r.slot, step_index, inputs[k]);
    }
    for (std::size_t j = 0; j < step.plan->outputs_to.size(); ++j) {
      const IoRef& r = step.plan->outputs_to[j];
      if (auto t = group[r.op]->outputs[r.slot].tensor.lock()) t->value = std::move(values[j]);
    }
    ++stats_.fused_groups;
    stats_.ops_fused += step.ops.size();
  }
}

backend::PrimitivePtr FusionBackend::from_data(TensorData data) {
  auto value = inner_->from_data(std::move(data));
  std::lock_guard lock(mutex_);
  return wrap(std::move(value));
}

backend::PrimitivePtr FusionBackend::computed(const backend::PrimitivePtr& primitive) {
  std::lock_guard lock(mutex_);
  drain_locked();
  return lazy_of(primitive).value;
}

TensorData FusionBackend::to_data(const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec) {
  const backend::PrimitivePtr value = computed(primitive);
  if (!value)
    throw ExecutionError("to_data",
                         "the tensor was not computed: a queued op it depends on failed when the "
                         "queue ran (see that earlier error)");
  return inner_->to_data(value, spec);
}

backend::HostAccess::Writable FusionBackend::allocate_host(const ir::TensorSpec& spec) {
  auto target = inner_->host_access()->allocate_host(spec);
  std::lock_guard lock(mutex_);
  return {wrap(std::move(target.primitive)), target.bytes};
}

std::optional<std::span<const std::byte>> FusionBackend::host_bytes(const backend::PrimitivePtr& primitive,
                                                                    const ir::TensorSpec& spec) {
  const backend::PrimitivePtr value = computed(primitive);
  if (!value) return std::nullopt;  // to_data reports why it was not computed
  // The bytes live in `value`, which `primitive` (the caller keeps it alive)
  // holds from here on: a computed LazyTensor never changes its value.
  return inner_->host_access()->host_bytes(value, spec);
}

void FusionBackend::seed(std::uint64_t seed) {
  std::lock_guard lock(mutex_);
  inner_->seed(seed);
}

void FusionBackend::sync() {
  {
    std::lock_guard lock(mutex_);
    drain_locked();
  }
  if (auto* inner = inner_->stream()) inner->sync();
}

void FusionBackend::flush() {
  {
    std::lock_guard lock(mutex_);
    drain_locked();
  }
  if (auto* inner = inner_->stream()) inner->flush();
}

std::unique_ptr<backend::DeviceClockWindow> FusionBackend::open_profile_window() {
  auto* inner = inner_->stream();
  return inner ? inner->open_profile_window() : nullptr;
}

FusionStats FusionBackend::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void FusionBackend::reset_stats() {
  std::lock_guard lock(mutex_);
  stats_ = {};
}

namespace {
FusionBackend& fusion_backend_of(const Device& device) {
  auto* b = dynamic_cast<FusionBackend*>(&device.runtime().backend());
  if (!b)
    throw Error("fusion::stats",
                fmt::format("{} is not a fusion device; use Device::cpu() or Device::cuda()", device.to_string()));
  return *b;
}
}  // namespace

FusionStats stats(const Device& device) { return fusion_backend_of(device).stats(); }
void reset_stats(const Device& device) { fusion_backend_of(device).reset_stats(); }

}  // namespace burn::fusion
