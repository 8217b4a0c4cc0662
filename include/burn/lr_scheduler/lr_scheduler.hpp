// Learning-rate schedulers: each step() returns the rate for the coming
// optimiser step and advances; values are exactly Burn's.
//
//   auto sched = burn::lr_scheduler::CosineAnnealingLrSchedulerConfig{1e-3, 1000}.init();
//   for (...) model = optim.step(sched.step(), model, grads);
//   auto saved = sched.state();          // text map: goes into checkpoint metadata
//   sched.load_state(saved);             // resumes the schedule exactly
#pragma once

#include <map>
#include <memory>
#include <string>

namespace burn::lr_scheduler {

class LrScheduler {
 public:
  virtual ~LrScheduler() = default;
  /// The learning rate for this step; advances the schedule.
  virtual double step() = 0;
  /// The schedule's position as text ("scheduler" names the kind; numbers
  /// are written so they read back bit for bit).
  virtual std::map<std::string, std::string> state() const = 0;
  /// Restores what state() returned; throws burn::Error("[<Scheduler>] ...")
  /// for another kind's state, a missing or unexpected key, or a malformed
  /// value, and changes nothing then.
  virtual void load_state(const std::map<std::string, std::string>& state) = 0;
  virtual std::unique_ptr<LrScheduler> clone() const = 0;

 protected:
  LrScheduler() = default;
  LrScheduler(const LrScheduler&) = default;
  LrScheduler& operator=(const LrScheduler&) = default;
};

}  // namespace burn::lr_scheduler
