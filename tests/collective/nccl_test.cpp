// The NCCL engine. Here, without a GPU, what can be checked is that asking
// for it says clearly why it cannot run; on a machine with CUDA devices the
// collectives run on them (one rank per GPU) and are checked by value.
#include <chrono>
#include <string>
#include <vector>

#include <burn/burn.hpp>
#include <collective_ranks.hpp>
#include <gtest/gtest.h>

namespace {

using namespace burn;
namespace coll = burn::collective;

coll::GroupOptions nccl_options() {
  coll::GroupOptions o;
  o.engine = coll::Engine::Nccl;
  o.master_port = static_cast<std::uint16_t>(burn::testing::free_port());
  o.timeout = std::chrono::seconds(10);
  return o;
}

TEST(Nccl, AGroupThatCannotUseNcclSaysWhy) {
#if !BURN_HAS_NCCL
  try {
    (void)coll::ProcessGroup::create(nccl_options());
    FAIL() << "an NCCL group was created by a build without NCCL";
  } catch (const ConfigurationError& e) {
    EXPECT_NE(std::string(e.what()).find("has none"), std::string::npos) << e.what();
  }
#else
  if (coll::nccl_device_count() > 0)
    GTEST_SKIP() << "this machine has a CUDA device, so there is no missing-GPU error to see";
  try {
    (void)coll::ProcessGroup::create(nccl_options());
    FAIL() << "an NCCL group was created without a CUDA device";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("BURN_COLLECTIVE_ENGINE=gloo"), std::string::npos) << e.what();
  }
#endif
}

TEST(Nccl, OneRankReducesBroadcastsAndGathersOnItsGpu) {
  if (coll::nccl_device_count() == 0)
    GTEST_SKIP() << (BURN_HAS_NCCL ? "no CUDA device: NCCL runs on GPUs and this machine has none"
                                   : "this build has no NCCL (configured without the CUDA toolkit's nccl.h)");
  coll::ProcessGroup group = coll::ProcessGroup::create(nccl_options());
  EXPECT_EQ(group.engine(), coll::Engine::Nccl);
  const auto t = Tensor<1>::from_floats({1.0, -2.0, 3.5}, Device::flex());
  group.all_reduce(t, coll::ReduceOp::Sum).to_data().assert_eq(t.to_data());
  group.all_reduce(t, coll::ReduceOp::Mean).to_data().assert_eq(t.to_data());
  group.broadcast(t, 0).to_data().assert_eq(t.to_data());
  const auto rows = Tensor<2>::from_floats({{1.0, 2.0}}, Device::flex());
  group.all_gather(rows).to_data().assert_eq(rows.to_data());
  const TensorData half = TensorData(std::vector<float>{1, 2, 3}, {3}).convert(DType::F16);
  EXPECT_EQ(group.all_reduce_data(half, coll::ReduceOp::Sum), half);
}

TEST(Nccl, EveryCollectiveBetweenOneRankPerGpu) {
  const int gpus = coll::nccl_device_count();
  if (gpus < 2)
    GTEST_SKIP() << "NCCL needs one GPU per rank and this machine has " << gpus
                 << "; the ranks' checks run where there are two or more";
  const int n = std::min(gpus, 4);
  burn::testing::expect_ranks_pass(n, {"values"}, std::chrono::seconds(120), {"BURN_COLLECTIVE_ENGINE=nccl"});
}

TEST(Nccl, FromEnvRejectsAnUnknownEngine) {
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "1", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(burn::testing::free_port()).c_str(), 1);
  ::setenv("BURN_COLLECTIVE_ENGINE", "mpi", 1);
  try {
    (void)coll::ProcessGroup::from_env();
    ADD_FAILURE() << "BURN_COLLECTIVE_ENGINE=mpi was accepted";
  } catch (const ConfigurationError& e) {
    EXPECT_NE(std::string(e.what()).find("use gloo (the default) or nccl"), std::string::npos) << e.what();
  }
  for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "BURN_COLLECTIVE_ENGINE"})
    ::unsetenv(name);
}

}  // namespace
