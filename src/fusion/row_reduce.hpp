// The row-reduce fuser: reductions over the last dim together with the
// elementwise work around them — the shape of softmax, log-softmax, layer
// and RMS norm. Every op of a group works on rows of one shape S = [..., L]:
// full-size ops produce S, reductions fold a row into shape S' = [..., 1],
// and ops on S' values (statistics such as `var + eps`) produce S'. A value
// of shape S' read by a full-size op is broadcast along its row. A backend
// runs the group row by row, so each row is read from memory once and
// nothing but the group's outputs is written.
#pragma once

#include "fusion/elementwise.hpp"

namespace burn::fusion {

class RowReduceFuser final : public Fuser {
 public:
  /// `max_row`: the longest row L the compiler's kernel takes.
  RowReduceFuser(std::shared_ptr<const ElementwiseCompiler> compiler, std::size_t max_row)
      : compiler_(std::move(compiler)), max_row_(max_row) {}

  bool may_take(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                std::span<const ir::TensorSpec> outputs) const override;
  std::unique_ptr<FuserBuilder> builder() const override;
  const ElementwiseCompiler& compiler() const noexcept { return *compiler_; }
  std::size_t max_row() const noexcept { return max_row_; }

 private:
  std::shared_ptr<const ElementwiseCompiler> compiler_;
  std::size_t max_row_;
};

/// Shape `s` with its last dim set to 1 (the row statistics' shape).
Shape row_stat_shape(const Shape& s);

}  // namespace burn::fusion
