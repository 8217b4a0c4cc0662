// Linear ramp from initial_lr to final_lr over num_iters steps, then flat at
// final_lr: a warm-up when final_lr > initial_lr, a decay otherwise.
//
//   auto warmup = burn::lr_scheduler::LinearLrSchedulerConfig{1e-5, 1e-3, 500}.init();
#pragma once

#include <burn/lr_scheduler/lr_scheduler.hpp>
#include <cstddef>

namespace burn::lr_scheduler {

class LinearLrScheduler final : public LrScheduler {
 public:
  LinearLrScheduler(double initial_lr, double final_lr, std::size_t num_iters)
      : final_lr_(final_lr),
        step_size_((final_lr - initial_lr) / static_cast<double>(num_iters)),
        remaining_iters_(num_iters + 1) {}
  double step() override {
    if (remaining_iters_ != 0) --remaining_iters_;
    return final_lr_ - step_size_ * static_cast<double>(remaining_iters_);
  }
  std::map<std::string, std::string> state() const override;
  void load_state(const std::map<std::string, std::string>& state) override;
  std::unique_ptr<LrScheduler> clone() const override { return std::make_unique<LinearLrScheduler>(*this); }

 private:
  double final_lr_;
  double step_size_;
  std::size_t remaining_iters_;
};

struct LinearLrSchedulerConfig {
  double initial_lr = 0.0;
  double final_lr = 0.0;
  std::size_t num_iters = 0;

  /// Throws burn::Error("[LinearLrSchedulerConfig] ...") unless initial_lr is
  /// in (0, 1], final_lr in [0, 1] and num_iters > 0.
  LinearLrScheduler init() const;
};

}  // namespace burn::lr_scheduler
