// One test per device pair and op family (a process start costs ~0.4 s of
// CPU once LibTorch is linked, so ctest gets a dozen processes rather than
// one per op); each failure names its op, dtype and case. The table of worst
// errors is printed when the binary ends.
#include "runner.hpp"

#include <gtest/gtest.h>

namespace burn::differential {
namespace {

struct Param {
  std::size_t pair;
  std::size_t family;
};

std::vector<Param> all_params() {
  std::vector<Param> out;
  const std::size_t pairs = available_pairs().size();
  for (std::size_t p = 0; p < pairs; ++p)
    for (std::size_t f = 0; f < all_families().size(); ++f) out.push_back({p, f});
  return out;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return available_pairs()[info.param.pair].name + "_" + all_families()[info.param.family].name;
}

class Differential : public ::testing::TestWithParam<Param> {};

TEST_P(Differential, AgreesWithOracle) {
  const Pair pair = available_pairs()[GetParam().pair];
  for (const Entry& entry : all_families()[GetParam().family].entries) {
    std::size_t rows = 0;
    for (DType dtype : entry.dtypes) {
      // LibTorch 1.13 has no u16/u32/u64: such rows are skipped, not failed.
      if (!pair.dut.supports_dtype(dtype) || !pair.oracle.supports_dtype(dtype)) continue;
      Row row = run_row(entry, dtype, pair);
      EXPECT_GT(row.cases, 0u) << entry.name << " " << dtype << ": no case could run (test table bug)";
      record_row(std::move(row));
      ++rows;
    }
    EXPECT_GT(rows, 0u) << entry.name << ": neither device supports any of its dtypes";
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Differential);
INSTANTIATE_TEST_SUITE_P(Ops, Differential, ::testing::ValuesIn(all_params()), param_name);

class TableEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { print_table(); }
};
[[maybe_unused]] ::testing::Environment* const table_environment =
    ::testing::AddGlobalTestEnvironment(new TableEnvironment);

}  // namespace
}  // namespace burn::differential
