// The same learning rate at every step.
#pragma once

#include <burn/lr_scheduler/lr_scheduler.hpp>

namespace burn::lr_scheduler {

class ConstantLr final : public LrScheduler {
 public:
  explicit ConstantLr(double lr) : lr_(lr) {}
  double step() override { return lr_; }
  std::map<std::string, std::string> state() const override;
  void load_state(const std::map<std::string, std::string>& state) override;
  std::unique_ptr<LrScheduler> clone() const override { return std::make_unique<ConstantLr>(*this); }

 private:
  double lr_;
};

}  // namespace burn::lr_scheduler
