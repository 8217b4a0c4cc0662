// A child process for tests that need several processes (remote clients,
// the ranks of a process group, burn-server itself): started with
// posix_spawn, killed and reaped when the object goes.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace burn::testing {

/// A started process; killed and reaped on destruction.
class ChildProcess {
 public:
  /// Starts argv[0] with the given arguments; stdout and stderr go to `log`
  /// (appended) when given. `env`: "NAME=value" entries added to (or
  /// replacing) this process's environment.
  explicit ChildProcess(const std::vector<std::string>& argv, const std::string& log = "",
                        const std::vector<std::string>& env = {}) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view entry(*e);
      const auto replaced = [&](const std::string& mine) {
        return entry.substr(0, entry.find('=') + 1) == mine.substr(0, mine.find('=') + 1);
      };
      if (std::none_of(env.begin(), env.end(), replaced)) envp.push_back(*e);
    }
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!log.empty()) {
      posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      posix_spawn_file_actions_adddup2(&actions, 1, 2);
    }
    const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  }
  ~ChildProcess() { kill(SIGKILL); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  /// Sends `sig` and reaps the process (waiting at most `limit`, then SIGKILL).
  void kill(int sig, std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    if (!wait_for(limit)) {
      ::kill(pid_, SIGKILL);
      wait_for(std::chrono::milliseconds(5000));
    }
  }
  /// Waits for the process to exit; its exit status, or nullopt after `limit`.
  std::optional<int> wait_for(std::chrono::milliseconds limit) {
    if (pid_ <= 0) return status_;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return status_;
      }
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace burn::testing
