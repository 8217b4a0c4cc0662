// The ranks of a collective test: real processes of
// tests/support/collective_worker_main.cpp on 127.0.0.1, started with the
// torchrun variables and waited for within a bound. Needs
// BURN_COLLECTIVE_WORKER_PATH (tests/CMakeLists.txt compiles it in).
#pragma once

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <gtest/gtest.h>

#include "child_process.hpp"

namespace burn::testing {

/// A port nothing listens on right now (the kernel's choice of an ephemeral one).
inline unsigned free_port() {
  namespace net = boost::asio;
  net::io_context ioc;
  net::ip::tcp::acceptor a(ioc, net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

/// A run's ranks; its directory (the ranks' logs and outputs) goes with it,
/// so that test runs leave nothing behind (a failing check shows the logs).
struct Ranks {
  std::filesystem::path dir;
  std::vector<std::unique_ptr<ChildProcess>> processes;
  std::vector<std::optional<int>> status;

  Ranks() = default;
  Ranks(Ranks&& other) noexcept
      : dir(std::exchange(other.dir, {})), processes(std::move(other.processes)), status(std::move(other.status)) {}
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;
  Ranks& operator=(Ranks&&) = delete;
  ~Ranks() {
    processes.clear();  // stops any rank still running before its files go
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }

  std::string log(std::size_t r) const {
    std::ifstream in(dir / ("rank" + std::to_string(r) + ".log"));
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::string logs() const {
    std::string all;
    for (std::size_t r = 0; r < processes.size(); ++r) all += "--- rank " + std::to_string(r) + ":\n" + log(r);
    return all;
  }
};

/// Starts `n` ranks of `args` and waits (at most `limit`) for all of them.
/// An argument "{dir}" becomes the run's own directory (where the logs go).
inline Ranks run_ranks(int n, const std::vector<std::string>& args, std::chrono::seconds limit,
                       const std::vector<std::string>& extra_env = {}) {
  static int counter = 0;
  Ranks ranks;
  ranks.dir = std::filesystem::temp_directory_path() /
              ("burn-collective-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(ranks.dir);
  std::filesystem::create_directories(ranks.dir);
  const unsigned port = free_port();
  for (int r = 0; r < n; ++r) {
    std::vector<std::string> argv{BURN_COLLECTIVE_WORKER_PATH};
    for (const std::string& a : args) argv.push_back(a == "{dir}" ? ranks.dir.string() : a);
    std::vector<std::string> env{"RANK=" + std::to_string(r), "LOCAL_RANK=" + std::to_string(r),
                                 "WORLD_SIZE=" + std::to_string(n), "MASTER_ADDR=127.0.0.1",
                                 "MASTER_PORT=" + std::to_string(port)};
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    ranks.processes.push_back(
        std::make_unique<ChildProcess>(argv, (ranks.dir / ("rank" + std::to_string(r) + ".log")).string(), env));
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (auto& p : ranks.processes) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    ranks.status.push_back(p->wait_for(std::max(left, std::chrono::milliseconds(0))));
  }
  return ranks;
}

/// Runs `args` on `n` ranks (as run_ranks) and expects every rank to exit 0:
/// each checked its own results, and the logs of all are shown otherwise.
inline void expect_ranks_pass(int n, const std::vector<std::string>& args, std::chrono::seconds limit,
                              const std::vector<std::string>& extra_env = {}) {
  const Ranks ranks = run_ranks(n, args, limit, extra_env);
  for (std::size_t r = 0; r < ranks.status.size(); ++r)
    EXPECT_EQ(ranks.status[r], 0) << "rank " << r << "\n" << ranks.logs();
}

/// Runs `scenario VICTIM` on `n` ranks for victim 0 (which also hosts the
/// rendezvous) and the last rank: the victim dies of SIGKILL, every other
/// rank exits 0 (it checked that its error named the victim), and the run
/// ends within 30 s under a 5 s collective timeout, not the test's limit.
inline void expect_killed_rank_named(int n, const std::string& scenario) {
  for (const int victim : {0, n - 1}) {
    const auto start = std::chrono::steady_clock::now();
    const Ranks ranks =
        run_ranks(n, {scenario, std::to_string(victim)}, std::chrono::seconds(60), {"BURN_COLLECTIVE_TIMEOUT_MS=5000"});
    for (std::size_t r = 0; r < ranks.status.size(); ++r) {
      if (static_cast<int>(r) == victim) {
        EXPECT_EQ(ranks.status[r], 128 + SIGKILL) << ranks.logs();
      } else {
        EXPECT_EQ(ranks.status[r], 0) << "rank " << r << " (rank " << victim << " killed)\n" << ranks.logs();
      }
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30)) << ranks.logs();
  }
}

}  // namespace burn::testing
