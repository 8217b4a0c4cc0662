// Process groups between real processes on 127.0.0.1: each test starts the
// ranks (tests/support/collective_worker_main.cpp), which check the values
// themselves, and waits for them within a bound.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include <burn/burn.hpp>
#include <child_process.hpp>
#include <collective_ranks.hpp>
#include <gtest/gtest.h>

namespace {

using burn::testing::ChildProcess;
using burn::testing::expect_ranks_pass;
using burn::testing::free_port;
namespace coll = burn::collective;

class ProcessGroupTest : public ::testing::TestWithParam<int> {};

TEST_P(ProcessGroupTest, EveryCollectiveGivesTheValuesComputedByHand) {
  expect_ranks_pass(GetParam(), {"values"}, std::chrono::seconds(120));
}

TEST_P(ProcessGroupTest, RanksThatPassDifferentShapesGetAnErrorNamingTheRank) {
  expect_ranks_pass(GetParam(), {"mismatch"}, std::chrono::seconds(120));
}

TEST_P(ProcessGroupTest, AKilledRankMakesTheOthersThrowNamingItWithinTheTimeout) {
  burn::testing::expect_killed_rank_named(GetParam(), "die");
}

INSTANTIATE_TEST_SUITE_P(Ranks, ProcessGroupTest, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

/// burn-run with `args`; its exit status and its output.
std::pair<std::optional<int>, std::string> burn_run(const std::vector<std::string>& args) {
  static int counter = 0;
  const auto log = std::filesystem::temp_directory_path() /
                   ("burn-run-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".log");
  std::filesystem::remove(log);
  std::vector<std::string> argv{BURN_RUN_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess run(argv, log.string());
  const auto status = run.wait_for(std::chrono::seconds(120));
  std::ifstream in(log);
  std::string out{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::filesystem::remove(log);
  return {status, out};
}

TEST(BurnRun, StartsTheRanksWithTheirEnvironmentAndPrefixesTheirOutput) {
  const auto [status, out] =
      burn_run({"--nproc", "3", "--", "/bin/sh", "-c",
                "echo \"rank $RANK of $WORLD_SIZE, local $LOCAL_RANK of $LOCAL_WORLD_SIZE, at $MASTER_ADDR\"; "
                "printf 'no newline'"});
  EXPECT_EQ(status, 0) << out;
  for (int r = 0; r < 3; ++r) {
    const std::string rank = std::to_string(r);
    EXPECT_NE(out.find("[rank " + rank + "] rank " + rank + " of 3, local " + rank + " of 3, at 127.0.0.1\n"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("[rank " + rank + "] no newline\n"), std::string::npos) << out;
  }
}

TEST(BurnRun, RunsAProcessGroupAndReportsAKilledRank) {
  EXPECT_EQ(burn_run({"--nproc", "2", "--", BURN_COLLECTIVE_WORKER_PATH, "values"}).first, 0);
  const auto [status, out] = burn_run({"--nproc", "3", "--", BURN_COLLECTIVE_WORKER_PATH, "die", "2"});
  EXPECT_EQ(status, 128 + SIGKILL) << out;
  EXPECT_NE(out.find("burn-run: rank 2 exited with status 137; stopping the others"), std::string::npos) << out;
}

TEST(BurnRun, StopsTheOthersWhenARankFails) {
  // Rank 1 fails at once (a bad scenario: exit 2); rank 0 would wait for
  // its peer until the timeout, but is stopped.
  const auto start = std::chrono::steady_clock::now();
  const auto [status, out] = burn_run({"--nproc", "2", "--timeout-ms", "60000", "--", "/bin/sh", "-c",
                                       "if [ \"$RANK\" = 1 ]; then echo \"rank $RANK of $WORLD_SIZE at "
                                       "$MASTER_ADDR\"; exit 7; fi; sleep 60"});
  EXPECT_EQ(status, 7) << out;
  EXPECT_NE(out.find("[rank 1] rank 1 of 2 at 127.0.0.1"), std::string::npos) << out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20)) << out;
}

TEST(BurnRun, RefusesBadFlagsWithUsage) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--nproc", "0", "--", "true"},
                                                                {"--nproc", "2"},
                                                                {"--bogus", "1", "--", "true"},
                                                                {"--", "true"}}) {
    const auto [status, out] = burn_run(args);
    EXPECT_EQ(status, 2) << out;
    EXPECT_NE(out.find("usage: burn-run --nproc N"), std::string::npos) << out;
  }
  const auto [status, out] = burn_run({"--nproc", "1", "--", "/nonexistent/program"});
  EXPECT_EQ(status, 127) << out;
  EXPECT_NE(out.find("cannot start /nonexistent/program"), std::string::npos) << out;
}

TEST(ProcessGroup, AllReducesAHundredMillionElements) {
  expect_ranks_pass(2, {"large", "100000000"}, std::chrono::seconds(300));
}

TEST(ProcessGroup, RanksThatDisagreeOnTheWorldSizeGetAClearError) {
  const unsigned port = free_port();
  const auto dir = std::filesystem::temp_directory_path() / ("burn-collective-size-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<std::string> common{"MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
                                        "BURN_COLLECTIVE_TIMEOUT_MS=5000"};
  auto env = [&](int rank, int size) {
    auto e = common;
    e.push_back("RANK=" + std::to_string(rank));
    e.push_back("WORLD_SIZE=" + std::to_string(size));
    return e;
  };
  ChildProcess rank0({BURN_COLLECTIVE_WORKER_PATH, "values"}, (dir / "rank0.log").string(), env(0, 2));
  ChildProcess rank1({BURN_COLLECTIVE_WORKER_PATH, "values"}, (dir / "rank1.log").string(), env(1, 3));
  EXPECT_EQ(rank1.wait_for(std::chrono::seconds(30)), 3);
  EXPECT_NE(rank0.wait_for(std::chrono::seconds(30)), 0);  // its peer never came
  std::ifstream in(dir / "rank1.log");
  const std::string log{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_NE(log.find("WORLD_SIZE is 3 on rank 1 but 2 on rank 0"), std::string::npos) << log;
  std::filesystem::remove_all(dir);
}

TEST(ProcessGroup, AnUnreachableMasterIsAClearErrorWithinTheTimeout) {
  coll::GroupOptions o;
  o.rank = 1;
  o.world_size = 2;
  o.master_port = static_cast<std::uint16_t>(free_port());  // nobody serves it
  o.timeout = std::chrono::milliseconds(1500);
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)coll::ProcessGroup::create(o);
    FAIL() << "create returned without a master";
  } catch (const burn::ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find("could not be reached within 1500 ms"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is rank 0 running"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(ProcessGroup, FromEnvNamesAMissingOrMalformedVariable) {
  ::unsetenv("RANK");
  ::setenv("WORLD_SIZE", "2", 1);
  try {
    (void)coll::ProcessGroup::from_env();
    FAIL() << "from_env without RANK";
  } catch (const burn::ConfigurationError& e) {
    EXPECT_NE(std::string(e.what()).find("RANK is not set"), std::string::npos) << e.what();
  }
  ::setenv("RANK", "2", 1);
  try {
    (void)coll::ProcessGroup::from_env();
    FAIL() << "from_env with RANK out of range";
  } catch (const burn::ConfigurationError& e) {
    EXPECT_NE(std::string(e.what()).find("RANK=\"2\" is not a whole number from 0 to 1"), std::string::npos)
        << e.what();
  }
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
}

TEST(ProcessGroup, OneRankIsAGroupOfItself) {
  coll::GroupOptions o;
  o.master_port = static_cast<std::uint16_t>(free_port());
  coll::ProcessGroup group = coll::ProcessGroup::create(o);
  EXPECT_EQ(group.rank(), 0);
  EXPECT_EQ(group.world_size(), 1);
  const auto t = burn::Tensor<1>::from_floats({1.0, -2.0, 3.5}, burn::Device::flex());
  EXPECT_EQ(group.all_reduce(t, coll::ReduceOp::Mean).to_data().to_vec<float>(),
            (std::vector<float>{1.0f, -2.0f, 3.5f}));
  EXPECT_EQ(group.all_gather(t).to_data().to_vec<float>(), (std::vector<float>{1.0f, -2.0f, 3.5f}));
  group.barrier();
  try {
    (void)group.broadcast(t, 1);
    FAIL() << "a broadcast from rank 1 of a group of one";
  } catch (const burn::Error& e) {
    EXPECT_NE(std::string(e.what()).find("root 1 is not a rank of this group"), std::string::npos) << e.what();
  }
}

}  // namespace
