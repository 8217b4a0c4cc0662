#include "log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace burn_server {
namespace {
std::atomic<bool> quiet{false};
std::mutex mutex;
}  // namespace

void set_quiet(bool q) { quiet = q; }

void log_line(std::string_view line) {
  if (quiet) return;
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  std::lock_guard lock(mutex);
  std::fprintf(stderr, "%s.%03dZ burn-server: %.*s\n", stamp, static_cast<int>(millis), static_cast<int>(line.size()),
               line.data());
  std::fflush(stderr);
}

}  // namespace burn_server
