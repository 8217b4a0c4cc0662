// The gradient scaler's unscale-and-check and its scale schedule.
#include <burn/amp/grad_scaler.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include <burn/autodiff.hpp>
#include <burn/detail/ops.hpp>

namespace burn::amp {

namespace {

constexpr const char* kScaler = "GradScaler";

void check_config(const GradScalerConfig& c) {
  constexpr const char* kConfig = "GradScalerConfig";
  if (!(std::isfinite(c.init_scale) && c.init_scale > 0.0))
    throw Error(kConfig, fmt::format("init_scale must be finite and positive, got {}", c.init_scale));
  if (!(std::isfinite(c.growth_factor) && c.growth_factor > 1.0))
    throw Error(kConfig, fmt::format("growth_factor must be finite and above 1, got {}", c.growth_factor));
  if (!(c.backoff_factor > 0.0 && c.backoff_factor < 1.0))
    throw Error(kConfig, fmt::format("backoff_factor must be between 0 and 1 (exclusive), got {}", c.backoff_factor));
  if (c.growth_interval == 0) throw Error(kConfig, "growth_interval must be at least 1");
}

// Element `index` of a traced step's scales ({scale, 1 / scale}), in the
// dtype of `like` and shaped to broadcast against it.
burn::detail::TensorRef scale_factor(const char* op, const burn::detail::TensorRef& scales, std::int64_t index,
                                     const burn::detail::TensorRef& like) {
  if (!scales) burn::detail::throw_moved_from(op);
  if (scales->spec.shape != Shape{2} || scales->spec.dtype != DType::F32)
    throw Error(kScaler, fmt::format("a traced step's scales are the [2] f32 tensor traced_scales() makes, got a {} {} "
                                     "tensor",
                                     scales->spec.shape.to_string(), dtype_name(scales->spec.dtype)));
  const std::array<Range, 1> at{Range{index, index + 1}};
  burn::detail::TensorRef factor = burn::detail::slice(scales, at);
  if (factor->spec.dtype != like->spec.dtype) factor = burn::detail::cast(factor, like->spec.dtype);
  return burn::detail::reshape_exact(factor, Shape(std::vector<std::size_t>(like->spec.shape.rank(), 1)));
}

// One flag per gradient ("holds inf or nan").
burn::detail::TensorRef any_not_finite(const burn::detail::TensorRef& grad) {
  auto bad = burn::detail::binary(ir::BinaryOp::LogicalOr, burn::detail::unary(ir::UnaryOp::IsNan, grad),
                                  burn::detail::unary(ir::UnaryOp::IsInf, grad));
  return burn::detail::reduce_all(ir::ReduceOp::Any, bad);
}

}  // namespace

GradScaler::GradScaler(const GradScalerConfig& config) : config_(config), scale_(config.init_scale) {
  check_config(config_);
}

burn::detail::TensorRef GradScaler::scale_ref(const burn::detail::TensorRef& loss) const {
  if (!loss) burn::detail::throw_moved_from("GradScaler::scale");
  if (!is_float(loss->spec.dtype))
    throw Error(kScaler, fmt::format("scale() takes the float loss, got a {} tensor", dtype_name(loss->spec.dtype)));
  const auto wide = is_half(loss->spec.dtype) ? burn::detail::cast(loss, DType::F32) : loss;
  return burn::detail::binary_scalar(ir::BinaryOp::Mul, wide, scale_);
}

bool GradScaler::unscale(optim::GradientsParams& grads) {
  if (checked_)
    throw Error(kScaler,
                "the gradients of this iteration were already unscaled; call update() after step() before the next "
                "iteration");
  NoGradGuard no_grad;
  const double inverse = 1.0 / scale_;
  // One flag per gradient ("holds inf or nan"), joined per device so that
  // the check reads back one value per device rather than one per tensor.
  std::vector<std::pair<Device, std::vector<burn::detail::TensorRef>>> flags;
  for (auto& item : grads.items()) {
    auto& grad = item.second;
    grad = burn::detail::binary_scalar(ir::BinaryOp::Mul, grad, inverse);
    auto any = any_not_finite(grad);
    auto group = std::find_if(flags.begin(), flags.end(), [&](const auto& f) { return f.first == grad->device; });
    if (group == flags.end()) flags.emplace_back(grad->device, std::vector{std::move(any)});
    else group->second.push_back(std::move(any));
  }
  bool found = false;
  for (const auto& [device, parts] : flags) {
    const auto joined = burn::detail::reduce_all(ir::ReduceOp::Any, burn::detail::cat(parts, 0));
    found = found || Tensor<1, Bool>(joined).into_scalar<bool>();
  }
  found_inf_ = found;
  checked_ = true;
  return !found;
}

burn::detail::TensorRef GradScaler::traced_scales(const Device& device) const {
  const std::vector<float> values{static_cast<float>(scale_), static_cast<float>(1.0 / scale_)};
  return Tensor<1>::from_data(TensorData(values, {values.size()}), device.without_autodiff()).ref();
}

burn::detail::TensorRef GradScaler::traced_scale_ref(const burn::detail::TensorRef& loss,
                                                     const burn::detail::TensorRef& scales) {
  if (!loss) burn::detail::throw_moved_from("GradScaler::traced_scale");
  if (!is_float(loss->spec.dtype))
    throw Error(kScaler,
                fmt::format("traced_scale() takes the float loss, got a {} tensor", dtype_name(loss->spec.dtype)));
  const auto wide = is_half(loss->spec.dtype) ? burn::detail::cast(loss, DType::F32) : loss;
  return burn::detail::binary(ir::BinaryOp::Mul, wide, scale_factor("GradScaler::traced_scale", scales, 0, wide));
}

Tensor<1, Bool> GradScaler::traced_unscale(optim::GradientsParams& grads, const burn::detail::TensorRef& scales) {
  std::vector<burn::detail::TensorRef> flags;
  for (auto& item : grads.items()) {
    auto& grad = item.second;
    grad = burn::detail::binary(ir::BinaryOp::Mul, grad, scale_factor("GradScaler::traced_unscale", scales, 1, grad));
    flags.push_back(any_not_finite(grad));
  }
  if (flags.empty()) throw Error(kScaler, "traced_unscale() needs at least one gradient");
  return Tensor<1, Bool>(burn::detail::reduce_all(ir::ReduceOp::Any, burn::detail::cat(flags, 0)));
}

void GradScaler::commit_traced(bool found_inf) {
  if (checked_)
    throw Error(kScaler,
                "the gradients of this iteration were already checked; call update() after each traced step before "
                "the next");
  found_inf_ = found_inf;
  checked_ = true;
  if (found_inf) ++skipped_steps_;
}

void GradScaler::update() {
  if (!checked_)
    throw Error(kScaler,
                "update() follows step() (or unscale()) in each iteration: no gradients were checked since the last "
                "update");
  checked_ = false;
  if (found_inf_) {
    scale_ *= config_.backoff_factor;
    growth_tracker_ = 0;
    if (!(scale_ > 0.0))
      throw Error(kScaler,
                  "the loss scale fell to zero: every recent step had inf or nan gradients, so training diverged "
                  "(lower the learning rate, or look for inf/nan in the inputs)");
    return;
  }
  if (++growth_tracker_ < config_.growth_interval) return;
  growth_tracker_ = 0;
  // A scale that would overflow stays where it is.
  if (std::isfinite(scale_ * config_.growth_factor)) scale_ *= config_.growth_factor;
}

void GradScaler::load_state(double scale, std::size_t growth_tracker) {
  if (!(std::isfinite(scale) && scale > 0.0))
    throw Error(kScaler, fmt::format("a saved scale must be finite and positive, got {}", scale));
  scale_ = scale;
  growth_tracker_ = growth_tracker;
  checked_ = false;
  found_inf_ = false;
}

}  // namespace burn::amp
