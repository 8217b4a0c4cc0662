// The elementwise fuser: chains of unary, binary (tensor or scalar operand),
// clamp, cast, comparison and mask ops that all produce the same shape,
// reading inputs of that shape or broadcast to it. The group becomes an
// ElementwiseProgram, which a backend compiles into a kernel that makes one
// pass over the output.
#pragma once

#include <memory>

#include <burn/small_vector.hpp>

#include "fusion/group_builder.hpp"

namespace burn::fusion {

/// A backend-neutral description of a group: elementwise ops and, for the
/// row-reduce fuser, last-dim reductions (results of shape `shape` with the
/// last dim 1).
struct ElementwiseProgram {
  /// One operand of an instruction: an external input or an earlier result.
  struct Arg {
    bool is_input = false;
    std::uint32_t index = 0;  // into `inputs` or `values`
  };
  /// values[result] = ops[op] applied to args (plus the op's scalar, if any).
  struct Instr {
    std::uint32_t op = 0;  // index into `ops`
    SmallVector<Arg, 3> args;
    std::uint32_t result = 0;
  };

  Shape shape;                         // every result's shape: the loop
  std::vector<ir::TensorSpec> inputs;  // external inputs (broadcastable to shape)
  std::vector<ir::TensorSpec> values;  // instruction results
  std::vector<Instr> instrs;           // in execution order, dead ones removed
  std::vector<std::uint32_t> outputs;  // values to materialise, in plan output order
  /// The group's ops in order (kinds and attributes; scalar values come at
  /// run time).
  std::vector<ir::Op> ops;
};

/// What a backend provides to run elementwise groups.
class ElementwiseCompiler {
 public:
  virtual ~ElementwiseCompiler() = default;
  /// Whether the backend's fused kernel computes this op exactly as its eager
  /// kernel does (ops that can raise errors, such as integer division, are
  /// better left eager so the error surfaces at the call).
  virtual bool supports(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                        std::span<const ir::TensorSpec> outputs) const = 0;
  virtual std::shared_ptr<FusedPlan> compile(const ElementwiseProgram& program) const = 0;
};

class ElementwiseFuser final : public Fuser {
 public:
  explicit ElementwiseFuser(std::shared_ptr<const ElementwiseCompiler> compiler) : compiler_(std::move(compiler)) {}

  bool may_take(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                std::span<const ir::TensorSpec> outputs) const override;
  std::unique_ptr<FuserBuilder> builder() const override;
  const ElementwiseCompiler& compiler() const noexcept { return *compiler_; }

 private:
  std::shared_ptr<const ElementwiseCompiler> compiler_;
};

/// Whether an op of an elementwise or row group carries scalar operand
/// values (binary with a scalar, clamp, mask_fill): values the plan reads at
/// run time.
bool has_scalar_operand(const ir::Op& op);

/// Whether `s` (same rank) broadcasts to `shape`.
bool broadcasts_to(const Shape& s, const Shape& shape);

/// The plan of a group: batch ops `taken` (in order) over loop shape `shape`.
/// Results needed outside the group become outputs, the rest intermediates;
/// ops whose results nobody needs are dropped. Compiled by `compiler`.
std::shared_ptr<const FusedPlan> build_group_plan(const Batch& batch, const std::vector<std::uint32_t>& taken,
                                                  const Shape& shape, const ElementwiseCompiler& compiler);

/// Whether `op` is of the elementwise kind (fusion/op_kind.hpp: unary,
/// binary, clamp, cast, mask_where, mask_fill).
bool is_elementwise(const ir::Op& op);

}  // namespace burn::fusion
