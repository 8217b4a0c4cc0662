#include "config_checks.hpp"

#include <fmt/format.h>

#include <burn/error.hpp>
#include <cmath>

namespace burn::optim::detail {

void check_range(std::string_view config, std::string_view name, double value, double lo, double hi,
                 bool hi_inclusive) {
  const bool ok = value >= lo && (hi_inclusive ? value <= hi : value < hi);
  if (!ok)
    throw Error(config, fmt::format("{} must be in [{}, {}{}, got {}", name, lo, hi, hi_inclusive ? "]" : ")", value));
}

void check_non_negative(std::string_view config, std::string_view name, double value) {
  if (!(value >= 0.0) || !std::isfinite(value))
    throw Error(config, fmt::format("{} must be finite and non-negative, got {}", name, value));
}

void check_weight_decay(std::string_view config, const std::optional<WeightDecayConfig>& w) {
  if (w) check_non_negative(config, "the weight decay penalty", w->penalty);
}

}  // namespace burn::optim::detail
