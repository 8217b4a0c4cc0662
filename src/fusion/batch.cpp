#include "fusion/batch.hpp"

#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <burn/error.hpp>

#include "fusion/op_kind.hpp"

namespace burn::fusion {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // splitmix64's finaliser over the running hash: cheap and well spread.
  std::uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t spec_hash(const ir::TensorSpec& s) {
  // Dims fold in with one multiply each (odd constant: a bijection per
  // step), and one full mix spreads the result: every op pays this for each
  // input and output, so it is kept cheap.
  std::uint64_t h = static_cast<std::uint64_t>(s.dtype) << 8 | s.shape.rank();
  for (auto d : s.shape.dims()) h = (h ^ d) * 0x100000001b3ULL;
  return mix(0, h);
}

/// Tensor id -> value index for one batch: open addressing over a table
/// reused by the thread's later batches, so numbering a batch allocates
/// nothing once warm (a map node per tensor would). Ids start at 1, so 0
/// marks an empty slot.
class IdMap {
 public:
  void reset(std::size_t entries) {
    std::size_t size = 16;
    while (size < 2 * entries) size *= 2;
    slots_.assign(size, {0, 0});
    mask_ = size - 1;
  }
  /// The value of `id`, inserting `v` when absent; second: inserted.
  std::pair<std::uint32_t, bool> try_emplace(std::uint64_t id, std::uint32_t v) {
    for (std::size_t i = (id * 0x9e3779b97f4a7c15ULL) >> 40 & mask_;; i = (i + 1) & mask_) {
      auto& slot = slots_[i];
      if (slot.first == id) return {slot.second, false};
      if (slot.first == 0) {
        slot = {id, v};
        return {v, true};
      }
    }
  }

 private:
  std::vector<std::pair<std::uint64_t, std::uint32_t>> slots_;
  std::size_t mask_ = 0;
};

// The attributes a plan depends on, mixed into `h`, for each op a fuser
// queues. Scalar operand values are left out: plans read them from the
// queued op when they run.
template <class O>
std::uint64_t attributes(std::uint64_t h, const O&) = delete;
std::uint64_t attributes(std::uint64_t h, const ir::Unary& o) { return mix(h, static_cast<std::uint64_t>(o.op)); }
std::uint64_t attributes(std::uint64_t h, const ir::Binary& o) {
  return mix(mix(h, static_cast<std::uint64_t>(o.op)), o.scalar.has_value());
}
std::uint64_t attributes(std::uint64_t h, const ir::Clamp& o) {
  return mix(mix(h, o.min.has_value()), o.max.has_value());
}
std::uint64_t attributes(std::uint64_t h, const ir::Cast& o) { return mix(h, static_cast<std::uint64_t>(o.dtype)); }
std::uint64_t attributes(std::uint64_t h, const ir::MaskWhere&) { return h; }
std::uint64_t attributes(std::uint64_t h, const ir::MaskFill&) { return h; }  // the fill value is a scalar
std::uint64_t attributes(std::uint64_t h, const ir::Gelu& o) { return mix(h, o.tanh ? 1 : 0); }
std::uint64_t attributes(std::uint64_t h, const ir::Reduce& o) {
  return mix(mix(mix(h, static_cast<std::uint64_t>(o.op)), o.dim), static_cast<std::uint64_t>(o.index_dtype));
}
std::uint64_t attributes(std::uint64_t h, const ir::Matmul&) { return h; }
// An epilogue plan reads the convolution's geometry from the queued op when
// it runs; what decides the grouping (the spatial rank) is in the specs.
std::uint64_t attributes(std::uint64_t h, const ir::Conv&) { return h; }

}  // namespace

LazyTensor& lazy_of(const backend::PrimitivePtr& p) {
  // Every primitive of a fusion device is a LazyTensor; typeid and a static
  // cast keep this cheaper than dynamic_pointer_cast on the per-op path.
  backend::Primitive* primitive = p.get();
  if (primitive == nullptr || typeid(*primitive) != typeid(LazyTensor))
    throw ExecutionError("fusion", "a tensor of another backend reached a fusion device; move it with to_device()");
  return static_cast<LazyTensor&>(*primitive);
}

LazyPtr as_lazy(const backend::PrimitivePtr& p) {
  lazy_of(p);  // the check
  return std::static_pointer_cast<LazyTensor>(p);
}

std::uint64_t op_signature(const ir::Op& op) {
  std::uint64_t h = mix(0x5eed, op.index());
  std::visit(
      [&h](const auto& o) {
        // Eager ops are never queued, and an op that runs alone is planned
        // the same whatever its attributes (its outputs' specs are in the
        // key): their kind is all a signature needs.
        constexpr OpKind k = kind_of<std::decay_t<decltype(o)>>;
        if constexpr (k != OpKind::Eager && k != OpKind::Alone) h = attributes(h, o);
      },
      op);
  return h;
}

template <class Held>
void Batch::number(std::span<const QueuedOp> queue, Held&& held) {
  ops.clear();
  values.clear();
  key.clear();
  ops.reserve(queue.size());
  key.reserve(queue.size() * 6);
  values.reserve(queue.size() * 3);
  thread_local IdMap by_id;
  std::size_t tensors = 0;
  for (const auto& q : queue) tensors += q.inputs.size() + q.outputs.size();
  by_id.reset(tensors);
  std::uint32_t externals = 0;
  std::vector<std::uint32_t>& external_rank = external_rank_;  // per value: order of first appearance (externals only)
  external_rank.clear();

  for (std::size_t i = 0; i < queue.size(); ++i) {
    const QueuedOp& q = queue[i];
    BatchOp bop;
    bop.queued = &q;
    key.push_back(op_signature(q.op));
    for (const auto& in : q.inputs) {
      const auto [v, fresh] = by_id.try_emplace(in.tensor->id, static_cast<std::uint32_t>(values.size()));
      if (fresh) {
        values.push_back({in.spec, -1, 0, 0, true});
        external_rank.push_back(externals++);
      }
      ++values[v].readers;
      bop.inputs.push_back(v);
      // A result of the batch is named by its producer and slot (its spec is
      // in the key with the producer's outputs); a tensor from before the
      // batch by its order of appearance and its spec.
      const auto& val = values[v];
      key.push_back(val.producer >= 0 ? (std::uint64_t{1} << 62) | (std::uint64_t(val.producer) << 8) | val.slot
                                      : mix(spec_hash(in.spec), external_rank[v]));
    }
    for (std::uint32_t s = 0; s < q.outputs.size(); ++s) {
      const auto v = static_cast<std::uint32_t>(values.size());
      values.push_back({q.outputs[s].spec, static_cast<std::int32_t>(i), s, 0, false});
      external_rank.push_back(0);
      by_id.try_emplace(q.outputs[s].id, v);
      bop.outputs.push_back(v);
    }
    ops.push_back(bop);
  }
  for (auto& val : values)
    if (val.producer >= 0) val.held = held(static_cast<std::size_t>(val.producer), val.slot, val.readers);
  for (const auto& bop : ops)
    for (auto v : bop.outputs) key.push_back(mix(spec_hash(values[v].spec), values[v].held));
}

void Batch::build(std::span<const QueuedOp> queue) {
  // Held outside the queue: strong references beyond the queue's own (one
  // per reading input slot). A snapshot, as a lock() would be: a handle
  // dropped meanwhile by another thread only makes a value look held.
  number(queue, [queue](std::size_t op, std::uint32_t slot, std::uint32_t readers) {
    return static_cast<std::size_t>(queue[op].outputs[slot].tensor.use_count()) > readers;
  });
}

void Batch::build(std::span<const QueuedOp> ops_in_order, const std::function<bool(std::size_t, std::uint32_t)>& held) {
  number(ops_in_order, [&held](std::size_t op, std::uint32_t slot, std::uint32_t) { return held(op, slot); });
}

}  // namespace burn::fusion
