#include "fusion/diagnostics.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace burn::fusion {

bool trace_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("BURN_FUSION_TRACE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void trace_strategy(const Batch& batch, const Strategy& strategy) {
  std::string text = fmt::format("[fusion] new strategy for {} queued ops:\n", batch.ops.size());
  for (const Step& step : strategy) {
    text += step.plan ? "  fused:" : "  alone:";
    for (auto i : step.ops) {
      text += ' ';
      text += ir::op_name(batch.ops[i].queued->op);
    }
    text += '\n';
  }
  std::fputs(text.c_str(), stderr);
}

std::string group_name(std::span<const QueuedOp* const> group) {
  std::string name = "fused[";
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (i > 0) name += ' ';
    name += ir::op_name(group[i]->op);
  }
  return name + ']';
}

}  // namespace burn::fusion
