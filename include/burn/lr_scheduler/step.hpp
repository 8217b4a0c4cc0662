// Step decay: initial_lr * gamma^(k / step_size) at the k-th step (from 0).
//
//   auto sched = burn::lr_scheduler::StepLrSchedulerConfig{0.1, 30}.with_gamma(0.1).init();
#pragma once

#include <burn/lr_scheduler/lr_scheduler.hpp>
#include <cstddef>
#include <cstdint>

namespace burn::lr_scheduler {

class StepLrScheduler final : public LrScheduler {
 public:
  StepLrScheduler(double initial_lr, std::size_t step_size, double gamma)
      : initial_lr_(initial_lr), step_size_(step_size), gamma_(gamma) {}
  double step() override;
  std::map<std::string, std::string> state() const override;
  void load_state(const std::map<std::string, std::string>& state) override;
  std::unique_ptr<LrScheduler> clone() const override { return std::make_unique<StepLrScheduler>(*this); }

 private:
  double initial_lr_;
  std::size_t step_size_;
  double gamma_;
  std::int64_t iter_idx_ = -1;  // the index of the last step taken
};

struct StepLrSchedulerConfig {
  double initial_lr = 0.0;
  std::size_t step_size = 0;
  double gamma = 0.1;

  StepLrSchedulerConfig with_gamma(double g) const {
    auto c = *this;
    c.gamma = g;
    return c;
  }
  /// Throws burn::Error("[StepLrSchedulerConfig] ...") for a zero step_size.
  StepLrScheduler init() const;
};

}  // namespace burn::lr_scheduler
