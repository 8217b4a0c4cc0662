#include "state_text.hpp"

#include <fmt/format.h>

#include <burn/error.hpp>
#include <charconv>
#include <initializer_list>

namespace burn::lr_scheduler::detail {

namespace {

template <class T>
T parse_number(const StateMap& state, const std::string& key, std::string_view op, std::string_view what) {
  const std::string& text = state.at(key);  // presence checked by check_keys
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw Error(op, fmt::format("state '{}' = '{}' is not {}", key, text, what));
  return value;
}

}  // namespace

std::string format_double(double v) { return fmt::format("{}", v); }

void check_keys(const StateMap& state, std::string_view kind, std::initializer_list<std::string_view> keys,
                std::string_view op) {
  auto it = state.find("scheduler");
  if (it == state.end() || it->second != kind)
    throw Error(op, fmt::format("the state is not a '{}' scheduler's (its 'scheduler' is '{}')", kind,
                                it == state.end() ? "missing" : it->second));
  for (auto key : keys)
    if (!state.count(std::string(key))) throw Error(op, fmt::format("the state lacks '{}'", key));
  if (state.size() != keys.size() + 1)
    for (const auto& [key, value] : state) {
      bool known = key == "scheduler";
      for (auto k : keys) known = known || key == k;
      if (!known) throw Error(op, fmt::format("unexpected state key '{}'", key));
    }
}

double parse_double(const StateMap& state, const std::string& key, std::string_view op) {
  return parse_number<double>(state, key, op, "a number");
}
std::int64_t parse_int(const StateMap& state, const std::string& key, std::string_view op) {
  return parse_number<std::int64_t>(state, key, op, "an integer");
}
std::uint64_t parse_uint(const StateMap& state, const std::string& key, std::string_view op) {
  return parse_number<std::uint64_t>(state, key, op, "a non-negative integer");
}

}  // namespace burn::lr_scheduler::detail
