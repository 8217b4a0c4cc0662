// Exponential decay: initial_lr, then times gamma at every step.
//
//   auto sched = burn::lr_scheduler::ExponentialLrSchedulerConfig{0.1, 0.95}.init();
#pragma once

#include <burn/lr_scheduler/lr_scheduler.hpp>

namespace burn::lr_scheduler {

class ExponentialLrScheduler final : public LrScheduler {
 public:
  /// Burn starts from initial_lr / gamma, so the first step returns (nearly
  /// always exactly) initial_lr.
  ExponentialLrScheduler(double initial_lr, double gamma) : previous_lr_(initial_lr / gamma), gamma_(gamma) {}
  double step() override {
    previous_lr_ *= gamma_;
    return previous_lr_;
  }
  std::map<std::string, std::string> state() const override;
  void load_state(const std::map<std::string, std::string>& state) override;
  std::unique_ptr<LrScheduler> clone() const override { return std::make_unique<ExponentialLrScheduler>(*this); }

 private:
  double previous_lr_;
  double gamma_;
};

struct ExponentialLrSchedulerConfig {
  double initial_lr = 0.0;
  double gamma = 0.0;

  /// Throws burn::Error("[ExponentialLrSchedulerConfig] ...") unless
  /// initial_lr and gamma are in (0, 1].
  ExponentialLrScheduler init() const;
};

}  // namespace burn::lr_scheduler
