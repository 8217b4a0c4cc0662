// Learning-rate schedulers: sequences evaluated with Burn's formulas
// (crates/burn-optim/src/lr_scheduler/*.rs) operation for operation in
// Python doubles (powi by repeated squaring as Rust's f64::powi), state
// round trips, and config errors.
#include <burn/lr_scheduler/constant.hpp>
#include <burn/lr_scheduler/cosine.hpp>
#include <burn/lr_scheduler/exponential.hpp>
#include <burn/lr_scheduler/linear.hpp>
#include <burn/lr_scheduler/noam.hpp>
#include <burn/lr_scheduler/step.hpp>

#include "burn_test.hpp"

namespace {

using namespace burn::lr_scheduler;
using burn::testing::expect_op_error;

void expect_sequence(LrScheduler& s, const std::vector<double>& expected) {
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(s.step(), expected[i]) << "at step " << i;
}

/// Steps `n` times, saves, restores into a copy that was stepped elsewhere,
/// then both must produce the same next values bit for bit.
void expect_state_round_trip(const LrScheduler& fresh, std::size_t n) {
  auto truth = fresh.clone();
  auto restored = fresh.clone();
  for (std::size_t i = 0; i < n; ++i) truth->step();
  const auto saved = truth->state();
  for (std::size_t i = 0; i < 2 * n + 3; ++i) restored->step();  // somewhere else entirely
  restored->load_state(saved);
  for (std::size_t i = 0; i < n + 5; ++i) EXPECT_EQ(restored->step(), truth->step()) << "after restoring, step " << i;
}

TEST(LrScheduler, ConstantNeverChanges) {
  ConstantLr s(0.25);
  expect_sequence(s, {0.25, 0.25, 0.25});
  expect_state_round_trip(s, 2);
}

TEST(LrScheduler, StepDecaysEveryStepSizeSteps) {
  auto s = StepLrSchedulerConfig{0.5, 3}.with_gamma(0.1).init();
  expect_sequence(s,
                  {0.5, 0.5, 0.5, 0.05, 0.05, 0.05, 0.005000000000000001, 0.005000000000000001, 0.005000000000000001});
  auto up = StepLrSchedulerConfig{0.1, 2}.with_gamma(2.0).init();
  expect_sequence(up, {0.1, 0.1, 0.2, 0.2, 0.4, 0.4});
  auto s7 = StepLrSchedulerConfig{0.3, 2}.with_gamma(0.7).init();
  expect_sequence(
      s7, {0.3, 0.3, 0.21, 0.21, 0.14699999999999996, 0.14699999999999996, 0.10289999999999998, 0.10289999999999998,
           0.07202999999999997, 0.07202999999999997, 0.05042099999999998, 0.05042099999999998});
  // The default gamma is 0.1.
  auto d = StepLrSchedulerConfig{0.4, 2}.init();
  expect_sequence(d, {0.4, 0.4, 0.04000000000000001});
  expect_state_round_trip(StepLrSchedulerConfig{0.3, 2}.with_gamma(0.7).init(), 5);
}

TEST(LrScheduler, ExponentialMultipliesByGamma) {
  auto s = ExponentialLrSchedulerConfig{0.8, 0.1}.init();
  expect_sequence(s, {0.8, 0.08000000000000002, 0.008000000000000002, 0.0008000000000000003, 8.000000000000003e-05});
  auto s2 = ExponentialLrSchedulerConfig{0.083, 0.3}.init();
  expect_sequence(s2, {0.083, 0.024900000000000002, 0.00747, 0.002241, 0.0006722999999999999, 0.00020168999999999997});
  expect_state_round_trip(ExponentialLrSchedulerConfig{0.083, 0.3}.init(), 7);
}

TEST(LrScheduler, CosineAnnealsAndContinuesPastNumIters) {
  auto s = CosineAnnealingLrSchedulerConfig{0.5, 2}.with_min_lr(0.1).init();
  expect_sequence(s, {0.5, 0.30000000000000004, 0.1, 0.29999999999999993, 0.5});
  auto s2 = CosineAnnealingLrSchedulerConfig{0.01, 7}.init();
  expect_sequence(s2, {0.01, 0.009504844339512096, 0.008117449009293669, 0.006112604669781572, 0.003887395330218428,
                       0.0018825509907063327, 0.0004951556604879049, 0.0, 0.0004951556604879043});
  expect_state_round_trip(CosineAnnealingLrSchedulerConfig{0.01, 7}.init(), 4);
  // A fresh scheduler's state round-trips too (Burn's counter starts at the maximum).
  expect_state_round_trip(CosineAnnealingLrSchedulerConfig{0.01, 7}.init(), 0);
}

TEST(LrScheduler, LinearRampsThenStaysAtTheFinalRate) {
  auto down = LinearLrSchedulerConfig{0.9, 0.5, 4}.init();
  expect_sequence(down, {0.9, 0.8, 0.7, 0.6, 0.5, 0.5});
  auto warmup = LinearLrSchedulerConfig{0.01, 0.04, 3}.init();
  expect_sequence(warmup, {0.010000000000000002, 0.02, 0.03, 0.04, 0.04});
  expect_state_round_trip(LinearLrSchedulerConfig{0.01, 0.04, 3}.init(), 2);
}

TEST(LrScheduler, NoamWarmsUpThenDecays) {
  auto s = NoamLrSchedulerConfig{10.0}.with_warmup_steps(3).with_model_size(16).init();
  expect_sequence(
      s, {0.4811252243246882, 0.9622504486493764, 1.4433756729740643, 1.25, 1.118033988749895, 1.0206207261596576});
  // Burn's property: rising for warmup_steps steps, falling after.
  auto p = NoamLrSchedulerConfig{10.0}.with_warmup_steps(100).init();
  double last = 0.0;
  for (int i = 0; i < 100; ++i) {
    const double lr = p.step();
    EXPECT_GT(lr, last);
    last = lr;
  }
  for (int i = 0; i < 100; ++i) {
    const double lr = p.step();
    EXPECT_LT(lr, last);
    last = lr;
  }
  expect_state_round_trip(NoamLrSchedulerConfig{1.0}.with_warmup_steps(10).with_model_size(64).init(), 6);
}

TEST(LrScheduler, StateNamesItsKindAndRejectsOthers) {
  auto step = StepLrSchedulerConfig{0.5, 3}.init();
  step.step();
  EXPECT_EQ(step.state(), (std::map<std::string, std::string>{{"scheduler", "step"}, {"iter_idx", "0"}}));
  auto cosine = CosineAnnealingLrSchedulerConfig{0.5, 3}.init();
  expect_op_error([&] { cosine.load_state(step.state()); }, "CosineAnnealingLrScheduler", "not a 'cosine' scheduler's");
  expect_op_error([&] { step.load_state({{"scheduler", "step"}}); }, "StepLrScheduler", "lacks 'iter_idx'");
  expect_op_error(
      [&] {
        step.load_state({{"scheduler", "step"}, {"iter_idx", "x1"}});
      },
      "StepLrScheduler", "is not an integer");
  expect_op_error(
      [&] {
        step.load_state({{"scheduler", "step"}, {"iter_idx", "1"}, {"extra", "2"}});
      },
      "StepLrScheduler", "unexpected state key 'extra'");
  auto noam = NoamLrSchedulerConfig{1.0}.init();
  expect_op_error(
      [&] {
        noam.load_state({{"scheduler", "noam"}, {"step", "1.5"}});
      },
      "NoamLrScheduler", "whole number");
  // A failed load changes nothing.
  EXPECT_EQ(step.state().at("iter_idx"), "0");
}

TEST(LrScheduler, InvalidConfigsAreClearErrors) {
  expect_op_error([] { StepLrSchedulerConfig{0.1, 0}.init(); }, "StepLrSchedulerConfig", "step_size");
  expect_op_error([] { ExponentialLrSchedulerConfig{1.5, 0.5}.init(); }, "ExponentialLrSchedulerConfig", "initial_lr");
  expect_op_error([] { ExponentialLrSchedulerConfig{0.5, 0.0}.init(); }, "ExponentialLrSchedulerConfig", "gamma");
  expect_op_error(
      [] {
        CosineAnnealingLrSchedulerConfig{0.5, 10}.with_min_lr(0.6).init();
      },
      "CosineAnnealingLrSchedulerConfig", "min_lr");
  expect_op_error(
      [] {
        CosineAnnealingLrSchedulerConfig{0.5, 0}.init();
      },
      "CosineAnnealingLrSchedulerConfig", "num_iters");
  expect_op_error([] { LinearLrSchedulerConfig{0.5, -0.5, 100}.init(); }, "LinearLrSchedulerConfig", "final_lr");
  expect_op_error([] { LinearLrSchedulerConfig{0.9, 0.1, 0}.init(); }, "LinearLrSchedulerConfig", "num_iters");
  expect_op_error([] { NoamLrSchedulerConfig{0.1}.with_warmup_steps(0).init(); }, "NoamLrSchedulerConfig",
                  "warmup_steps");
  expect_op_error([] { NoamLrSchedulerConfig{0.1}.with_model_size(0).init(); }, "NoamLrSchedulerConfig", "model_size");
}

}  // namespace
