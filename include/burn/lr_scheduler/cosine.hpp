// Cosine annealing from initial_lr down to min_lr over num_iters steps:
//   lr_k = min_lr + 0.5 (initial_lr - min_lr) (1 + cos(k / num_iters * pi)),  k = 0, 1, ...
// As in Burn, the curve continues (back up) past num_iters.
//
//   auto sched = burn::lr_scheduler::CosineAnnealingLrSchedulerConfig{1e-3, 1000}.with_min_lr(1e-5).init();
#pragma once

#include <burn/lr_scheduler/lr_scheduler.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace burn::lr_scheduler {

class CosineAnnealingLrScheduler final : public LrScheduler {
 public:
  CosineAnnealingLrScheduler(double initial_lr, double min_lr, std::size_t num_iters)
      : min_lr_(min_lr), max_lr_(initial_lr), num_iters_(num_iters) {}
  double step() override;
  std::map<std::string, std::string> state() const override;
  void load_state(const std::map<std::string, std::string>& state) override;
  std::unique_ptr<LrScheduler> clone() const override { return std::make_unique<CosineAnnealingLrScheduler>(*this); }

 private:
  double min_lr_;
  double max_lr_;
  std::size_t num_iters_;
  // Burn's counter: the maximum value, so the first step wraps to 0.
  std::uint64_t current_iter_ = std::numeric_limits<std::uint64_t>::max();
};

struct CosineAnnealingLrSchedulerConfig {
  double initial_lr = 0.0;
  std::size_t num_iters = 0;
  double min_lr = 0.0;

  CosineAnnealingLrSchedulerConfig with_min_lr(double m) const {
    auto c = *this;
    c.min_lr = m;
    return c;
  }
  /// Throws burn::Error("[CosineAnnealingLrSchedulerConfig] ...") unless
  /// initial_lr is in (0, 1], min_lr in [0, initial_lr] and num_iters > 0.
  CosineAnnealingLrScheduler init() const;
};

}  // namespace burn::lr_scheduler
