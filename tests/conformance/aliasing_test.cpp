// Operations never modify their inputs, even when the input is a zero-copy
// view (slice, permute, expand, flip, reshape) sharing storage with another
// tensor, and even when an input is used twice in one op.
#include "any_kind.hpp"

namespace burn::conformance {
namespace {

class Aliasing : public ComboTest {};

TEST_P(Aliasing, WritesIntoViewsLeaveTheBaseUnchanged) {
  with_kind(GetParam(), [](auto c) {
    auto base = c.template range<2>({3, 4});
    const std::vector<double> orig = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    auto view = base.slice({{1, 3}});
    auto ones = c.template m<2>({1, 1}, {1, 2});
    expect_tensor(view.slice_assign({{0, 1}, {0, 2}}, ones), {2, 4}, {1, 1, 6, 7, 8, 9, 10, 11});
    expect_tensor(view.slice_fill({Range::all(), {3, 4}}, 0), {2, 4}, {4, 5, 6, 0, 8, 9, 10, 0});
    auto t = base.transpose();
    expect_tensor(t.mask_fill(c.template bl<2>({true, false, false}, {1, 3}), 0), {4, 3},
                  {0, 4, 8, 0, 5, 9, 0, 6, 10, 0, 7, 11});
    expect_tensor(
        t.scatter(0, c.template ix<2>({0, 0, 0}, {1, 3}), c.template m<2>({1, 1, 1}, {1, 3}), ir::IndexReduce::Assign),
        {4, 3}, {1, 1, 1, 1, 5, 9, 2, 6, 10, 3, 7, 11});
    expect_tensor(base.flip({0}).select_assign(0, c.template ix<1>({0}, {1}), c.template m<2>({0, 0, 0, 0}, {1, 4}),
                                               ir::IndexReduce::Assign),
                  {3, 4}, {0, 0, 0, 0, 4, 5, 6, 7, 0, 1, 2, 3});
    auto flat = base.template reshape<1>({-1});
    expect_tensor(flat.slice_fill({{0, 12, 3}}, 0), {12}, {0, 1, 2, 0, 4, 5, 0, 7, 8, 0, 10, 11});
    auto wide = c.template m<2>({2, 3}, {2, 1}).template expand<2>({2, 3});
    expect_tensor(wide.slice_fill({{0, 1}, {0, 1}}, 0), {2, 3}, {0, 2, 2, 3, 3, 3});
    expect_tensor(base, {3, 4}, orig);
    expect_tensor(view, {2, 4}, {4, 5, 6, 7, 8, 9, 10, 11});
    expect_tensor(t, {4, 3}, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
    expect_tensor(flat, {12}, orig);
  });
}

TEST_P(Aliasing, NumericOpsLeaveInputsUnchanged) {
  with_kind(GetParam(), [](auto c) {
    using K = typename decltype(c.template range<1>({1}))::kind;
    if constexpr (!std::is_same_v<K, Bool>) {
      auto a = c.template m<2>({1, 2, 3, 4}, {2, 2});
      auto v = a.transpose();
      (void)(a + a).to_data();
      (void)(v * v).to_data();
      (void)(v + a).to_data();
      (void)a.cumsum(1).to_data();
      (void)v.sort(1).to_data();
      (void)a.clamp(2, 3).to_data();
      (void)v.matmul(a).to_data();
      (void)a.scatter(1, c.template ix<2>({0, 0, 1, 1}, {2, 2}), v).to_data();
      (void)a.select_assign(0, c.template ix<1>({1, 1}, {2}), a).to_data();
      expect_tensor(a, {2, 2}, {1, 2, 3, 4});
      expect_tensor(v, {2, 2}, {1, 3, 2, 4});
      // An op whose inputs are the same tensor twice.
      expect_tensor(a.scatter(1, c.template ix<2>({1, 0, 1, 0}, {2, 2}), a, ir::IndexReduce::Assign), {2, 2},
                    {2, 1, 4, 3});
      expect_tensor(a.mask_where(a.greater_elem(2), v), {2, 2}, {1, 2, 2, 4});
    }
  });
}

BURN_ALL_DTYPES_SUITE(Aliasing);

}  // namespace
}  // namespace burn::conformance
