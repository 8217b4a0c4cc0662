#include <burn/optim/adam.hpp>
#include <cmath>

#include "adaptive_moment.hpp"
#include "config_checks.hpp"

namespace burn::optim {

namespace {

using detail::Val;

class AdamRule final : public detail::UpdateRule {
 public:
  explicit AdamRule(const AdamConfig& c)
      : moment_{c.beta_1, c.beta_2, c.amsgrad}, epsilon_(c.epsilon), weight_decay_(c.weight_decay) {}
  std::string_view name() const override { return "adam"; }
  std::vector<std::string_view> slot_names() const override { return detail::AdaptiveMoment::slot_names(); }

  std::vector<std::string_view> used_slots() const override { return moment_.used_slots(); }
  /// The learning rate, m's scale and epsilon's: m_hat / (sqrt(v_hat) + eps)
  /// rewritten with one scale on m and eps (Burn's form), the bias
  /// corrections being scalars.
  std::vector<double> step_scalars(double lr, std::uint64_t step) const override {
    const double t = static_cast<double>(step);
    const double bc2_sqrt = std::sqrt(1.0 - std::pow(moment_.beta_2, t));
    return {lr, bc2_sqrt / (1.0 - std::pow(moment_.beta_1, t)), epsilon_ * bc2_sqrt};
  }

  burn::detail::TensorRef update(std::span<const detail::StepScalar> s, const burn::detail::TensorRef& param,
                                 const burn::detail::TensorRef& grad, detail::ParamState& state) const override {
    const Val x{param};
    Val g{grad};
    if (weight_decay_) g = g + x * weight_decay_->penalty;
    const auto [m, v] = moment_.update(g, state);
    const Val delta = (m * s[1]) / (sqrt(v) + s[2]);
    return (x - delta * s[0]).r;
  }

 private:
  detail::AdaptiveMoment moment_;
  double epsilon_;
  std::optional<WeightDecayConfig> weight_decay_;
};

}  // namespace

Optimizer AdamConfig::init() const {
  detail::check_range("AdamConfig", "beta_1", beta_1, 0.0, 1.0, false);
  detail::check_range("AdamConfig", "beta_2", beta_2, 0.0, 1.0, false);
  detail::check_non_negative("AdamConfig", "epsilon", epsilon);
  detail::check_weight_decay("AdamConfig", weight_decay);
  return Optimizer(std::make_unique<AdamRule>(*this), grad_clipping);
}

}  // namespace burn::optim
