// The bridge: a refcounted, backend-free handle {spec, device, primitive}.
#pragma once

#include <memory>

#include <burn/backend/backend.hpp>
#include <burn/device.hpp>
#include <burn/ir/op.hpp>

namespace burn::autodiff {
struct Node;
}

namespace burn::detail {

struct TensorImpl {
  ir::TensorSpec spec;
  /// The device with this tensor's own autodiff context.
  Device device;
  backend::PrimitivePtr primitive;
  /// The autodiff graph node that produced this tensor (null: not tracked),
  /// and which of that node's outputs this tensor is.
  std::shared_ptr<autodiff::Node> node = nullptr;
  std::size_t node_output = 0;
};
using TensorRef = std::shared_ptr<const TensorImpl>;

}  // namespace burn::detail
