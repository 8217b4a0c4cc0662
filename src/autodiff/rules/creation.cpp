// Family "creation": full, arange and random have no inputs, so record()
// never makes a node for them and no gradient flows through them.
#include "autodiff/vjp.hpp"

namespace burn::autodiff {
namespace {

[[noreturn]] void no_rule(const ir::Op& op) {
  throw Error(ir::op_name(op), "has no backward rule: creation ops are never differentiated");
}

}  // namespace

Grads rule(const ir::Full& op, const VjpArgs&) { no_rule(op); }
Grads rule(const ir::Arange& op, const VjpArgs&) { no_rule(op); }
Grads rule(const ir::Random& op, const VjpArgs&) { no_rule(op); }

// Never asked (no node is ever made); the default keeps everything.
SavedValues saved(const ir::Full&) { return kKeepAll; }
SavedValues saved(const ir::Arange&) { return kKeepAll; }
SavedValues saved(const ir::Random&) { return kKeepAll; }

}  // namespace burn::autodiff
