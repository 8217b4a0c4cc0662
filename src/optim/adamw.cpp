#include <burn/optim/adamw.hpp>
#include <cmath>

#include "adaptive_moment.hpp"
#include "config_checks.hpp"

namespace burn::optim {

namespace {

using detail::Val;

class AdamWRule final : public detail::UpdateRule {
 public:
  explicit AdamWRule(const AdamWConfig& c)
      : moment_{c.beta_1, c.beta_2, c.amsgrad}, epsilon_(c.epsilon), weight_decay_(c.weight_decay) {}
  std::string_view name() const override { return "adamw"; }
  std::vector<std::string_view> slot_names() const override { return detail::AdaptiveMoment::slot_names(); }

  std::vector<std::string_view> used_slots() const override { return moment_.used_slots(); }
  /// The learning rate, the two bias corrections and what decoupled decay
  /// keeps of the weights.
  std::vector<double> step_scalars(double lr, std::uint64_t step) const override {
    const double t = static_cast<double>(step);
    return {lr, 1.0 - std::pow(moment_.beta_1, t), 1.0 - std::pow(moment_.beta_2, t), 1.0 - lr * weight_decay_};
  }

  burn::detail::TensorRef update(std::span<const detail::StepScalar> s, const burn::detail::TensorRef& param,
                                 const burn::detail::TensorRef& grad, detail::ParamState& state) const override {
    const Val x{param};
    const auto [m, v] = moment_.update(Val{grad}, state);
    const Val m_hat = m / s[1];
    const Val v_hat = v / s[2];
    const Val delta = m_hat / (sqrt(v_hat) + epsilon_);
    // Decoupled decay: the weights shrink directly, not through the gradient
    // (by a factor of 1 without decay, which leaves them as they are).
    const Val decayed = !s[3].tensor && s[3].value == 1.0 ? x : x * s[3];
    return (decayed - delta * s[0]).r;
  }

 private:
  detail::AdaptiveMoment moment_;
  double epsilon_;
  double weight_decay_;
};

}  // namespace

Optimizer AdamWConfig::init() const {
  detail::check_range("AdamWConfig", "beta_1", beta_1, 0.0, 1.0, false);
  detail::check_range("AdamWConfig", "beta_2", beta_2, 0.0, 1.0, false);
  detail::check_non_negative("AdamWConfig", "epsilon", epsilon);
  detail::check_non_negative("AdamWConfig", "weight_decay", weight_decay);
  return Optimizer(std::make_unique<AdamWRule>(*this), grad_clipping);
}

}  // namespace burn::optim
