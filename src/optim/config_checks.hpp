// Hyper-parameter checks shared by the optimiser configs (private to src/optim).
#pragma once

#include <burn/optim/weight_decay.hpp>
#include <optional>
#include <string_view>

namespace burn::optim::detail {

/// Throws "[config] name must be ..." unless lo <= value (< hi, or <= hi when hi_inclusive).
void check_range(std::string_view config, std::string_view name, double value, double lo, double hi, bool hi_inclusive);
/// Throws "[config] ..." unless value is finite and >= 0.
void check_non_negative(std::string_view config, std::string_view name, double value);
void check_weight_decay(std::string_view config, const std::optional<WeightDecayConfig>& w);

}  // namespace burn::optim::detail
