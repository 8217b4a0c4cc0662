#include <fmt/format.h>

#include <burn/error.hpp>
#include <burn/lr_scheduler/linear.hpp>

#include "state_text.hpp"

namespace burn::lr_scheduler {

LinearLrScheduler LinearLrSchedulerConfig::init() const {
  constexpr const char* op = "LinearLrSchedulerConfig";
  if (!(initial_lr > 0.0 && initial_lr <= 1.0))
    throw Error(op, fmt::format("initial_lr must be in (0, 1], got {}", initial_lr));
  if (!(final_lr >= 0.0 && final_lr <= 1.0))
    throw Error(op, fmt::format("final_lr must be in [0, 1], got {}", final_lr));
  if (num_iters == 0) throw Error(op, "num_iters must be at least 1");
  return LinearLrScheduler(initial_lr, final_lr, num_iters);
}

std::map<std::string, std::string> LinearLrScheduler::state() const {
  return {{"scheduler", "linear"}, {"remaining_iters", std::to_string(remaining_iters_)}};
}

void LinearLrScheduler::load_state(const std::map<std::string, std::string>& state) {
  detail::check_keys(state, "linear", {"remaining_iters"}, "LinearLrScheduler");
  remaining_iters_ = static_cast<std::size_t>(detail::parse_uint(state, "remaining_iters", "LinearLrScheduler"));
}

}  // namespace burn::lr_scheduler
