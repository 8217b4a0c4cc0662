// Reading and writing scheduler state maps (private to src/lr_scheduler).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

namespace burn::lr_scheduler::detail {

using StateMap = std::map<std::string, std::string>;

/// The shortest text that reads back as exactly `v`.
std::string format_double(double v);
/// Throws "[op] ..." unless `state` holds exactly "scheduler" = kind and the given keys.
void check_keys(const StateMap& state, std::string_view kind, std::initializer_list<std::string_view> keys,
                std::string_view op);
double parse_double(const StateMap& state, const std::string& key, std::string_view op);
std::int64_t parse_int(const StateMap& state, const std::string& key, std::string_view op);
std::uint64_t parse_uint(const StateMap& state, const std::string& key, std::string_view op);

}  // namespace burn::lr_scheduler::detail
