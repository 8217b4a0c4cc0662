// All-reduce over burn::collective (Gloo, TCP on loopback) against a plain
// socket copy, in one run: the launcher measures the socket copy, starts
// the ranks (this same program, with RANK/WORLD_SIZE/MASTER_* set) and
// prints one row per size, 1 KiB to 256 MiB of f32. Then the overlap of
// gradient synchronisation with backward: the step time of a data-parallel
// MLP against its compute alone, and the share of the communication that
// GradientSync hid behind backward.
//
//   build/full/bench/burn-collective-bench            # 2 ranks
//   build/full/bench/burn-collective-bench --nproc 4
//
// Bus bandwidth is NCCL's measure for a ring all-reduce: each rank sends
// and receives 2 (n - 1) / n of the data, so busbw = bytes * 2 (n - 1) / n /
// time, comparable with the bandwidth of one link.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <burn/burn.hpp>

#include "socket_copy.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
namespace coll = burn::collective;

const std::vector<std::size_t> kSizes{std::size_t{1} << 10, std::size_t{16} << 10, std::size_t{256} << 10,
                                      std::size_t{4} << 20, std::size_t{64} << 20, std::size_t{256} << 20};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// The overlap model: 784 -> 1024 -> 1024 -> 10, 1.9 M parameters (7.5 MB
/// of f32 gradients).
struct Mlp {
  burn::nn::Linear fc1, fc2, fc3;
  BURN_MODULE(fc1, fc2, fc3)
  burn::Tensor<2> forward(const burn::Tensor<2>& x) const {
    return fc3.forward(burn::activation::relu(fc2.forward(burn::activation::relu(fc1.forward(x)))));
  }
};

struct StepTimes {
  double step = 0, communication = 0, exposed = 0;
};

/// Median step of training `steps` batches of 64; `sync` null: compute
/// alone (this rank's own gradients).
StepTimes time_steps(coll::GradientSync* sync, int steps) {
  const burn::Device device = burn::Device::flex().autodiff();
  device.seed(1);
  Mlp model{burn::nn::LinearConfig{784, 1024}.init(device), burn::nn::LinearConfig{1024, 1024}.init(device),
            burn::nn::LinearConfig{1024, 10}.init(device)};
  auto optim = burn::optim::SgdConfig{}.init();
  const auto x = burn::Tensor<2>::random({64, 784}, burn::Distribution::uniform(-1, 1), device);
  const auto y = burn::Tensor<2>::random({64, 10}, burn::Distribution::uniform(-1, 1), device);
  std::vector<StepTimes> times;
  for (int i = 0; i < steps + 2; ++i) {
    if (sync) sync->group().barrier();
    const auto start = Clock::now();
    const burn::Tensor<1> loss = burn::nn::loss::MseLoss{}.forward(model.forward(x), y);
    burn::optim::GradientsParams grads;
    if (sync) {
      grads = sync->backward(loss, model);
    } else {
      burn::Gradients g = loss.backward();
      grads = burn::optim::GradientsParams::from_grads(g, model);
    }
    model = optim.step(0.001, model, std::move(grads));
    (void)model.fc1.weight.val().to_data();  // the step's work is done
    StepTimes t{seconds_since(start), 0, 0};
    if (sync) t = {t.step, sync->last_stats().communication_seconds, sync->last_stats().exposed_seconds};
    if (i >= 2) times.push_back(t);
  }
  std::sort(times.begin(), times.end(), [](const StepTimes& a, const StepTimes& b) { return a.step < b.step; });
  return times[times.size() / 2];
}

// A rank: times all_reduce at each size; rank 0 writes "bytes seconds" lines.
// Then the overlap runs; rank 0 writes "name step communication exposed" lines.
int rank_main(const char* results) {
  coll::ProcessGroup group = coll::ProcessGroup::from_env();
  std::ofstream out;
  if (group.rank() == 0) out.open(results);
  for (const std::size_t bytes : kSizes) {
    burn::TensorData data(std::vector<float>(bytes / sizeof(float), 1.0f), {bytes / sizeof(float)});
    const int reps = bytes <= (std::size_t{256} << 10) ? 200 : bytes <= (std::size_t{4} << 20) ? 20 : 5;
    std::vector<double> times;
    for (int i = 0; i < reps + 2; ++i) {
      group.barrier();
      const auto start = Clock::now();
      data = group.all_reduce_data(std::move(data), coll::ReduceOp::Max);  // Max: the values stay 1
      if (i >= 2) times.push_back(seconds_since(start));
    }
    std::sort(times.begin(), times.end());
    if (group.rank() == 0) out << bytes << ' ' << times[times.size() / 2] << '\n';
  }
  out.close();

  // One compute thread per rank: the ranks share this machine's cores.
  burn::Device::flex().set_num_threads(1);
  std::ofstream overlap;
  if (group.rank() == 0) overlap.open(std::string(results) + ".overlap");
  const auto report = [&](const char* name, const StepTimes& t) {
    if (group.rank() == 0) overlap << name << ' ' << t.step << ' ' << t.communication << ' ' << t.exposed << '\n';
  };
  group.barrier();
  report("compute-alone", time_steps(nullptr, 10));
  struct Mode {
    const char* name;
    std::size_t bucket_bytes;
    bool overlap;
  };
  for (const Mode m :
       {Mode{"after-backward", std::size_t{25} << 20, false}, Mode{"overlap-25MiB", std::size_t{25} << 20, true},
        Mode{"overlap-1MiB", std::size_t{1} << 20, true}}) {
    coll::GradientSync sync(group, {m.bucket_bytes, m.overlap});
    report(m.name, time_steps(&sync, 10));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (const char* results = std::getenv("BURN_COLLECTIVE_BENCH_RESULTS"); results && std::getenv("RANK"))
      return rank_main(results);

    int nproc = 2;
    if (argc == 3 && std::string(argv[1]) == "--nproc") nproc = std::max(2, std::atoi(argv[2]));
    std::vector<double> copies;
    for (int i = 0; i < 5; ++i) copies.push_back(burn_bench::socket_copy_bandwidth(std::size_t{64} << 20));
    std::sort(copies.begin(), copies.end());
    const double copy = copies[copies.size() / 2];

    const auto dir = std::filesystem::temp_directory_path() / ("burn-collective-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string results = (dir / "results").string();
    unsigned port = 0;
    {
      namespace net = boost::asio;
      net::io_context ioc;
      net::ip::tcp::acceptor a(ioc, net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
      port = a.local_endpoint().port();
    }
    std::vector<pid_t> pids;
    for (int r = 0; r < nproc; ++r) {
      std::vector<std::string> env{"RANK=" + std::to_string(r), "WORLD_SIZE=" + std::to_string(nproc),
                                   "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
                                   "BURN_COLLECTIVE_BENCH_RESULTS=" + results};
      std::vector<char*> envp;
      for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry(*e);
        const bool ours = std::any_of(env.begin(), env.end(), [&](const std::string& mine) {
          return entry.compare(0, mine.find('=') + 1, mine, 0, mine.find('=') + 1) == 0;
        });
        if (!ours) envp.push_back(*e);
      }
      for (auto& e : env) envp.push_back(e.data());
      envp.push_back(nullptr);
      pid_t pid = -1;
      if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) != 0)
        throw std::runtime_error("cannot start a rank");
      pids.push_back(pid);
    }
    int failed = 0;
    for (const pid_t pid : pids) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    if (failed) throw std::runtime_error(std::to_string(failed) + " rank(s) failed");

    std::printf("all_reduce (f32, Gloo ring) over %d ranks on loopback; socket copy %.0f MB/s\n\n", nproc, copy / 1e6);
    std::printf("| %-10s | %12s | %14s | %22s |\n", "size", "time (ms)", "busbw (MB/s)", "busbw / socket copy");
    std::printf("|------------|--------------|----------------|------------------------|\n");
    std::ifstream in(results);
    std::size_t bytes = 0;
    double seconds = 0;
    while (in >> bytes >> seconds) {
      const double busbw = static_cast<double>(bytes) * 2.0 * (nproc - 1) / nproc / seconds;
      const std::string size =
          bytes >= (std::size_t{1} << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
      std::printf("| %-10s | %12.3f | %14.1f | %22.2f |\n", size.c_str(), seconds * 1e3, busbw / 1e6, busbw / copy);
    }

    std::printf("\nData-parallel MLP step (784-1024-1024-10, batch 64 per rank, SGD, 1 compute thread per rank)\n\n");
    std::printf("| %-16s | %10s | %15s | %13s | %8s |\n", "gradients", "step (ms)", "all-reduce (ms)", "exposed (ms)",
                "hidden");
    std::printf("|------------------|------------|-----------------|---------------|----------|\n");
    std::ifstream lines(results + ".overlap");
    std::string name;
    double step = 0, comm = 0, exposed = 0;
    while (lines >> name >> step >> comm >> exposed) {
      if (comm == 0) {
        std::printf("| %-16s | %10.1f | %15s | %13s | %8s |\n", name.c_str(), step * 1e3, "-", "-", "-");
      } else {
        std::printf("| %-16s | %10.1f | %15.1f | %13.1f | %7.0f%% |\n", name.c_str(), step * 1e3, comm * 1e3,
                    exposed * 1e3, 100.0 * std::max(0.0, 1.0 - exposed / comm));
      }
    }
    std::filesystem::remove_all(dir);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "burn-collective-bench: %s\n", e.what());
    return 1;
  }
}
