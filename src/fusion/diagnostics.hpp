// What the fusion layer tells people about its work: BURN_FUSION_TRACE's
// printout of each new strategy, and the names fused groups carry in
// BURN_PROFILE_OPS's table. Shared by the queue's drain and compiled
// programs (fusion_program.cpp).
#pragma once

#include <span>
#include <string>

#include "fusion/planner.hpp"

namespace burn::fusion {

/// BURN_FUSION_TRACE=1 prints every newly planned strategy and every op run
/// outside the queue to stderr: the tool for seeing what a workload fuses.
bool trace_enabled();

void trace_strategy(const Batch& batch, const Strategy& strategy);

/// A fused group's name in BURN_PROFILE_OPS's table: fused[sub mul add].
/// The fusion layer times each step it runs itself (docs/architecture.md,
/// "Profiling"): dispatch cannot, a queued op returning before it runs.
std::string group_name(std::span<const QueuedOp* const> group);

}  // namespace burn::fusion
