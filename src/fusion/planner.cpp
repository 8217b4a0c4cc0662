#include "fusion/planner.hpp"

#include "fusion/op_kind.hpp"

namespace burn::fusion {

Planner::Planner(std::vector<std::unique_ptr<Fuser>> fusers) : fusers_(std::move(fusers)) {
  for (const auto& f : fusers_) builders_.push_back(f->builder());
}

bool Planner::may_queue(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                        std::span<const ir::TensorSpec> outputs) const {
  // No fuser takes an eager or an alone op; checked first, the batch
  // signature and the programs may rely on it. Alone ops queue all the same
  // and run by themselves at the drain (op_kind.hpp).
  if (kind(op) == OpKind::Eager) return false;
  if (kind(op) == OpKind::Alone) return true;
  for (const auto& f : fusers_)
    if (f->may_take(op, inputs, outputs)) return true;
  return false;
}

std::size_t Planner::KeyHash::operator()(const std::vector<std::uint64_t>& k) const noexcept {
  std::uint64_t h = k.size();
  for (auto v : k) h = (h ^ v) * 0x100000001b3ULL;  // the entries are already mixed hashes
  return static_cast<std::size_t>(h);
}

std::shared_ptr<const Strategy> Planner::plan(const Batch& batch, bool& explored) {
  if (auto it = cache_.find(batch.key); it != cache_.end()) {
    explored = false;
    return it->second;
  }
  explored = true;
  Strategy steps;
  std::vector<std::uint32_t> all(batch.ops.size());
  for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  explore(batch, std::move(all), steps);
  auto strategy = std::make_shared<const Strategy>(std::move(steps));
  if (cache_.size() >= kMaxCached) cache_.clear();
  cache_.emplace(batch.key, strategy);
  return strategy;
}

void Planner::explore(const Batch& batch, std::vector<std::uint32_t> pending, Strategy& steps) const {
  std::size_t pos = 0;
  while (pos < pending.size()) {
    // Every fuser grows a candidate from `pos` until it closes; the best
    // candidate of two or more ops wins (ties: the first fuser). An op the
    // candidate refuses but does not feed is skipped — it will run before
    // the group — so a small op between two fusable ones does not split them.
    const FuserBuilder* best = nullptr;
    std::vector<std::uint32_t> best_skipped;
    for (const auto& b : builders_) {
      b->reset(batch);
      std::vector<std::uint32_t> skipped;
      std::size_t i = pos;
      for (; i < pending.size(); ++i) {
        const auto op = pending[i];
        if (b->offer(op)) continue;
        if (b->taken().empty() || skipped.size() >= kMaxSkipped || b->depends_on_group(op)) break;
        skipped.push_back(op);
      }
      // Skipped ops after the candidate's last op are not skipped at all.
      while (!skipped.empty() && !b->taken().empty() && skipped.back() > b->taken().back()) skipped.pop_back();
      if (b->taken().size() >= 2 && b->score() > 0 && (!best || b->score() > best->score())) {
        best = b.get();
        best_skipped = std::move(skipped);
      }
    }
    if (!best) {
      steps.push_back({{pending[pos]}, nullptr});
      ++pos;
      continue;
    }
    // The group covers pending[pos .. its last op]; the ops it skipped there
    // run first (explored on their own: the recursion resets the builders,
    // so the group is taken and built before it), then the group.
    const auto last = best->taken().back();
    std::size_t next = pos;
    while (next < pending.size() && pending[next] <= last) ++next;
    std::vector<std::uint32_t> group = best->taken();
    auto plan = best->build();
    if (!best_skipped.empty()) explore(batch, std::move(best_skipped), steps);
    steps.push_back({std::move(group), std::move(plan)});
    pos = next;
  }
}

}  // namespace burn::fusion
