#include <burn/error.hpp>
#include <burn/lr_scheduler/step.hpp>

#include "state_text.hpp"

namespace burn::lr_scheduler {

namespace {

/// x^n by repeated squaring, the way Rust's f64::powi evaluates it, so the
/// rates match Burn's to the last bit.
double powi(double x, std::int64_t n) {
  const bool reciprocal = n < 0;
  std::uint64_t e = reciprocal ? static_cast<std::uint64_t>(-n) : static_cast<std::uint64_t>(n);
  double r = 1.0;
  while (true) {
    if (e & 1) r *= x;
    e /= 2;
    if (e == 0) break;
    x *= x;
  }
  return reciprocal ? 1.0 / r : r;
}

}  // namespace

StepLrScheduler StepLrSchedulerConfig::init() const {
  if (step_size == 0) throw Error("StepLrSchedulerConfig", "step_size must be greater than 0");
  return StepLrScheduler(initial_lr, step_size, gamma);
}

double StepLrScheduler::step() {
  ++iter_idx_;
  return initial_lr_ * powi(gamma_, iter_idx_ / static_cast<std::int64_t>(step_size_));
}

std::map<std::string, std::string> StepLrScheduler::state() const {
  return {{"scheduler", "step"}, {"iter_idx", std::to_string(iter_idx_)}};
}

void StepLrScheduler::load_state(const std::map<std::string, std::string>& state) {
  detail::check_keys(state, "step", {"iter_idx"}, "StepLrScheduler");
  const auto idx = detail::parse_int(state, "iter_idx", "StepLrScheduler");
  if (idx < -1) throw Error("StepLrScheduler", "state 'iter_idx' must be at least -1");
  iter_idx_ = idx;
}

}  // namespace burn::lr_scheduler
