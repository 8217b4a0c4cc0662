// A real burn-server process for a test: started on 127.0.0.1 with an
// ephemeral port, stopped (SIGTERM, then SIGKILL) when the object goes.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "child_process.hpp"

namespace burn::testing {

/// burn-server on 127.0.0.1 with a free port.
class ServerProcess {
 public:
  /// `extra`: more burn-server options (--device flex:0, --token-file F, ...).
  explicit ServerProcess(std::vector<std::string> extra = {"--device", "flex:0"}) {
    dir_ = std::filesystem::temp_directory_path() /
           ("burn-server-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::create_directories(dir_);
    std::vector<std::string> argv{BURN_SERVER_PATH, "--listen", "127.0.0.1:0", "--port-file", (dir_ / "port").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_.emplace(argv, log_path());
    // Bounded: the server writes its port file once it listens.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(dir_ / "port");
      if (in >> port_) break;
      if (process_->wait_for(std::chrono::milliseconds(20)))
        throw std::runtime_error("burn-server exited at start-up; its log: " + log());
    }
    if (port_ == 0) throw std::runtime_error("burn-server did not start within 30 s; its log: " + log());
  }
  /// Stops the server (SIGTERM). A server that does not exit cleanly (a
  /// sanitizer's report, a crash, a hang on shutdown) fails the test, with
  /// its log; one the test killed on purpose is only reaped.
  ~ServerProcess() {
    if (process_->wait_for(std::chrono::milliseconds(0)) == std::nullopt) {
      process_->kill(SIGTERM, std::chrono::milliseconds(20'000));
      const auto status = process_->wait_for(std::chrono::milliseconds(0));
      if (status != 0)
        ADD_FAILURE() << "burn-server did not stop cleanly (status " << status.value_or(-1) << "); its log:\n" << log();
    }
    process_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  /// "127.0.0.1:PORT"
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  ChildProcess& process() { return *process_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::string log_path() const { return (dir_ / "server.log").string(); }
  /// What the server has logged so far.
  std::string log() const {
    std::ifstream in(log_path());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path dir_;
  std::optional<ChildProcess> process_;
  unsigned port_ = 0;
};

}  // namespace burn::testing
