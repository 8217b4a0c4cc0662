#include <algorithm>
#include <burn/error.hpp>
#include <burn/lr_scheduler/noam.hpp>
#include <cmath>

#include "state_text.hpp"

namespace burn::lr_scheduler {

NoamLrScheduler NoamLrSchedulerConfig::init() const {
  if (warmup_steps == 0) throw Error("NoamLrSchedulerConfig", "warmup_steps must be greater than 0");
  if (model_size == 0) throw Error("NoamLrSchedulerConfig", "model_size must be greater than 0");
  return NoamLrScheduler(init_lr, warmup_steps, model_size);
}

double NoamLrScheduler::step() {
  step_ += 1.0;
  const double arg1 = std::pow(step_, -0.5);
  const double arg2 = step_ * std::pow(warmup_steps_, -1.5);
  return factor_ * std::pow(model_size_, -0.5) * std::min(arg1, arg2);
}

std::map<std::string, std::string> NoamLrScheduler::state() const {
  return {{"scheduler", "noam"}, {"step", detail::format_double(step_)}};
}

void NoamLrScheduler::load_state(const std::map<std::string, std::string>& state) {
  detail::check_keys(state, "noam", {"step"}, "NoamLrScheduler");
  const double s = detail::parse_double(state, "step", "NoamLrScheduler");
  if (!(s >= 0.0) || s != std::floor(s))
    throw Error("NoamLrScheduler", "state 'step' must be a non-negative whole number");
  step_ = s;
}

}  // namespace burn::lr_scheduler
