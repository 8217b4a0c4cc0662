#include <fmt/format.h>

#include <burn/error.hpp>
#include <burn/lr_scheduler/exponential.hpp>

#include "state_text.hpp"

namespace burn::lr_scheduler {

ExponentialLrScheduler ExponentialLrSchedulerConfig::init() const {
  if (!(initial_lr > 0.0 && initial_lr <= 1.0))
    throw Error("ExponentialLrSchedulerConfig", fmt::format("initial_lr must be in (0, 1], got {}", initial_lr));
  if (!(gamma > 0.0 && gamma <= 1.0))
    throw Error("ExponentialLrSchedulerConfig", fmt::format("gamma must be in (0, 1], got {}", gamma));
  return ExponentialLrScheduler(initial_lr, gamma);
}

std::map<std::string, std::string> ExponentialLrScheduler::state() const {
  return {{"scheduler", "exponential"}, {"previous_lr", detail::format_double(previous_lr_)}};
}

void ExponentialLrScheduler::load_state(const std::map<std::string, std::string>& state) {
  detail::check_keys(state, "exponential", {"previous_lr"}, "ExponentialLrScheduler");
  previous_lr_ = detail::parse_double(state, "previous_lr", "ExponentialLrScheduler");
}

}  // namespace burn::lr_scheduler
