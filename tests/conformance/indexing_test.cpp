// Indexing on float and int dtypes: gather, scatter (Add, Assign), select,
// select_assign, mask_where, mask_fill, where, nonzero, argwhere; index errors.
#include "any_kind.hpp"

namespace burn::conformance {
namespace {

class Indexing : public ComboTest {};

std::vector<DType> numeric_dtypes() {
  std::vector<DType> d = burn::testing::float_dtypes();
  for (auto t : burn::testing::int_dtypes()) d.push_back(t);
  return d;
}

TEST_P(Indexing, Gather) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<2>({2, 3});
    auto g = a.gather(1, c.template ix<2>({2, 1, 0, 1, 2, 1}, {2, 3}));
    EXPECT_EQ(g.dtype(), c.dt);
    expect_tensor(g, {2, 3}, {2, 1, 0, 4, 5, 4});
    expect_tensor(a.gather(0, c.template ix<2>({0, 1, 0, 1, 0, 1}, {2, 3})), {2, 3}, {0, 4, 2, 3, 1, 5});
    expect_tensor(a.gather(-1, c.template ix<2>({1, 0}, {2, 1})), {2, 1}, {1, 3});
    expect_tensor(c.template range<1>({5}).gather(0, c.template ix<1>({4, 4, 0}, {3})), {3}, {4, 4, 0});
    expect_tensor(a.gather(1, c.template ix<2>({}, {2, 0})), {2, 0}, {});
    // Index tensors of any int dtype.
    auto i32 = burn::testing::int_tensor<2>({2, 1, 0, 1, 2, 1}, {2, 3}, c.dev, DType::I32);
    expect_tensor(a.gather(1, i32), {2, 3}, {2, 1, 0, 4, 5, 4});
    auto u8 = burn::testing::int_tensor<1>({1, 0}, {2}, c.dev, DType::U8);
    expect_tensor(a.select(0, u8), {2, 3}, {3, 4, 5, 0, 1, 2});
  });
}

TEST_P(Indexing, ScatterAddAndAssign) {
  with_kind(GetParam(), [](auto c) {
    auto base = c.template m<2>({10, 10, 10, 20, 20, 20}, {2, 3});
    auto vals = c.template m<2>({1, 2, 3, 4, 5, 6}, {2, 3});
    // Add (the default) accumulates duplicates.
    auto dup = c.template ix<2>({0, 0, 2, 1, 1, 1}, {2, 3});
    auto added = base.scatter(1, dup, vals);
    EXPECT_EQ(added.dtype(), c.dt);
    expect_tensor(added, {2, 3}, {13, 10, 13, 20, 35, 20});
    expect_tensor(base.scatter_add(1, dup, vals), {2, 3}, {13, 10, 13, 20, 35, 20});
    auto perm = c.template ix<2>({2, 0, 1, 1, 2, 0}, {2, 3});
    expect_tensor(base.scatter(1, perm, vals, ir::IndexReduce::Assign), {2, 3}, {2, 3, 1, 6, 4, 5});
    auto z = c.template m<2>(std::vector<double>(6, 0.0), {3, 2});
    expect_tensor(z.scatter(0, c.template ix<2>({2, 0, 0, 2}, {2, 2}), c.template m<2>({1, 2, 3, 4}, {2, 2})), {3, 2},
                  {3, 2, 0, 0, 1, 4});
    // Fewer indices than positions: the rest is unchanged.
    expect_tensor(
        base.scatter(1, c.template ix<2>({1, 2}, {2, 1}), c.template m<2>({5, 6}, {2, 1}), ir::IndexReduce::Assign),
        {2, 3}, {10, 5, 10, 20, 20, 6});
    expect_tensor(base, {2, 3}, {10, 10, 10, 20, 20, 20});
  });
}

TEST_P(Indexing, SelectAndSelectAssign) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<2>({2, 3});
    auto s = a.select(0, c.template ix<1>({1, 0, 1}, {3}));
    EXPECT_EQ(s.dtype(), c.dt);
    expect_tensor(s, {3, 3}, {3, 4, 5, 0, 1, 2, 3, 4, 5});
    expect_tensor(a.select(1, c.template ix<1>({2, 0}, {2})), {2, 2}, {2, 0, 5, 3});
    expect_tensor(a.select(-1, c.template ix<1>({1}, {1})), {2, 1}, {1, 4});
    expect_tensor(a.select(1, c.template ix<1>({}, {0})), {2, 0}, {});
    // Add (the default) accumulates repeated indices.
    auto ones = c.template m<2>({1, 1, 1, 2, 2, 2}, {2, 3});
    expect_tensor(a.select_assign(1, c.template ix<1>({0, 2, 0}, {3}), ones), {2, 3}, {2, 1, 3, 7, 4, 7});
    expect_tensor(
        a.select_assign(0, c.template ix<1>({1}, {1}), c.template m<2>({9, 9, 9}, {1, 3}), ir::IndexReduce::Assign),
        {2, 3}, {0, 1, 2, 9, 9, 9});
    expect_tensor(a.select_assign(1, c.template ix<1>({2, 0}, {2}), c.template m<2>({7, 8, 9, 6}, {2, 2}),
                                  ir::IndexReduce::Assign),
                  {2, 3}, {8, 1, 7, 6, 4, 9});
  });
}

TEST_P(Indexing, MaskWhereFillAndWhere) {
  with_kind(GetParam(), [](auto c) {
    auto t = c.template m<2>({1, 7, 2, 3}, {2, 2});
    auto mask = c.template bl<2>({true, false, false, true}, {2, 2});
    auto src = c.template m<2>({8, 9, 6, 4}, {2, 2});
    auto w = t.mask_where(mask, src);
    EXPECT_EQ(w.dtype(), c.dt);
    expect_tensor(w, {2, 2}, {8, 7, 2, 4});
    expect_tensor(t.mask_where(c.template bl<2>({true, false}, {1, 2}), src), {2, 2}, {8, 7, 6, 3});
    expect_tensor(t.mask_where(mask, c.template m<2>({0}, {1, 1})), {2, 2}, {0, 7, 2, 0});
    expect_tensor(t.mask_fill(mask, 5), {2, 2}, {5, 7, 2, 5});
    expect_tensor(t.mask_fill(c.template bl<2>({false, true}, {2, 1}), 0), {2, 2}, {1, 7, 0, 0});
    expect_tensor(burn::where(mask, src, t), {2, 2}, {8, 7, 2, 4});
    auto e = c.template m<2>({}, {0, 2});
    expect_tensor(e.mask_fill(c.template bl<2>({}, {0, 2}), 1), {0, 2}, {});
  });
}

TEST_P(Indexing, NonzeroAndArgwhere) {
  with_kind(GetParam(), [](auto c) {
    auto t = c.template m<2>({0, 1, 0, 2, 0, 3}, {2, 3});
    auto nz = t.nonzero();
    ASSERT_EQ(nz.size(), 2u);
    expect_tensor(nz[0], {3}, {0, 1, 1});
    expect_tensor(nz[1], {3}, {1, 0, 2});
    auto aw = t.argwhere();
    EXPECT_TRUE(is_int(aw.dtype()));
    expect_tensor(aw, {3, 2}, {0, 1, 1, 0, 1, 2});
    auto zeros = c.template m<2>(std::vector<double>(4, 0.0), {2, 2});
    expect_tensor(zeros.argwhere(), {0, 2}, {});
    auto none = zeros.nonzero();
    ASSERT_EQ(none.size(), 2u);
    expect_tensor(none[0], {0}, {});
    expect_tensor(c.template m<1>({}, {0}).argwhere(), {0, 1}, {});
  });
}

TEST_P(Indexing, OutOfRangeIndicesAreErrors) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<2>({2, 3});
    expect_op_error([&] { (void)a.gather(1, c.template ix<2>({3, 0, 0, 0, 0, 0}, {2, 3})).to_data(); }, "gather");
    expect_op_error([&] { (void)a.gather(0, c.template ix<2>({0, -1, 0, 0, 0, 0}, {2, 3})).to_data(); }, "gather");
    expect_op_error([&] { (void)a.select(0, c.template ix<1>({0, 2}, {2})).to_data(); }, "select");
    expect_op_error([&] { (void)a.select(1, c.template ix<1>({-1}, {1})).to_data(); }, "select");
    expect_op_error([&] { (void)a.scatter(1, c.template ix<2>({0, 5, 0, 0, 0, 0}, {2, 3}), a).to_data(); }, "scatter");
    expect_op_error(
        [&] {
          (void)a.select_assign(0, c.template ix<1>({2}, {1}), c.template m<2>({1, 1, 1}, {1, 3})).to_data();
        },
        "select_assign");
  });
}

TEST_P(Indexing, ShapeAndDimErrors) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<2>({2, 3});
    expect_op_error([&] { (void)a.gather(2, c.template ix<2>({0, 0}, {2, 1})); }, "gather");
    expect_op_error([&] { (void)a.gather(1, c.template ix<2>({0, 0, 0}, {3, 1})); }, "gather");
    expect_op_error([&] { (void)a.scatter(1, c.template ix<2>({0, 0}, {2, 1}), a); }, "scatter");
    expect_op_error([&] { (void)a.select(2, c.template ix<1>({0}, {1})); }, "select");
    expect_op_error(
        [&] {
          (void)a.select_assign(1, c.template ix<1>({0}, {1}), c.template m<2>({1, 2, 3}, {1, 3}));
        },
        "select_assign");
    expect_op_error(
        [&] {
          (void)a.mask_where(c.template bl<2>({true, false}, {2, 1}).template expand<2>({2, 2}), a);
        },
        "mask_where");
    expect_op_error([&] { (void)a.mask_fill(c.template bl<2>({true, false, true, false}, {1, 4}), 0); }, "mask_fill");
    const DType other = c.dt == DType::I32 ? DType::I64 : DType::I32;
    auto wrong = burn::testing::int_tensor<2>({1, 2, 3, 4, 5, 6}, {2, 3}, c.dev, other);
    expect_op_error(
        [&] {
          (void)burn::detail::mask_where(a.ref(), c.template bl<2>({true}, {1, 1}).ref(), wrong.ref());
        },
        "mask_where");
    expect_op_error(
        [&] {
          (void)burn::detail::scatter(a.ref(), 1, c.template ix<2>({0}, {1, 1}).ref(),
                                      wrong.slice({{0, 1}, {0, 1}}).ref(), ir::IndexReduce::Add);
        },
        "scatter");
  });
}

INSTANTIATE_TEST_SUITE_P(Numeric, Indexing, ::testing::ValuesIn(burn::testing::combos(numeric_dtypes())),
                         burn::testing::combo_name);

TEST(IndexingBool, MaskOpsOnBoolTensors) {
  for (const auto& d : burn::testing::all_devices()) {
    SCOPED_TRACE(d.to_string());
    auto t = burn::testing::bool_tensor<1>({true, false, true, false}, {4}, d);
    auto m = burn::testing::bool_tensor<1>({true, true, false, false}, {4}, d);
    expect_tensor(t.mask_fill(m, false), {4}, {0, 0, 1, 0});
    expect_tensor(t.argwhere(), {2, 1}, {0, 2});
    expect_tensor(t.gather(0, burn::testing::int_tensor<1>({2, 1}, {2}, d)), {2}, {1, 0});
    expect_tensor(t.select(0, burn::testing::int_tensor<1>({3, 0}, {2}, d)), {2}, {0, 1});
  }
}

}  // namespace
}  // namespace burn::conformance
