// The bridge: a refcounted, backend-free handle {spec, device, primitive}.
#pragma once

#include <memory>

#include <burn/backend/backend.hpp>
#include <burn/device.hpp>
#include <burn/ir/op.hpp>

namespace burn::detail {

struct TensorImpl {
  ir::TensorSpec spec;
  /// The device with this tensor's own autodiff context.
  Device device;
  backend::PrimitivePtr primitive;
};
using TensorRef = std::shared_ptr<const TensorImpl>;

}  // namespace burn::detail
