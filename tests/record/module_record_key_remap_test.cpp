// key_remap rules on hostile keys and patterns: RE2 runs in linear time
// without recursion; the replacement syntax and its errors.
#include <gtest/gtest.h>

#include <burn/nn/linear.hpp>
#include <burn/record/module_record.hpp>
#include <burn/record/safetensors.hpp>

#include "record_test_util.hpp"

namespace burn::record {
namespace {

using test::expect_error;
using test::TempDir;

const std::vector<float> kWeight{1, 2, 3, 4}, kBias{5, 6};

// A file holding a Linear 2 -> 2 ("weight", "bias") and the extra keys, in
// Burn's layout (declared: a square weight alone does not show it).
std::filesystem::path linear_file(const TempDir& dir, const std::vector<std::string>& extra_keys) {
  std::map<std::string, TensorData> tensors{{"weight", TensorData(kWeight, Shape{2, 2})},
                                            {"bias", TensorData(kBias, Shape{2})}};
  for (const auto& k : extra_keys) tensors.emplace(k, TensorData(std::vector<float>{0}));
  const auto path = dir / "linear.safetensors";
  save_safetensors(path, tensors, {{"burn.layout", "burn"}});
  return path;
}

nn::Linear fresh() { return nn::LinearConfig{2, 2}.init(Device::flex()); }

void expect_loaded(const nn::Linear& fc) {
  EXPECT_EQ(fc.weight->to_data().to_vec<float>(), kWeight);
  EXPECT_EQ(fc.bias.value()->to_data().to_vec<float>(), kBias);
}

TEST(ModuleRecordKeyRemap, BacktrackingPatternFinishes) {
  // (a+)+$ against a's followed by another character backtracks
  // exponentially in a backtracking engine.
  TempDir dir;
  const std::string near_miss = std::string(64, 'a') + "!";
  const auto path = linear_file(dir, {near_miss, std::string(64, 'a')});
  const auto rules = LoadOptions{}.with_key_remap("^(a+)+$", "matched");
  expect_error([&] { (void)load_module(fresh(), path, rules); },
               {"[load_module]", "unexpected keys (in the file, not in the module): " + near_miss + ", matched"});
  expect_loaded(load_module(fresh(), path, rules.with_strict(false)));
}

TEST(ModuleRecordKeyRemap, VeryLongKeysDoNotExhaustTheStack) {
  TempDir dir;
  const std::string tail(1'000'000, 'x');
  const auto path = linear_file(dir, {"layers." + tail});
  const auto rules = LoadOptions{}.with_key_remap("^layers\\.(.*)$", "blocks.$1").with_key_remap("(x|y)+z", "-");
  expect_error([&] { (void)load_module(fresh(), path, rules); }, {"unexpected keys", ": blocks.xxxxxxxxxx"});
  expect_loaded(load_module(fresh(), path, rules.with_strict(false)));
}

TEST(ModuleRecordKeyRemap, ReplacementSyntax) {
  TempDir dir;
  const auto path = linear_file(dir, {"extra"});
  // $2 and $1 groups, $& the whole match, $$ a dollar; a backslash and any
  // other "$" are literal.
  expect_error(
      [&] { (void)load_module(fresh(), path, LoadOptions{}.with_key_remap("^(ex)(tra)$", "$2-$1-$&-$$-\\-$x")); },
      {"unexpected keys (in the file, not in the module): tra-ex-extra-$-\\-$x"});
  // Every match in a key is replaced, as std::regex_replace did.
  expect_error([&] { (void)load_module(fresh(), path, LoadOptions{}.with_key_remap("[xr]", "_")); },
               {"unexpected keys (in the file, not in the module): e_t_a"});
  // Rules apply in order, each to the previous one's result.
  expect_loaded(load_module(fresh(), linear_file(dir, {}),
                            LoadOptions{}.with_key_remap("^weight$", "w0").with_key_remap("^w0$", "weight")));
}

TEST(ModuleRecordKeyRemap, InvalidRulesAreErrors) {
  TempDir dir;
  const auto path = linear_file(dir, {});
  // RE2 has no backreferences.
  expect_error([&] { (void)load_module(fresh(), path, LoadOptions{}.with_key_remap("(a)\\1", "x")); },
               {"[load_module] key_remap pattern '(a)\\1' is not a valid regular expression (RE2 syntax)"});
  // A pattern whose compiled form exceeds RE2's memory budget.
  expect_error([&] { (void)load_module(fresh(), path, LoadOptions{}.with_key_remap("((a{100}){100}){100}", "x")); },
               {"key_remap pattern '((a{100}){100}){100}' is not a valid regular expression"});
  expect_error([&] { (void)load_module(fresh(), path, LoadOptions{}.with_key_remap("^(w)eight$", "$2")); },
               {"key_remap replacement '$2' refers to group $2 but pattern '^(w)eight$' has 1 capturing group(s)"});
}

}  // namespace
}  // namespace burn::record
