// The Transformer paper's schedule (Vaswani et al.), as Burn computes it:
//   lr_k = init_lr * model_size^-0.5 * min(k^-0.5, k * warmup_steps^-1.5),  k = 1, 2, ...
// (Burn calls init_lr the "factor": the peak rate is init_lr / sqrt(model_size * warmup_steps).)
//
//   auto sched = burn::lr_scheduler::NoamLrSchedulerConfig{1.0}.with_warmup_steps(4000).with_model_size(512).init();
#pragma once

#include <burn/lr_scheduler/lr_scheduler.hpp>
#include <cstddef>

namespace burn::lr_scheduler {

class NoamLrScheduler final : public LrScheduler {
 public:
  NoamLrScheduler(double init_lr, std::size_t warmup_steps, std::size_t model_size)
      : warmup_steps_(static_cast<double>(warmup_steps)),
        model_size_(static_cast<double>(model_size)),
        factor_(init_lr) {}
  double step() override;
  std::map<std::string, std::string> state() const override;
  void load_state(const std::map<std::string, std::string>& state) override;
  std::unique_ptr<LrScheduler> clone() const override { return std::make_unique<NoamLrScheduler>(*this); }

 private:
  double warmup_steps_;
  double model_size_;
  double factor_;
  double step_ = 0.0;
};

struct NoamLrSchedulerConfig {
  double init_lr = 0.0;
  std::size_t warmup_steps = 4000;
  std::size_t model_size = 512;

  NoamLrSchedulerConfig with_warmup_steps(std::size_t w) const {
    auto c = *this;
    c.warmup_steps = w;
    return c;
  }
  NoamLrSchedulerConfig with_model_size(std::size_t m) const {
    auto c = *this;
    c.model_size = m;
    return c;
  }
  /// Throws burn::Error("[NoamLrSchedulerConfig] ...") for zero warmup_steps or model_size.
  NoamLrScheduler init() const;
};

}  // namespace burn::lr_scheduler
