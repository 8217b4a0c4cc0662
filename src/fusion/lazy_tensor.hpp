// The primitive a fusion device hands out: a handle on a tensor that may not
// have been computed yet. It becomes the inner backend's storage once a
// drain of the queue materialises it; intermediates of a fused group that
// nobody holds are never materialised at all.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include <burn/backend/backend.hpp>
#include <burn/error.hpp>
#include <burn/ir/op.hpp>

namespace burn::fusion {

class LazyTensor final : public backend::Primitive {
 public:
  explicit LazyTensor(std::uint64_t id_) : id(id_) {}

  /// Creation order on its device: how queued ops name the tensors they share.
  const std::uint64_t id;
  /// The inner backend's storage; null while the op producing it is queued.
  /// Guarded by the owning FusionBackend's mutex.
  backend::PrimitivePtr value;
  /// Input slots of queued ops holding this tensor. Those readers run before
  /// any later op (queue order), so dispatch does not count them against
  /// in-place reuse: `std::move(x).exp()` may still write over x although
  /// an earlier queued `x * 2` reads it. Written under the owning
  /// FusionBackend's mutex; read by dispatch without it (atomic).
  std::atomic<std::uint32_t> queued_reads{0};

  std::size_t backend_references() const noexcept override { return queued_reads.load(std::memory_order_acquire); }
};

using LazyPtr = std::shared_ptr<LazyTensor>;

/// The inner tensor of a computed LazyTensor; one still uncomputed when an
/// op that reads it runs means the op producing it failed (or, in the
/// drain order, a bug), reported instead of crashing.
inline const backend::PrimitivePtr& materialised(const LazyTensor& t, const ir::Op& op) {
  if (!t.value)
    throw ExecutionError(ir::op_name(op),
                         "an input was not computed: a queued op it depends on failed when "
                         "the queue ran (see that earlier error)");
  return t.value;
}

/// The LazyTensor behind a primitive of a fusion device.
LazyPtr as_lazy(const backend::PrimitivePtr& p);
/// The same without taking a reference (no atomic count traffic), for
/// callers that only look at it while `p` holds it.
LazyTensor& lazy_of(const backend::PrimitivePtr& p);

}  // namespace burn::fusion
