// The first and second moment estimates Adam and AdamW share (private to src/optim).
#pragma once

#include <burn/optim/optimizer.hpp>

#include "rule_math.hpp"

namespace burn::optim::detail {

struct AdaptiveMoment {
  double beta_1;
  double beta_2;
  bool amsgrad;

  static std::vector<std::string_view> slot_names() { return {"moment_1", "moment_2", "max_moment_2"}; }
  std::vector<std::string_view> used_slots() const {
    return amsgrad ? slot_names() : std::vector<std::string_view>{"moment_1", "moment_2"};
  }

  /// Updates "moment_1", "moment_2" (and "max_moment_2") from `g`; returns
  /// {m, the v to divide by}.
  std::pair<Val, Val> update(const Val& g, ParamState& state) const {
    auto slot = [&](const char* name) -> std::optional<Val> {
      auto it = state.slots.find(name);
      return it == state.slots.end() ? std::nullopt : std::optional<Val>(Val{it->second});
    };
    const auto m_prev = slot("moment_1");
    const auto v_prev = slot("moment_2");
    // The moments start at zero, so the first update is just (1 - beta) g.
    const Val m = m_prev ? *m_prev * beta_1 + g * (1.0 - beta_1) : g * (1.0 - beta_1);
    const Val v = v_prev ? *v_prev * beta_2 + square(g) * (1.0 - beta_2) : square(g) * (1.0 - beta_2);
    state.slots["moment_1"] = m.r;
    state.slots["moment_2"] = v.r;
    if (!amsgrad) return {m, v};
    const auto max_prev = slot("max_moment_2");
    const Val max_v = max_prev ? max_pair(*max_prev, v) : v;
    state.slots["max_moment_2"] = max_v.r;
    return {m, max_v};
  }
};

}  // namespace burn::optim::detail
