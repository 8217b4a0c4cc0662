// The epilogue fuser: a matmul or convolution followed by elementwise work
// on its result — a layer's bias add, scaling and activation — run as one
// kernel (on the CPU, oneDNN post-ops applied while each output tile is in
// cache). The chain
// takes binary ops (add, sub, mul, div) whose left operand is the running
// result and whose right operand is a tensor broadcast to it or a scalar,
// and relu as the tensor layer writes it (`mask_fill(x, x <= 0, 0)`). Every
// value of the chain but the last must be needed by nobody else.
#pragma once

#include "fusion/group_builder.hpp"

namespace burn::fusion {

/// A backend-neutral description of a matmul or convolution (the anchor,
/// `ops[0]`) with its epilogue.
struct EpilogueProgram {
  struct Step {
    enum class Kind : std::uint8_t { Binary, Relu };
    Kind kind = Kind::Binary;
    ir::BinaryOp op = ir::BinaryOp::Add;
    bool scalar = false;         // the right operand is the op's scalar
    std::uint32_t group_op = 0;  // the op holding the scalar (Binary) or the compare (Relu)
    std::uint32_t input = 0;     // plan input of a tensor right operand
  };
  /// Plan inputs: the anchor's inputs, then each tensor right operand.
  std::vector<ir::TensorSpec> inputs;
  ir::TensorSpec output;
  std::vector<Step> steps;
  /// Every op of the group, in order, and where each input comes from (a plan
  /// input, or the result of an earlier op of the group): enough to run the
  /// ops one by one when the kernel cannot take a case.
  std::vector<ir::Op> ops;
  struct Source {
    bool is_input = false;
    std::uint32_t index = 0;  // plan input, or group op
  };
  std::vector<std::vector<Source>> wiring;
};

class EpilogueCompiler {
 public:
  virtual ~EpilogueCompiler() = default;
  /// Whether the backend's kernel takes this matmul or convolution.
  virtual bool supports_anchor(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                               std::span<const ir::TensorSpec> outputs) const = 0;
  /// Whether an epilogue step on values of `dtype` is supported.
  virtual bool supports_step(DType dtype) const = 0;
  virtual std::shared_ptr<FusedPlan> compile(const EpilogueProgram& program) const = 0;
};

class EpilogueFuser final : public Fuser {
 public:
  explicit EpilogueFuser(std::shared_ptr<const EpilogueCompiler> compiler) : compiler_(std::move(compiler)) {}

  bool may_take(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                std::span<const ir::TensorSpec> outputs) const override;
  std::unique_ptr<FuserBuilder> builder() const override;
  const EpilogueCompiler& compiler() const noexcept { return *compiler_; }

 private:
  std::shared_ptr<const EpilogueCompiler> compiler_;
};

}  // namespace burn::fusion
