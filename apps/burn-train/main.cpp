// burn-train: trains a CNN on Fashion-MNIST. See `burn-train --help`.
#include <fmt/format.h>
#include <unistd.h>

#include <burn/error.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data.hpp"
#include "options.hpp"
#include "trainer.hpp"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace {

// --denormals flush (the default): floats below 2^-126 (denormals) are
// flushed to zero when produced and read as zero (FTZ and DAZ), on this
// thread and on every thread it starts later (the compute pool's, the data
// loaders': a new thread inherits the mode), as TensorFlow and XLA compute
// on the CPU. Adam's first moment of a weight whose gradient stays zero (a
// dead unit's) decays through the denormal range over a few hundred steps,
// and arithmetic on denormals takes a slow microcode path: a full
// Fashion-MNIST epoch on `cpu` went from 16.4 s (first) and 19.2 s (second)
// to 16.1 s and 17.1 s, with the same test accuracy. A library setting
// would change the numbers of every program; a training job may choose it.
// A remote device computes in its server, which keeps denormals.
void flush_denormals() {
#if defined(__SSE__) || defined(__x86_64__)
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ (bit 15) | DAZ (bit 6)
#endif
}

// burn-run next to this executable (installed: both in bin/; a build tree:
// apps/burn-run/), else the one on PATH.
std::string burn_run_path() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const auto& candidate :
         {self.parent_path() / "burn-run", self.parent_path().parent_path() / "burn-run" / "burn-run"})
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "burn-run";
}

// --nproc N: the same command line, without --nproc, as N ranks of burn-run.
// Returns only when burn-run cannot be started.
int relaunch_under_burn_run(int argc, char** argv, std::size_t nproc) {
  const std::string launcher = burn_run_path();
  std::vector<std::string> args{launcher, "--nproc", std::to_string(nproc), "--", argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--nproc") {
      ++i;  // and its value
      continue;
    }
    if (arg.starts_with("--nproc=")) continue;
    args.emplace_back(arg);
  }
  std::vector<char*> c_args;
  c_args.reserve(args.size() + 1);
  for (auto& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  std::fflush(stdout);
  ::execvp(c_args[0], c_args.data());
  fmt::print(stderr,
             "burn-train: error: --nproc needs burn-run, which could not be started ({}: {}); install it next to "
             "burn-train or on PATH, or start the ranks yourself (docs/distributed.md)\n",
             launcher, std::strerror(errno));
  return burn_train::kRuntimeError;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace burn_train;
  std::optional<Options> options;
  try {
    options = parse_options(argc, argv);
  } catch (const UsageError& e) {
    fmt::print(stderr, "burn-train: {}\nTry 'burn-train --help' for the options.\n", e.what());
    return kUsageError;
  }
  if (!options) return kSuccess;  // --help
  if (options->denormals == "flush") flush_denormals();
  if (options->nproc > 1) {
    if (std::getenv("RANK") != nullptr) {
      fmt::print(stderr,
                 "burn-train: --nproc starts the ranks itself, but this process is already rank {} of a job "
                 "(RANK is set); leave out --nproc under burn-run or torchrun\n",
                 std::getenv("RANK"));
      return kUsageError;
    }
    return relaunch_under_burn_run(argc, argv, options->nproc);
  }
  try {
    return run_training(*options);
  } catch (const UsageError& e) {  // a flag the run cannot honour, found before training
    fmt::print(stderr, "burn-train: {}\nTry 'burn-train --help' for the options.\n", e.what());
    return kUsageError;
  } catch (const DataMissingError& e) {
    fmt::print(stderr, "burn-train: error: {}\n", e.what());
    return kDataMissing;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    // End a progress bar's unfinished line first; burn::Error messages start with "[op] ".
    if (::isatty(::fileno(stdout))) std::fputc('\n', stderr);
    fmt::print(stderr, "burn-train: error: {}\n", e.what());
    return kRuntimeError;
  }
}
