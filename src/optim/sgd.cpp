#include <burn/optim/sgd.hpp>
#include <cmath>

#include "config_checks.hpp"
#include "rule_math.hpp"

namespace burn::optim {

namespace {

using detail::Val;

class SgdRule final : public detail::UpdateRule {
 public:
  explicit SgdRule(const SgdConfig& c) : momentum_(c.momentum), weight_decay_(c.weight_decay) {}
  std::string_view name() const override { return "sgd"; }
  std::vector<std::string_view> slot_names() const override { return {"velocity"}; }

  std::vector<std::string_view> used_slots() const override {
    return momentum_ ? std::vector<std::string_view>{"velocity"} : std::vector<std::string_view>{};
  }
  /// The learning rate, and the weight of the gradient in the velocity:
  /// PyTorch and Burn start the velocity at the first gradient, undamped.
  std::vector<double> step_scalars(double lr, std::uint64_t step) const override {
    return {lr, step == 1 || !momentum_ ? 1.0 : 1.0 - momentum_->dampening};
  }

  burn::detail::TensorRef update(std::span<const detail::StepScalar> s, const burn::detail::TensorRef& param,
                                 const burn::detail::TensorRef& grad, detail::ParamState& state) const override {
    const detail::StepScalar& lr = s[0];
    const Val x{param};
    Val g{grad};
    if (weight_decay_) g = g + x * weight_decay_->penalty;
    if (momentum_) {
      auto it = state.slots.find("velocity");
      // A traced step's first velocity is 0 * momentum + g * 1: the same values.
      const Val v = it == state.slots.end() ? g : Val{it->second} * momentum_->momentum + g * s[1];
      state.slots["velocity"] = v.r;
      g = momentum_->nesterov ? g + v * momentum_->momentum : v;
    }
    return (x - g * lr).r;
  }

 private:
  std::optional<MomentumConfig> momentum_;
  std::optional<WeightDecayConfig> weight_decay_;
};

}  // namespace

Optimizer SgdConfig::init() const {
  detail::check_weight_decay("SgdConfig", weight_decay);
  if (momentum) {
    detail::check_non_negative("SgdConfig", "momentum", momentum->momentum);
    detail::check_range("SgdConfig", "dampening", momentum->dampening, 0.0, 1.0, true);
  }
  return Optimizer(std::make_unique<SgdRule>(*this), gradient_clipping);
}

}  // namespace burn::optim
