// The server's log: one line per event on stderr, with a UTC timestamp.
#pragma once

#include <string_view>

#include <fmt/format.h>

namespace burn_server {

/// Writes "2026-12-02T11:30:00.123Z burn-server: <line>" atomically.
void log_line(std::string_view line);
/// Silences log_line (burn-server --quiet).
void set_quiet(bool quiet);

template <class... Args>
void log(fmt::format_string<Args...> format, Args&&... args) {
  log_line(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace burn_server
