// Routes an op to its rule and saved values (one overload of each per op, in
// its family's file; see vjp.hpp). The lambdas name no op: an op added to
// ir::Op compiles here once its family file has both overloads.
#include "autodiff/vjp.hpp"

namespace burn::autodiff {

Grads vjp(const ir::Op& op, const VjpArgs& a) {
  return std::visit([&a](const auto& o) { return rule(o, a); }, op);
}

SavedValues saved_values(const ir::Op& op) {
  return std::visit([](const auto& o) { return saved(o); }, op);
}

}  // namespace burn::autodiff
