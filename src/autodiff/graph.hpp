// The autodiff graph: one node per recorded operation (or leaf, or device
// move). Tensors point at the node that produced them; nodes point at their
// parents, so a graph lives exactly as long as the tensors that reach it, and
// backward frees each node as it consumes it.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include <burn/autodiff.hpp>
#include <burn/detail/ops.hpp>

namespace burn::autodiff {

using detail::TensorRef;

enum class NodeKind : std::uint8_t {
  Leaf,      ///< a tensor that required grad: gradients are collected here
  Op,        ///< a recorded primitive op
  ToDevice,  ///< a move between devices: the gradient moves back
};

struct Node {
  std::uint64_t id = 0;
  NodeKind kind = NodeKind::Leaf;
  std::optional<ir::Op> op;
  /// Per input: the node that produced it (null for untracked inputs) and which output.
  std::vector<std::shared_ptr<Node>> parents;
  std::vector<std::size_t> parent_outputs;
  /// Saved input values (untracked); null where a checkpointed node recomputes them.
  std::vector<TensorRef> inputs;
  /// Saved output values (untracked); empty when checkpointed (recomputed in backward).
  std::vector<TensorRef> outputs;
  std::vector<ir::TensorSpec> output_specs;
  /// ToDevice: where the gradient goes back to.
  std::optional<Device> source_device;
  std::optional<GradientCheckpointingStrategy> strategy;
  /// A memory-bound op under Balanced checkpointing: keeps nothing it can recompute.
  bool checkpointed = false;
  /// Backward ran through this node and freed it.
  bool consumed = false;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  /// Releases the ancestors iteratively: a graph tens of thousands of nodes
  /// deep must not recurse once per node when it is dropped.
  ~Node();
};

std::uint64_t next_node_id();

/// A handle to the same storage with no graph.
TensorRef untracked(const TensorRef& t);

/// Which inputs (bit i: input i) the node record() would make for this op
/// keeps as values (~0u: maybe all of them). Dispatch lets the others be
/// overwritten by the op's output (in-place execution) when nothing else
/// holds them.
std::uint32_t inputs_kept(const ir::Op& op, std::span<const TensorRef> inputs);

/// Whether slot `slot` is in a kept-values mask (bit i: slot i). Masks name
/// 32 slots; past them only the keep-everything mask (~0u) keeps a value, so
/// recording and in-place execution agree for ops with many inputs (cat).
inline bool keeps_slot(std::uint32_t mask, std::size_t slot) {
  return slot < 32 ? ((mask >> slot) & 1u) != 0 : mask == ~0u;
}

/// Called by dispatch after an op ran: records a node when any input is
/// tracked and recording is enabled. Returns the node to attach to the float
/// outputs, or null.
std::shared_ptr<Node> record(const ir::Op& op, std::span<const TensorRef> inputs,
                             std::span<const TensorRef> untracked_outputs);

/// Called by to_device: the moved tensor carries a node whose backward moves
/// the gradient back to the source device.
TensorRef track_to_device(const TensorRef& source, TensorRef moved);

}  // namespace burn::autodiff
