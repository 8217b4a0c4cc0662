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

  burn::detail::TensorRef update(double lr, const burn::detail::TensorRef& param, const burn::detail::TensorRef& grad,
                                 detail::ParamState& state) const override {
    const Val x{param};
    Val g{grad};
    if (weight_decay_) g = g + x * weight_decay_->penalty;
    if (momentum_) {
      auto it = state.slots.find("velocity");
      // PyTorch and Burn start the velocity at the first gradient, undamped.
      const Val v =
          it == state.slots.end() ? g : Val{it->second} * momentum_->momentum + g * (1.0 - momentum_->dampening);
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
