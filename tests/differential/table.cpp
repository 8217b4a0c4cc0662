// The whole op table and the coverage key of an entry's prototype.
#include "coverage.hpp"
#include "harness.hpp"

namespace burn::differential {

const std::vector<Family>& all_families() {
  static const std::vector<Family> families{{"creation", creation_entries()}, {"elementwise", elementwise_entries()},
                                            {"reduce", reduce_entries()},     {"layout", layout_entries()},
                                            {"indexing", indexing_entries()}, {"module", module_entries()}};
  return families;
}

const std::vector<Entry>& all_entries() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> all;
    for (const auto& f : all_families()) all.insert(all.end(), f.entries.begin(), f.entries.end());
    return all;
  }();
  return entries;
}

CoverageKey coverage_key(const ir::Op& op) {
  const int enumerator = std::visit(
      [](const auto& alt) -> int {
        using A = std::decay_t<decltype(alt)>;
        if constexpr (Enumerated<A>::value) return static_cast<int>(Enumerated<A>::get(alt));
        else return -1;
      },
      op);
  return {op.index(), enumerator};
}

}  // namespace burn::differential
