// burn-train: trains a CNN on Fashion-MNIST. See `burn-train --help`.
#include <fmt/format.h>
#include <unistd.h>

#include <burn/error.hpp>
#include <cstdio>
#include <exception>
#include <optional>

#include "data.hpp"
#include "options.hpp"
#include "trainer.hpp"

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
  try {
    return run_training(*options);
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
