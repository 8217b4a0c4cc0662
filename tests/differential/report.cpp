// The device pairs of this build and the table of worst errors per op.
#include "runner.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace burn::differential {
namespace {

std::mutex rows_mutex;
std::vector<Row>& rows() {
  static std::vector<Row> r;
  return r;
}

}  // namespace

std::vector<Pair> available_pairs() {
  std::vector<Pair> pairs;
#if BURN_HAS_FLEX && BURN_HAS_NDARRAY
  pairs.push_back({"flex_vs_ndarray", Device::flex(), Device::ndarray()});
#endif
#if BURN_HAS_FLEX && BURN_HAS_LIBTORCH
  pairs.push_back({"flex_vs_libtorch", Device::flex(), Device::libtorch()});
#endif
#if !BURN_HAS_FLEX && BURN_HAS_NDARRAY && BURN_HAS_LIBTORCH
  pairs.push_back({"libtorch_vs_ndarray", Device::libtorch(), Device::ndarray()});
#endif
  return pairs;
}

void record_row(Row row) {
  std::lock_guard lock(rows_mutex);
  rows().push_back(std::move(row));
}

void print_table() {
  std::lock_guard lock(rows_mutex);
  if (rows().empty()) return;
  std::vector<std::string> pairs;
  for (const auto& r : rows())
    if (std::find(pairs.begin(), pairs.end(), r.pair) == pairs.end()) pairs.push_back(r.pair);
  for (const auto& pair : pairs) {
    std::size_t ops = 0, failed = 0;
    std::printf("\nDifferential test %s: worst error per op and dtype\n", pair.c_str());
    std::printf(
        "(values pass when |a-b| <= max(rel*|a+b|, abs); worst rel is |a-b|/max(|a|,|b|,abs);\n"
        " random ops compare sample statistics: abs is the larger difference of the means and standard\n"
        " deviations, rel that over the distribution's standard deviation)\n");
    std::printf("%-24s %-5s %5s %12s %12s  %s\n", "op", "dtype", "cases", "worst abs", "worst rel", "tolerance");
    for (const auto& r : rows()) {
      if (r.pair != pair) continue;
      ++ops;
      failed += r.failed;
      std::printf("%-24s %-5s %5zu %12.3g %12.3g  %s%s\n", r.op.c_str(), std::string(dtype_name(r.dtype)).c_str(),
                  r.cases, r.worst_abs, r.worst_rel, r.tolerance.c_str(), r.failed ? "  FAIL" : "");
    }
    std::printf("%zu rows, %zu failed\n", ops, failed);
  }
  std::fflush(stdout);
}

}  // namespace burn::differential
