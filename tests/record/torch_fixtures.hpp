// Files PyTorch writes, made once per test process by Debian's python3-torch
// (fixtures/make_torch_pt_fixtures.py), for the torch.save and PyTorch-naming
// tests.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "record_test_util.hpp"

namespace burn::record::test {

inline const std::filesystem::path kTorchPtScript =
    std::filesystem::path(__FILE__).parent_path() / "fixtures" / "make_torch_pt_fixtures.py";

/// The interpreter: $BURN_TEST_PYTHON, else /usr/bin/python3 (Debian's, which
/// has python3-torch; scripts/install-deps.sh installs it).
inline std::string torch_python() {
  const char* env = std::getenv("BURN_TEST_PYTHON");
  return env && *env ? env : "/usr/bin/python3";
}

inline std::string shell_quoted(const std::string& s) { return "'" + s + "'"; }

/// Runs `python3 make_torch_pt_fixtures.py <args>`; true on success.
inline bool run_torch_script(const std::string& args) {
  const std::string cmd =
      shell_quoted(torch_python()) + " " + shell_quoted(kTorchPtScript.string()) + " " + args + " > /dev/null";
  return std::system(cmd.c_str()) == 0;
}

/// The fixture directory, or nullopt with `why` set when torch cannot make it.
struct TorchFixtures {
  std::unique_ptr<TempDir> dir;
  std::string why;
  std::filesystem::path operator/(const std::string& name) const { return dir->path() / name; }
};

inline const TorchFixtures& torch_fixtures() {
  static const TorchFixtures fixtures = [] {
    TorchFixtures f{std::make_unique<TempDir>(), ""};
    const std::string probe = shell_quoted(torch_python()) + " -c 'import torch' > /dev/null 2>&1";
    if (std::system(probe.c_str()) != 0)
      f.why = torch_python() +
              " cannot import torch: install python3-torch (scripts/install-deps.sh does) or set BURN_TEST_PYTHON";
    else if (!run_torch_script("make " + shell_quoted(f.dir->path().string())))
      f.why = "make_torch_pt_fixtures.py make failed (its error is above)";
    return f;
  }();
  return fixtures;
}

}  // namespace burn::record::test

/// Skips the calling test, with the reason, when PyTorch is not there to
/// make the fixtures.
#define BURN_REQUIRE_TORCH_FIXTURES()                                                     \
  do {                                                                                    \
    if (!::burn::record::test::torch_fixtures().why.empty())                              \
      GTEST_SKIP() << "PyTorch fixtures: " << ::burn::record::test::torch_fixtures().why; \
  } while (false)
