// The queue of a fusion device, and the view of it a drain works on.
//
// Queued ops hold their inputs strongly and their outputs weakly: once the
// user drops an output (and no later queued op reads it), nothing needs it,
// and a fused group can keep it in registers. A Batch numbers every tensor
// the queue touches (a "value") and records, per value, whether anything
// outside the queue holds it and how many queued inputs read it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include <burn/ir/op.hpp>
#include <burn/small_vector.hpp>

#include "fusion/lazy_tensor.hpp"

namespace burn::fusion {

struct QueuedInput {
  LazyPtr tensor;
  ir::TensorSpec spec;
  /// Dispatch's in-place flag: nothing but this op can observe the tensor.
  bool reusable = false;
};

struct QueuedOutput {
  std::weak_ptr<LazyTensor> tensor;
  std::uint64_t id = 0;
  ir::TensorSpec spec;
};

struct QueuedOp {
  ir::Op op;
  std::vector<QueuedInput> inputs;
  std::vector<QueuedOutput> outputs;
};

/// One tensor of a batch.
struct BatchValue {
  ir::TensorSpec spec;
  /// The op producing it, or -1 for a tensor that existed before the batch.
  std::int32_t producer = -1;
  std::uint32_t slot = 0;
  /// Queued input slots reading it (x * x counts twice).
  std::uint32_t readers = 0;
  /// Someone outside the queue (a tensor handle, an autodiff node) holds it.
  bool held = false;
};

struct BatchOp {
  const QueuedOp* queued = nullptr;
  SmallVector<std::uint32_t, 4> inputs;   // value indices
  SmallVector<std::uint32_t, 2> outputs;  // value indices
};

class Batch {
 public:
  /// Numbers the values of `queue` and decides which are needed afterwards,
  /// over this batch's storage (a drain reuses one Batch, so its lists keep
  /// their capacity). `queue` must outlive the use of `ops`.
  void build(std::span<const QueuedOp> queue);
  /// The same for ops that were never queued (a recorded program's, run by
  /// FusionBackend::compile): tensors are named by the ids their inputs'
  /// LazyTensors and their outputs carry, and `held(op, slot)` says whether
  /// output `slot` of op `op` is needed after the batch.
  void build(std::span<const QueuedOp> ops_in_order, const std::function<bool(std::size_t, std::uint32_t)>& held);

  std::vector<BatchOp> ops;
  std::vector<BatchValue> values;
  /// The batch's signature: every op's kind and attributes (scalar values
  /// excepted), specs, wiring and which outputs are held. Equal keys can
  /// reuse one execution strategy.
  std::vector<std::uint64_t> key;

  /// Whether value `v` is needed outside a group whose ops read it
  /// `reads_inside` times: held, or read by an op outside the group (which
  /// depends on it, so runs after the group, whatever the order).
  bool needed_outside(std::uint32_t v, std::uint32_t reads_inside) const {
    const auto& val = values[v];
    return val.held || val.readers > reads_inside;
  }

 private:
  /// build()'s numbering; `held(op, slot, readers)` decides BatchValue::held.
  template <class Held>
  void number(std::span<const QueuedOp> queue, Held&& held);

  std::vector<std::uint32_t> external_rank_;  // build()'s scratch
};

/// A hash of the op's kind and attributes, without scalar operand values
/// (they are read from the queued op at execution, so a changing learning
/// rate does not change the signature).
std::uint64_t op_signature(const ir::Op& op);

}  // namespace burn::fusion
