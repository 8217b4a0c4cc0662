// The op table must cover every ir::Op alternative and every enumerator that
// selects an alternative's behaviour; adding an op to the IR without a
// differential entry fails here.
#include "coverage.hpp"
#include "harness.hpp"
#include "runner.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>

namespace burn::differential {
namespace {

/// Every (alternative, enumerator) the IR has, with a readable name.
std::map<CoverageKey, std::string> required_keys() {
  std::map<CoverageKey, std::string> keys;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          using A = std::variant_alternative_t<I, ir::Op>;
          if constexpr (Enumerated<A>::value) {
            using E = typename Enumerated<A>::type;
            for (std::size_t e = 0; e < enumerator_count<E>(); ++e) {
              const ir::Op op = Enumerated<A>::make(static_cast<E>(e));
              keys[{I, static_cast<int>(e)}] = std::string(ir::op_name(op)) + " (enumerator " + std::to_string(e) + ")";
            }
          } else {
            keys[{I, -1}] = std::string(ir::op_name(ir::Op(A{})));
          }
        }(),
        ...);
  }
  (std::make_index_sequence<std::variant_size_v<ir::Op>>{});
  return keys;
}

TEST(DifferentialTable, CoversEveryOpAndEnumerator) {
  std::set<CoverageKey> covered;
  for (const auto& e : all_entries()) covered.insert(coverage_key(e.prototype));
  const auto required = required_keys();
  // The enum scan found the enumerators op.hpp lists today (a sanity floor).
  EXPECT_GE(enumerator_count<ir::UnaryOp>(), static_cast<std::size_t>(ir::UnaryOp::BitNot) + 1);
  EXPECT_GE(enumerator_count<ir::BinaryOp>(), static_cast<std::size_t>(ir::BinaryOp::LessEqual) + 1);
  EXPECT_GE(required.size(), std::variant_size_v<ir::Op>);
  for (const auto& [key, name] : required)
    EXPECT_TRUE(covered.count(key)) << "no differential table entry covers " << name << " (ir::Op alternative "
                                    << key.alternative << "); add one in tests/differential/";
  for (const auto& key : covered) EXPECT_TRUE(required.count(key)) << "entry for an unknown op key";
}

TEST(DifferentialTable, EntriesAreWellFormed) {
  std::set<std::string> names;
  for (const auto& e : all_entries()) {
    EXPECT_TRUE(names.insert(e.name).second) << "duplicate entry name " << e.name;
    EXPECT_FALSE(e.dtypes.empty()) << e.name;
    for (char c : e.name) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_') << e.name;
  }
}

bool is_empty_case(const Case& c) {
  for (const auto& in : c.inputs)
    if (in.base.num_elements() == 0) return true;
  for (const auto& s : case_specs(c).outputs)
    if (s.shape.num_elements() == 0) return true;
  return false;
}

/// Case shapes depend on the dtype only through its kind, width and
/// signedness; one dtype of each such class keeps this check fast.
bool representative(DType d) {
  return d == DType::F32 || d == DType::BF16 || d == DType::I64 || d == DType::I8 || d == DType::U64 ||
         d == DType::U8 || d == DType::Bool;
}

// Every case is valid for the IR, and every op meets non-contiguous inputs
// and empty tensors (random ops excepted: the statistics of an empty sample
// mean nothing). The device runs check validity for every dtype again.
TEST(DifferentialTable, CasesAreValidAndIncludeViewsAndEmptyTensors) {
  for (const auto& e : all_entries()) {
    bool view = false, empty = false, has_inputs = false;
    for (DType dtype : e.dtypes) {
      if (!representative(dtype) && dtype != e.dtypes.front()) continue;
      Rng rng(case_seed(e.name, dtype));
      const auto cases = e.cases(dtype, rng);
      EXPECT_FALSE(cases.empty()) << e.name << " " << dtype << " makes no case";
      for (const auto& c : cases) {
        try {
          empty = empty || is_empty_case(c);
        } catch (const std::exception& ex) {
          ADD_FAILURE() << e.name << " " << dtype << ", case " << c.label << " is invalid: " << ex.what();
        }
        for (const auto& in : c.inputs) view = view || !in.view.empty();
        has_inputs = has_inputs || !c.inputs.empty();
      }
    }
    if (e.check == Check::Statistics) continue;
    if (has_inputs) {
      EXPECT_TRUE(view) << e.name << " has no non-contiguous input";
    }
    EXPECT_TRUE(empty) << e.name << " has no empty-tensor case";
  }
}

}  // namespace
}  // namespace burn::differential
