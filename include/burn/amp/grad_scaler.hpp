// Dynamic loss scaling for training with f16 activations, as PyTorch's
// torch.amp.GradScaler: f16 cannot hold gradients below about 6e-8, so the
// loss is multiplied by a large scale before backward and the gradients are
// divided by it before the optimiser sees them. A step whose gradients hold
// inf or nan (the scale was too large) is skipped and the scale is lowered;
// after `growth_interval` good steps in a row it is raised again.
//
//   burn::amp::GradScaler scaler;                        // scale 65536
//   for (...) {
//     burn::Gradients grads;
//     {
//       burn::amp::Autocast autocast(device, burn::DType::F16);
//       auto loss = loss_fn.forward(model.forward(x), y);
//       grads = scaler.scale(loss).backward();
//     }
//     auto params = burn::optim::GradientsParams::from_grads(grads, model);
//     model = scaler.step(optim, lr, std::move(model), std::move(params));   // skipped on inf/nan
//     scaler.update();
//   }
//
// bf16 has f32's exponent range and needs no scaler.
//
// Inside a traced step (burn::trace, docs/trace.md) the scale is an input,
// since it changes between steps, and the check is a result, since the
// recording cannot read values; the caller applies the step or not:
//
//   Tensors in = {..., scaler.traced_scales(device)};       // each call
//   ... inside the traced function:
//   auto grads = GradScaler::traced_scale(loss, scales).backward();
//   auto params = GradientsParams::from_grads(grads, model);
//   auto found = GradScaler::traced_unscale(params, scales);  // a result
//   ... after the call:
//   scaler.commit_traced(Tensor<1, Bool>(out[k]).into_scalar<bool>());
//   // keep the step's results unless found_inf(); then update()
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <burn/optim/optimizer.hpp>
#include <burn/tensor.hpp>

namespace burn::amp {

class GradScaler;

struct GradScalerConfig {
  double init_scale = 65536.0;         ///< 2^16, PyTorch's default
  double growth_factor = 2.0;          ///< > 1
  double backoff_factor = 0.5;         ///< in (0, 1)
  std::size_t growth_interval = 2000;  ///< good steps before the scale grows (>= 1)

  GradScalerConfig with_init_scale(double s) const {
    auto c = *this;
    c.init_scale = s;
    return c;
  }
  GradScalerConfig with_growth_factor(double f) const {
    auto c = *this;
    c.growth_factor = f;
    return c;
  }
  GradScalerConfig with_backoff_factor(double f) const {
    auto c = *this;
    c.backoff_factor = f;
    return c;
  }
  GradScalerConfig with_growth_interval(std::size_t n) const {
    auto c = *this;
    c.growth_interval = n;
    return c;
  }
  GradScaler init() const;
};

class GradScaler {
 public:
  /// Throws burn::Error("[GradScalerConfig] ...") for a setting out of range.
  explicit GradScaler(const GradScalerConfig& config = {});

  /// `loss` times the current scale, in f32 (a 16-bit loss is widened first,
  /// since 65536 times an f16 loss above 1 would overflow).
  template <std::size_t D>
  Tensor<D> scale(const Tensor<D>& loss) const {
    return Tensor<D>(scale_ref(loss.ref()));
  }

  /// Divides every gradient by the scale, in place, and checks them: false
  /// when any holds inf or nan. Once per iteration, before step(); needed
  /// only to look at the true gradients before the step (step() unscales
  /// them otherwise).
  bool unscale(optim::GradientsParams& grads);

  /// Unscales `grads` (unless unscale() already did) and, when every one is
  /// finite, steps the optimiser; otherwise returns `module` unchanged and
  /// counts a skipped step. Call update() after it.
  template <module::Module M>
  M step(optim::Optimizer& optimizer, double lr, M module, optim::GradientsParams grads) {
    if (!checked_) unscale(grads);
    if (found_inf_) {
      ++skipped_steps_;
      return module;
    }
    return optimizer.step(lr, std::move(module), std::move(grads));
  }

  /// Adjusts the scale for the next iteration: times backoff_factor after a
  /// step with inf/nan gradients, times growth_factor after growth_interval
  /// good steps in a row. Throws burn::Error("[GradScaler] ...") when no
  /// gradients were checked since the last update, or when the scale has
  /// fallen to zero (every step diverged).
  void update();

  double get_scale() const noexcept { return scale_; }
  /// Good steps in a row since the scale last changed.
  std::size_t growth_tracker() const noexcept { return growth_tracker_; }
  /// Whether the last checked gradients held inf or nan.
  bool found_inf() const noexcept { return found_inf_; }
  /// Steps skipped since this scaler was made.
  std::size_t skipped_steps() const noexcept { return skipped_steps_; }
  const GradScalerConfig& config() const noexcept { return config_; }

  /// {scale, 1 / scale}, a [2] f32 tensor on `device` (without autodiff):
  /// the input of the next traced step.
  burn::detail::TensorRef traced_scales(const Device& device) const;
  /// Inside a traced step: `loss` (a 16-bit loss widened to f32) times the
  /// scale in `scales`, as scale() computes it.
  template <std::size_t D>
  static Tensor<D> traced_scale(const Tensor<D>& loss, const burn::detail::TensorRef& scales) {
    return Tensor<D>(traced_scale_ref(loss.ref(), scales));
  }
  /// Inside a traced step: every gradient times the inverse scale in
  /// `scales`, as unscale() computes it, and a [1] bool tensor: whether any
  /// of them holds inf or nan.
  static Tensor<1, Bool> traced_unscale(optim::GradientsParams& grads, const burn::detail::TensorRef& scales);
  /// After a traced step: records its check as unscale() does (a step that
  /// found inf or nan counts as skipped; the caller keeps the parameters and
  /// the optimiser's state as they were). Call update() next. Throws
  /// burn::Error("[GradScaler] ...") as unscale() does when called twice in
  /// one iteration.
  void commit_traced(bool found_inf);

  /// Restores a saved scale and growth tracker (a checkpoint's); throws
  /// burn::Error("[GradScaler] ...") for a scale that is not finite and
  /// positive.
  void load_state(double scale, std::size_t growth_tracker);

 private:
  burn::detail::TensorRef scale_ref(const burn::detail::TensorRef& loss) const;
  static burn::detail::TensorRef traced_scale_ref(const burn::detail::TensorRef& loss,
                                                  const burn::detail::TensorRef& scales);

  GradScalerConfig config_;
  double scale_;
  std::size_t growth_tracker_ = 0;
  std::size_t skipped_steps_ = 0;
  bool checked_ = false;    ///< gradients unscaled and checked since the last update()
  bool found_inf_ = false;  ///< ... and they held inf or nan
};

inline GradScaler GradScalerConfig::init() const { return GradScaler(*this); }

}  // namespace burn::amp
