// The remote device against its peers, in one run on loopback: a burn-server
// is started on 127.0.0.1 hosting flex:0, and each row times the remote
// device next to what it is measured against (local flex, or a plain TCP
// socket copy for bandwidth), as a ratio.
//
//   burn-remote-bench [--quick]
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <burn/burn.hpp>

#include "mlp_step.hpp"
#include "socket_copy.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using namespace burn;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// Median seconds of `reps` runs of f after `warmup` runs.
double median_time(int warmup, int reps, const std::function<void()>& f) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    f();
    t.push_back(seconds_since(start));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

class Server {
 public:
  Server() {
    dir_ = std::filesystem::temp_directory_path() / ("burn-remote-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const std::string port_file = (dir_ / "port").string();
    std::vector<std::string> argv{BURN_SERVER_PATH, "--listen", "127.0.0.1:0", "--port-file",
                                  port_file,        "--device", "flex:0",      "--quiet"};
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], nullptr, nullptr, args.data(), environ) != 0)
      throw std::runtime_error("cannot start burn-server");
    for (int i = 0; i < 3000 && port_ == 0; ++i) {
      std::ifstream in(port_file);
      if (!(in >> port_)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (port_ == 0) throw std::runtime_error("burn-server did not start");
  }
  ~Server() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    std::filesystem::remove_all(dir_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  pid_t pid_ = -1;
  unsigned port_ = 0;
  std::filesystem::path dir_;
};

void row(const char* what, double ours, double peer, const char* peer_name) {
  std::printf("| %-44s | %12.3f | %12.3f %-14s | %6.2f |\n", what, ours, peer, peer_name, ours / peer);
}

}  // namespace

int run_bench(bool quick) {
  const int reps = quick ? 5 : 20;
  Server server;
  const Device remote = Device::remote_options(RemoteHost{server.address()}).device("flex:0").init();
  const Device local = Device::flex();
  std::printf("remote device %s, local %s\n\n", remote.to_string().c_str(), local.to_string().c_str());
  std::printf("| %-44s | %12s | %27s | %6s |\n", "workload", "remote", "peer", "ratio");
  std::printf("|%s|%s|%s|%s|\n", std::string(46, '-').c_str(), std::string(14, '-').c_str(),
              std::string(29, '-').c_str(), std::string(8, '-').c_str());

  // Latency: one add and a sync (a round trip for the remote device).
  {
    auto on = [&](const Device& d) {
      auto x = Tensor<1>::ones({16}, d);
      return median_time(50, quick ? 200 : 2000, [&] {
        x = x + 1.0;
        d.sync();
      });
    };
    row("add + sync latency (us)", on(remote) * 1e6, on(local) * 1e6, "local flex");
  }
  // Throughput of queued ops: 5000 adds, then one sync.
  {
    auto on = [&](const Device& d) {
      auto x = Tensor<1>::ones({16}, d);
      const int n = quick ? 1000 : 5000;
      const double t = median_time(1, quick ? 3 : 5, [&] {
        for (int i = 0; i < n; ++i) x = x + 1.0;
        d.sync();
      });
      return n / t;
    };
    row("queued adds per second", on(remote), on(local), "local flex");
  }
  // Bandwidth: 64 MiB up and down, against a plain socket copy. The three
  // are interleaved (a copy, an upload, a download, again), so that all of
  // them sample the same spells of this shared machine's speed, and each row
  // is the median of its runs. An upload is of data the caller hands over
  // (moved in, as the socket copy sends its buffer without copying it
  // first); the download ends with the tensor's bytes in the caller's hands.
  {
    const std::size_t bytes = std::size_t{64} << 20;
    const int runs = quick ? 3 : 9;
    const std::vector<float> values(bytes / sizeof(float), 1.5f);
    const TensorData data(values, {values.size()});
    std::vector<double> plain_runs, up_runs, down_runs;
    for (int i = 0; i < runs + 1; ++i) {
      const double copy = burn_bench::socket_copy_bandwidth(bytes);
      TensorData handed_over = data;
      auto start = Clock::now();
      auto t = Tensor<1>::from_data(std::move(handed_over), remote);
      remote.sync();
      const double up_seconds = seconds_since(start);
      start = Clock::now();
      (void)t.to_data();
      const double down_seconds = seconds_since(start);
      if (i == 0) continue;  // the first warms up
      plain_runs.push_back(copy / 1e6);
      up_runs.push_back(static_cast<double>(bytes) / up_seconds / 1e6);
      down_runs.push_back(static_cast<double>(bytes) / down_seconds / 1e6);
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double plain = median(plain_runs);
    row("64 MiB upload (MB/s)", median(up_runs), plain, "socket copy");
    row("64 MiB download (MB/s)", median(down_runs), plain, "socket copy");
  }
  // The MLP training step (784-1024-1024-10, batch 256): remote vs local.
  for (const auto& [name, shape] : {std::pair{"MLP step 784-1024-1024-10 b256 (ms)", burn_bench::MlpShape{}},
                                    std::pair{"MLP step 64-64-64-10 b16 (ms)", burn_bench::kSmallMlp}}) {
    auto on = [&, shape = shape](const Device& d) {
      d.seed(1);
      burn_bench::MlpStep step(d, shape);
      return median_time(3, reps, [&] { step.step(); }) * 1e3;
    };
    row(name, on(remote), on(local), "local flex");
  }
#if BURN_HAS_CAPTURE
  // The small step traced (burn::trace): the server keeps the recording and
  // each step is one command, against the same traced step on local flex.
  {
    auto on = [&](const Device& d) {
      d.seed(1);
      burn_bench::TracedMlpStep step(d, burn_bench::kSmallMlp);
      return median_time(3, reps, [&] { step.step(); }) * 1e3;
    };
    row("MLP step 64-64-64-10 b16, traced (ms)", on(remote), on(local), "local flex");
  }
#endif
  return 0;
}

int main(int argc, char** argv) {
  // Errors are caught so that Server's destructor stops the burn-server it
  // started (an uncaught exception would leave it running).
  try {
    return run_bench(argc > 1 && std::string(argv[1]) == "--quick");
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "burn-remote-bench: %s\n", e.what());
    return 1;
  }
}
