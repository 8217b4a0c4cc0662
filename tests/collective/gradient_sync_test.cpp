// Data-parallel training between real processes on 127.0.0.1: ranks that
// each train on their share of every batch with GradientSync must end where
// one process training on the whole batches ends (tests/support/
// data_parallel_model.hpp is the model and data of both).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <burn/burn.hpp>
#include <collective_ranks.hpp>
#include <data_parallel_model.hpp>
#include <gtest/gtest.h>

namespace {

using burn::testing::expect_ranks_pass;
using burn::testing::Ranks;
using burn::testing::run_ranks;
using namespace burn;
namespace dp = burn::testing::data_parallel;

/// One process, whole batches, plain backward: the trajectory data-parallel
/// training must reproduce. Starts from rank 0's initial values.
std::vector<float> single_process_params(const std::string& optimizer) {
  const Device device = Device::flex().autodiff();
  dp::Mlp model = dp::make_mlp(device, 100);
  auto optim = dp::make_optimizer(optimizer);
  for (int step = 0; step < dp::kSteps; ++step) {
    const auto [x, y] = dp::batch_rows(step, 0, dp::kBatch, device);
    const Tensor<1> loss = nn::loss::MseLoss{}.forward(model.forward(x), y);
    Gradients grads = loss.backward();
    model = optim.step(dp::learning_rate(optimizer), model, optim::GradientsParams::from_grads(grads, model));
  }
  return dp::flat_params(model);
}

/// The largest element-wise difference relative to the largest magnitude.
double relative_difference(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return diff / scale;
}

class DataParallelTraining : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(DataParallelTraining, EndsWithTheParametersOfOneProcessOnTheWholeBatch) {
  const auto& [optimizer, world] = GetParam();
  // Buckets of 256 bytes: several per step, started while backward runs.
  const Ranks ranks = run_ranks(world, {"train", optimizer, "{dir}", "256"}, std::chrono::seconds(180));
  for (std::size_t r = 0; r < ranks.status.size(); ++r)
    ASSERT_EQ(ranks.status[r], 0) << "rank " << r << "\n" << ranks.logs();

  const std::vector<float> want = single_process_params(optimizer);
  const std::vector<float> initial = dp::flat_params(dp::make_mlp(Device::flex(), 100));
  // The run moved the parameters well beyond the tolerance.
  ASSERT_GT(relative_difference(initial, want), 1e-2);
  const std::vector<float> rank0 = dp::read_floats((ranks.dir / "rank0.params").string());
  for (int r = 0; r < world; ++r) {
    const std::vector<float> got = dp::read_floats((ranks.dir / ("rank" + std::to_string(r) + ".params")).string());
    ASSERT_EQ(got.size(), want.size()) << "rank " << r;
    EXPECT_LE(relative_difference(got, want), 1e-5) << "rank " << r << " against one process";
    // The ranks took identical steps: bit-identical parameters.
    EXPECT_EQ(got, rank0) << "rank " << r << " against rank 0";
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, DataParallelTraining,
                         ::testing::Combine(::testing::Values("sgd", "adam"), ::testing::Values(2, 4)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
                         });

/// Replicas on two devices of one process, each driven by its own thread,
/// synchronised as ranks of processes are.
TEST(DataParallelThreads, ReplicasOnTwoDevicesOfOneProcessTrainAsOneProcess) {
#if BURN_HAS_NDARRAY
  const std::vector<Device> devices{Device::flex(), Device::ndarray()};
#else
  const std::vector<Device> devices{Device::flex(), Device::flex()};
#endif
  std::vector<collective::ProcessGroup> groups = collective::ProcessGroup::create_local(2);
  ASSERT_EQ(groups.size(), 2U);
  std::vector<std::vector<float>> results(2);
  std::vector<std::exception_ptr> errors(2);
  std::vector<std::thread> replicas;
  for (std::size_t i = 0; i < 2; ++i) {
    replicas.emplace_back([&, i] {
      try {
        const Device device = devices[i].autodiff();
        collective::GradientSync sync(groups[i], {256, true});
        EXPECT_EQ(sync.group().rank(), static_cast<int>(i));
        dp::Mlp model = sync.broadcast_parameters(dp::make_mlp(device, 100 + i));
        auto optim = dp::make_optimizer("adam");
        const std::size_t rows = dp::kBatch / 2;
        for (int step = 0; step < dp::kSteps; ++step) {
          const auto [x, y] = dp::batch_rows(step, rows * i, rows, device);
          const Tensor<1> loss = nn::loss::MseLoss{}.forward(model.forward(x), y);
          model = optim.step(dp::learning_rate("adam"), model, sync.backward(loss, model));
        }
        results[i] = dp::flat_params(model);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& t : replicas) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  const std::vector<float> want = single_process_params("adam");
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(results[i].size(), want.size());
    EXPECT_LE(relative_difference(results[i], want), 1e-5) << devices[i].to_string();
  }
}

TEST(DataParallelThreads, ALocalGroupNeedsARank) {
  EXPECT_THROW((void)collective::ProcessGroup::create_local(0), ConfigurationError);
}

class GradientSyncRanks : public ::testing::TestWithParam<int> {};

TEST_P(GradientSyncRanks, ParametersOnlySomeRanksReachAreAveragedAndUnreachedOnesHaveNoGradient) {
  // 64-byte buckets: the bucket of the parameter rank 1 never reaches waits
  // while later ones complete (gradients out of bucket order).
  expect_ranks_pass(GetParam(), {"partial", "64"}, std::chrono::seconds(120));
}

TEST_P(GradientSyncRanks, ARankKilledMidTrainingMakesTheOthersThrowNamingIt) {
  burn::testing::expect_killed_rank_named(GetParam(), "die-in-step");
}

INSTANTIATE_TEST_SUITE_P(Ranks, GradientSyncRanks, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
