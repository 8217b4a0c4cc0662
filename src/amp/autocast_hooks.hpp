// What dispatch and autodiff call into autocast (include/burn/amp/autocast.hpp):
// a check cheap enough for every operation, the input casts, and the guard
// backward runs under.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include <burn/detail/tensor_ref.hpp>
#include <burn/ir/op.hpp>

namespace burn::amp::detail {

/// How many Autocast scopes this thread has open, and how many backward
/// passes (which run without autocast) it is inside.
extern thread_local constinit std::size_t open_scopes;
extern thread_local constinit std::size_t suspended;

/// Whether autocast can change anything on this thread: one thread-local
/// read on the path of every operation.
inline bool may_apply() noexcept { return open_scopes != 0 && suspended == 0; }

/// The inputs `op` should run on under the autocast scope of their device,
/// or nullopt when they stay as they are. Call only when may_apply().
std::optional<std::vector<burn::detail::TensorRef>> autocast_inputs(const ir::Op& op,
                                                                    std::span<const burn::detail::TensorRef> inputs);

/// While alive, autocast is off on this thread (backward: each gradient
/// stays in its forward value's dtype).
class SuspendAutocast {
 public:
  SuspendAutocast() noexcept { ++suspended; }
  ~SuspendAutocast() { --suspended; }
  SuspendAutocast(const SuspendAutocast&) = delete;
  SuspendAutocast& operator=(const SuspendAutocast&) = delete;
};

}  // namespace burn::amp::detail
