#include <burn/optim/rmsprop.hpp>

#include "config_checks.hpp"
#include "rule_math.hpp"

namespace burn::optim {

namespace {

using detail::Val;

class RmsPropRule final : public detail::UpdateRule {
 public:
  explicit RmsPropRule(const RmsPropConfig& c) : c_(c) {}
  std::string_view name() const override { return "rmsprop"; }
  std::vector<std::string_view> slot_names() const override { return {"square_avg", "grad_avg", "momentum_buffer"}; }

  std::vector<std::string_view> used_slots() const override {
    std::vector<std::string_view> used{"square_avg"};
    if (c_.centered) used.emplace_back("grad_avg");
    if (c_.momentum > 0.0) used.emplace_back("momentum_buffer");
    return used;
  }
  std::vector<double> step_scalars(double lr, std::uint64_t) const override { return {lr}; }

  burn::detail::TensorRef update(std::span<const detail::StepScalar> scalars, const burn::detail::TensorRef& param,
                                 const burn::detail::TensorRef& grad, detail::ParamState& state) const override {
    auto slot = [&](const char* name) -> std::optional<Val> {
      auto it = state.slots.find(name);
      return it == state.slots.end() ? std::nullopt : std::optional<Val>(Val{it->second});
    };
    const Val x{param};
    Val g{grad};
    if (c_.weight_decay) g = g + x * c_.weight_decay->penalty;
    const double a = c_.alpha;
    const auto s_prev = slot("square_avg");
    const Val s = s_prev ? *s_prev * a + square(g) * (1.0 - a) : square(g) * (1.0 - a);
    state.slots["square_avg"] = s.r;
    Val avg = s;
    if (c_.centered) {
      const auto ga_prev = slot("grad_avg");
      const Val ga = ga_prev ? *ga_prev * a + g * (1.0 - a) : g * (1.0 - a);
      state.slots["grad_avg"] = ga.r;
      avg = s - square(ga);
    }
    Val u = g / (sqrt(avg) + c_.epsilon);
    if (c_.momentum > 0.0) {
      const auto b_prev = slot("momentum_buffer");
      u = b_prev ? *b_prev * c_.momentum + u : u;
      state.slots["momentum_buffer"] = u.r;
    }
    return (x - u * scalars[0]).r;
  }

 private:
  RmsPropConfig c_;
};

}  // namespace

Optimizer RmsPropConfig::init() const {
  detail::check_range("RmsPropConfig", "alpha", alpha, 0.0, 1.0, true);
  detail::check_non_negative("RmsPropConfig", "epsilon", epsilon);
  detail::check_non_negative("RmsPropConfig", "momentum", momentum);
  detail::check_weight_decay("RmsPropConfig", weight_decay);
  return Optimizer(std::make_unique<RmsPropRule>(*this), grad_clipping);
}

}  // namespace burn::optim
