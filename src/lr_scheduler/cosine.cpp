#include <fmt/format.h>

#include <burn/error.hpp>
#include <burn/lr_scheduler/cosine.hpp>
#include <cmath>
#include <numbers>

#include "state_text.hpp"

namespace burn::lr_scheduler {

CosineAnnealingLrScheduler CosineAnnealingLrSchedulerConfig::init() const {
  constexpr const char* op = "CosineAnnealingLrSchedulerConfig";
  if (!(initial_lr > 0.0 && initial_lr <= 1.0))
    throw Error(op, fmt::format("initial_lr must be in (0, 1], got {}", initial_lr));
  if (!(min_lr >= 0.0 && min_lr <= initial_lr))
    throw Error(op, fmt::format("min_lr must be in [0, initial_lr = {}], got {}", initial_lr, min_lr));
  if (num_iters == 0) throw Error(op, "num_iters must be at least 1");
  return CosineAnnealingLrScheduler(initial_lr, min_lr, num_iters);
}

double CosineAnnealingLrScheduler::step() {
  ++current_iter_;  // wraps from the maximum to 0 on the first step, as Burn's wrapping_add
  const double angle = static_cast<double>(current_iter_) / static_cast<double>(num_iters_) * std::numbers::pi;
  return min_lr_ + 0.5 * (max_lr_ - min_lr_) * (1.0 + std::cos(angle));
}

std::map<std::string, std::string> CosineAnnealingLrScheduler::state() const {
  return {{"scheduler", "cosine"}, {"current_iter", std::to_string(current_iter_)}};
}

void CosineAnnealingLrScheduler::load_state(const std::map<std::string, std::string>& state) {
  detail::check_keys(state, "cosine", {"current_iter"}, "CosineAnnealingLrScheduler");
  current_iter_ = detail::parse_uint(state, "current_iter", "CosineAnnealingLrScheduler");
}

}  // namespace burn::lr_scheduler
