// Helpers for the device suite: an environment-variable guard and the
// fresh-process runner for tests that change process-global device state.
#pragma once

#include <gtest/gtest.h>

#include <burn/burn.hpp>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

namespace burn::device_tests {

/// Sets (or unsets, with nullopt) an environment variable for one scope and
/// restores the previous value afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// The DeviceError that `body` throws; fails the test if it throws none.
template <class F>
std::optional<DeviceError> device_error_of(F&& body) {
  try {
    body();
  } catch (const DeviceError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a burn::DeviceError, got: " << e.what();
    return std::nullopt;
  }
  ADD_FAILURE() << "expected a burn::DeviceError";
  return std::nullopt;
}

/// A failed check inside a child process (see run_in_child).
struct ChildFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws ChildFailure with `what` unless `ok`.
inline void require(bool ok, const std::string& what) {
  if (!ok) throw ChildFailure(what);
}

/// Runs `body` and exits the process: 0 when it returns, 1 (with the reason
/// on stderr, which gtest prints) when it throws. Used as the statement of
/// EXPECT_EXIT so that settings changes happen in a fresh process.
template <class F>
[[noreturn]] void run_in_child(F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    std::cerr << "child check failed: " << e.what() << std::endl;
    std::exit(1);
  }
  std::exit(0);
}

}  // namespace burn::device_tests

/// Runs `body` in a freshly started copy of the test binary ("threadsafe"
/// death-test style re-executes it instead of forking, so no tensor created
/// earlier in this process has locked the device settings there) and expects
/// it to exit with 0.
/// Variadic so that commas in the lambda (Tensor<2, Int>) need no parentheses.
#define BURN_EXPECT_IN_FRESH_PROCESS(...)                                                           \
  do {                                                                                              \
    GTEST_FLAG_SET(death_test_style, "threadsafe");                                                 \
    EXPECT_EXIT(::burn::device_tests::run_in_child(__VA_ARGS__), ::testing::ExitedWithCode(0), ""); \
  } while (0)
