#include "dispatch/op_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace burn::detail::profile {
namespace {

struct Entry {
  std::size_t calls = 0;
  std::chrono::nanoseconds total{0};
};

// Printed from the destructor so the table covers the whole run.
class Table {
 public:
  ~Table() {
    if (entries_.empty()) return;
    std::vector<std::pair<std::string, Entry>> rows(entries_.begin(), entries_.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
    double sum = 0;
    // The name column fits the longest name (a fusion device's groups are
    // named after their ops).
    int width = 28;
    for (const auto& [name, e] : rows) {
      sum += std::chrono::duration<double, std::milli>(e.total).count();
      width = std::max(width, static_cast<int>(name.size()));
    }
    std::fprintf(stderr, "\nburn op profile (backend time, BURN_PROFILE_OPS):\n%-*s %10s %12s %7s\n", width, "op",
                 "calls", "total ms", "share");
    for (const auto& [name, e] : rows) {
      const double ms = std::chrono::duration<double, std::milli>(e.total).count();
      std::fprintf(stderr, "%-*s %10zu %12.2f %6.1f%%\n", width, name.c_str(), e.calls, ms,
                   sum > 0 ? 100.0 * ms / sum : 0.0);
    }
    std::fprintf(stderr, "%-*s %10s %12.2f\n", width, "total", "", sum);
  }
  void add(std::string_view op, std::chrono::nanoseconds d) {
    std::lock_guard lock(mutex_);
    auto& e = entries_[std::string(op)];
    ++e.calls;
    e.total += d;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> entries_;
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

bool enabled() noexcept {
  static const bool on = [] {
    const char* v = std::getenv("BURN_PROFILE_OPS");
    return v != nullptr && *v != '\0' && std::string_view(v) != "0";
  }();
  return on;
}

void record(std::string_view op, std::chrono::nanoseconds elapsed) { table().add(op, elapsed); }

}  // namespace burn::detail::profile
