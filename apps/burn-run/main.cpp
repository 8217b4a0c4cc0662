// burn-run: starts the ranks of a data-parallel job on this machine.
//
//   burn-run --nproc N [--master-port P] [--timeout-ms T] -- program args...
//
// Each of the N processes gets RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR (127.0.0.1) and MASTER_PORT, as torchrun
// sets them, so ProcessGroup::from_env() connects them. Their output is
// prefixed with "[rank R] ", line by line. When one exits non-zero (or is
// killed), the others are stopped (SIGTERM, then SIGKILL after 5 s, each
// rank with the processes it started) and burn-run exits with that rank's
// status; SIGINT and SIGTERM are passed on.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

extern char** environ;

namespace {

volatile std::sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

const char* kUsage =
    "usage: burn-run --nproc N [--master-port P] [--timeout-ms T] -- program [args...]\n"
    "\n"
    "Starts N processes of program on this machine, the ranks of one data-parallel job.\n"
    "Each gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1 and\n"
    "MASTER_PORT (burn::collective::ProcessGroup::from_env() reads them).\n"
    "\n"
    "  --nproc N         how many ranks (1 to 1024)\n"
    "  --master-port P   rank 0's rendezvous port (default: a free port)\n"
    "  --timeout-ms T    BURN_COLLECTIVE_TIMEOUT_MS for the ranks (default: theirs, 30000)\n"
    "\n"
    "Output lines are prefixed with [rank R]. If a rank fails, the others are stopped and\n"
    "burn-run exits with the failed rank's status (128 + signal for a killed one).\n"
    "Several machines: see docs/distributed.md.\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "burn-run: %s\n\n%s", message.c_str(), kUsage);
  std::exit(2);
}

long parse_number(const std::string& flag, const std::string& value, long min, long max) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || v < min || v > max)
    usage_error(flag + " wants a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", not \"" +
                value + "\"");
  return v;
}

unsigned free_port() {
  namespace net = boost::asio;
  net::io_context ioc;
  net::ip::tcp::acceptor a(ioc, net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

struct Rank {
  pid_t pid = -1;
  int out = -1;         // read end of its stdout+stderr pipe
  std::string partial;  // output after the last newline
  std::optional<int> status;
};

void emit(int rank, const std::string& line) {
  const std::string text = "[rank " + std::to_string(rank) + "] " + line + "\n";
  (void)!::write(STDOUT_FILENO, text.data(), text.size());
}

// Reads what a rank wrote; prints its whole lines. False at end of output.
bool drain(int rank, Rank& r) {
  char buf[65536];
  const ssize_t n = ::read(r.out, buf, sizeof(buf));
  if (n <= 0) {
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (!r.partial.empty()) emit(rank, r.partial);
    r.partial.clear();
    ::close(r.out);
    r.out = -1;
    return false;
  }
  r.partial.append(buf, static_cast<std::size_t>(n));
  std::size_t start = 0;
  for (std::size_t nl; (nl = r.partial.find('\n', start)) != std::string::npos; start = nl + 1)
    emit(rank, r.partial.substr(start, nl - start));
  r.partial.erase(0, start);
  return true;
}

int exit_code(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

int run(int argc, char** argv) {
  long nproc = 0;
  std::optional<unsigned> port;
  std::optional<long> timeout_ms;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc)
      usage_error(a == "--nproc" || a == "--master-port" || a == "--timeout-ms" ? a + " needs a value"
                                                                                : "unknown option " + a);
    if (a == "--nproc") nproc = parse_number(a, argv[++i], 1, 1024);
    else if (a == "--master-port") port = static_cast<unsigned>(parse_number(a, argv[++i], 1, 65535));
    else if (a == "--timeout-ms") timeout_ms = parse_number(a, argv[++i], 1, 86'400'000);
    else usage_error("unknown option " + a);
  }
  if (nproc == 0) usage_error("--nproc is required");
  if (i >= argc) usage_error("no program given after --");
  const unsigned master_port = port ? *port : free_port();

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::vector<Rank> ranks(static_cast<std::size_t>(nproc));
  for (long r = 0; r < nproc; ++r) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      std::perror("burn-run: pipe");
      return 1;
    }
    std::vector<std::string> env_strings;
    const auto set = [&](const std::string& name, const std::string& value) {
      std::string entry = name;
      entry += '=';
      entry += value;
      env_strings.push_back(std::move(entry));
    };
    set("RANK", std::to_string(r));
    set("LOCAL_RANK", std::to_string(r));
    set("WORLD_SIZE", std::to_string(nproc));
    set("LOCAL_WORLD_SIZE", std::to_string(nproc));
    set("MASTER_ADDR", "127.0.0.1");
    set("MASTER_PORT", std::to_string(master_port));
    if (timeout_ms) set("BURN_COLLECTIVE_TIMEOUT_MS", std::to_string(*timeout_ms));
    std::vector<char*> envp;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry(*e);
      const std::string name = entry.substr(0, entry.find('='));
      bool replaced = false;
      for (const auto& mine : env_strings) replaced = replaced || mine.compare(0, name.size() + 1, name + "=") == 0;
      if (!replaced) envp.push_back(*e);
    }
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    // Each rank leads a process group of its own, so that stopping it stops
    // whatever it started too (a shell's children, a data loader's workers).
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    const int rc =
        posix_spawnp(&ranks[static_cast<std::size_t>(r)].pid, argv[i], &actions, &attr, argv + i, envp.data());
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      std::fprintf(stderr, "burn-run: cannot start %s: %s\n", argv[i], std::strerror(rc));
      for (auto& started : ranks)
        if (started.pid > 0) ::kill(-started.pid, SIGKILL);
      return 127;
    }
    ranks[static_cast<std::size_t>(r)].out = fds[0];
  }

  // Runs until every rank has exited and its output is read. The first
  // failure stops the rest; a signal to burn-run is passed on.
  std::optional<int> failure;
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  // Output still open after every rank has exited (a process the rank left
  // behind holds it) is read for a moment more, then let go.
  std::optional<std::chrono::steady_clock::time_point> output_until;
  const auto stop_all = [&](int sig) {
    for (auto& r : ranks) ::kill(-r.pid, sig);  // the rank's process group
    if (!kill_at) kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  };
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> owner;
    for (std::size_t r = 0; r < ranks.size(); ++r)
      if (ranks[r].out >= 0) {
        fds.push_back({ranks[r].out, POLLIN, 0});
        owner.push_back(r);
      }
    if (!fds.empty() && ::poll(fds.data(), fds.size(), 100) > 0)
      for (std::size_t k = 0; k < fds.size(); ++k)
        if (fds[k].revents != 0) drain(static_cast<int>(owner[k]), ranks[owner[k]]);
    if (fds.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));

    bool all_done = true;
    bool all_exited = true;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      auto& rank = ranks[r];
      if (!rank.status) {
        int st = 0;
        if (::waitpid(rank.pid, &st, WNOHANG) == rank.pid) {
          rank.status = exit_code(st);
          if (*rank.status != 0 && !failure) {
            failure = *rank.status;
            std::fprintf(stderr, "burn-run: rank %zu exited with status %d; stopping the others\n", r, *failure);
            stop_all(SIGTERM);
          }
        }
      }
      all_done = all_done && rank.status && rank.out < 0;
      all_exited = all_exited && rank.status;
    }
    if (all_done) break;
    if (all_exited) {
      if (!output_until) output_until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      if (std::chrono::steady_clock::now() > *output_until) {
        for (std::size_t r = 0; r < ranks.size(); ++r)
          if (ranks[r].out >= 0) {
            if (!ranks[r].partial.empty()) emit(static_cast<int>(r), ranks[r].partial);
            ::close(ranks[r].out);
            ranks[r].out = -1;
          }
        break;
      }
    }
    if (g_signal != 0 && !kill_at) {
      std::fprintf(stderr, "burn-run: %s; stopping the ranks\n", g_signal == SIGINT ? "interrupted" : "terminated");
      failure = 128 + g_signal;
      stop_all(g_signal);
    }
    if (kill_at && std::chrono::steady_clock::now() > *kill_at) {
      stop_all(SIGKILL);
      kill_at = std::chrono::steady_clock::time_point::max();
    }
  }
  return failure.value_or(0);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // no free port (before any rank starts), or out of memory
    std::fprintf(stderr, "burn-run: %s\n", e.what());
    return 1;
  }
}
