#include "quant/host_tensors.hpp"

#include "device/runtime.hpp"

namespace burn::quant::detail {

using burn::detail::TensorImpl;

HostInput::HostInput(const burn::detail::TensorRef& x) {
  auto* host = x->device.runtime().backend().host_access();
  if (auto in_place = host ? host->host_bytes(x->primitive, x->spec) : std::nullopt) {
    owner_ = x;
    bytes_ = *in_place;
    return;
  }
  copy_ = burn::detail::to_data(x);
  bytes_ = copy_.bytes();
}

HostOutput::HostOutput(const Device& device, Shape shape, DType dtype)
    : device_(device), spec_{std::move(shape), dtype} {
  if (auto* host = device.runtime().backend().host_access()) {
    auto target = host->allocate_host(spec_);
    primitive_ = std::move(target.primitive);
    bytes_ = target.bytes;
  } else {
    fallback_.resize(spec_.shape.num_elements() * dtype_size(dtype));
    bytes_ = fallback_;
  }
}

burn::detail::TensorRef HostOutput::finish() && {
  const TensorKind kind = is_float(spec_.dtype) ? TensorKind::Float : TensorKind::Int;
  if (!primitive_)
    return burn::detail::from_data(TensorData(std::move(fallback_), spec_.shape, spec_.dtype),
                                   TensorCreationOptions(device_), kind);
  device_.runtime().count_op();
  return std::make_shared<const TensorImpl>(TensorImpl{spec_, device_, std::move(primitive_)});
}

}  // namespace burn::quant::detail
