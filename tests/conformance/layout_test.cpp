// Layout ops on every dtype: reshape (-1 and 0), flatten, permute, swap_dims,
// transpose, flip, expand, unsqueeze/squeeze, cat, stack, repeat, unfold.
#include "any_kind.hpp"

namespace burn::conformance {
namespace {

class Layout : public ComboTest {};

TEST_P(Layout, Reshape) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<1>({6});
    auto r = a.template reshape<2>({2, -1});
    EXPECT_EQ(r.dtype(), c.dt);
    expect_tensor(r, {2, 3}, {0, 1, 2, 3, 4, 5});
    expect_tensor(a.template reshape<2>({-1, 2}), {3, 2}, {0, 1, 2, 3, 4, 5});
    auto b = c.template range<2>({2, 3});
    // 0 keeps the input's size at that position (Burn's semantics).
    expect_tensor(b.template reshape<3>({0, 3, 1}), {2, 3, 1}, {0, 1, 2, 3, 4, 5});
    expect_tensor(b.template reshape<2>({0, -1}), {2, 3}, {0, 1, 2, 3, 4, 5});
    expect_tensor(b.template reshape<1>(std::array<std::size_t, 1>{6}), {6}, {0, 1, 2, 3, 4, 5});
    expect_tensor(b.template reshape<3>({1, 1, -1}), {1, 1, 6}, {0, 1, 2, 3, 4, 5});
    // The reshaped view of a permuted tensor has the permuted order.
    expect_tensor(b.transpose().template reshape<1>({-1}), {6}, {0, 3, 1, 4, 2, 5});
    auto e = c.template m<2>({}, {0, 4});
    expect_tensor(e.template reshape<3>({0, 2, 2}), {0, 2, 2}, {});
    expect_tensor(e.template reshape<3>({2, 0, -1}), {2, 4, 0}, {});  // 0 keeps dim 1 (4); -1 is then 0
    expect_op_error([&] { (void)b.template reshape<2>({4, 2}); }, "reshape");
    expect_op_error([&] { (void)b.template reshape<2>({-1, -1}); }, "reshape");
    expect_op_error([&] { (void)b.template reshape<2>({4, -1}); }, "reshape");
    expect_op_error([&] { (void)b.template reshape<2>({-2, 3}); }, "reshape");
  });
}

TEST_P(Layout, Flatten) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<3>({2, 3, 2});
    auto f = a.template flatten<2>(1, 2);
    expect_tensor(f, {2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    expect_tensor(a.template flatten<1>(0, 2), {12}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    expect_tensor(a.template flatten<2>(0, 1), {6, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  });
}

TEST_P(Layout, PermuteSwapTranspose) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<3>({2, 3, 2});
    auto p = a.permute({2, 0, 1});
    EXPECT_EQ(p.shape(), (Shape{2, 2, 3}));
    expect_tensor(p, {2, 2, 3}, {0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11});
    expect_tensor(a.permute({1, 2, 0}), {3, 2, 2}, {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11});
    expect_tensor(a.permute({-1, 0, 1}), {2, 2, 3}, {0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11});
    expect_tensor(a.swap_dims(0, 2), {2, 3, 2}, {0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11});
    expect_tensor(a.swap_dims(2, 0), {2, 3, 2}, {0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11});
    expect_tensor(a.swap_dims(1, 1), {2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    auto b = c.template range<2>({2, 3});
    expect_tensor(b.transpose(), {3, 2}, {0, 3, 1, 4, 2, 5});
    expect_tensor(b.transpose().transpose(), {2, 3}, {0, 1, 2, 3, 4, 5});
    expect_op_error([&] { (void)a.permute({0, 0, 1}); }, "permute");
    expect_op_error([&] { (void)a.permute({0, 1, 3}); }, "permute");
    expect_op_error([&] { (void)a.swap_dims(0, 3); }, "swap_dims");
  });
}

TEST_P(Layout, Flip) {
  with_kind(GetParam(), [](auto c) {
    auto b = c.template range<2>({2, 3});
    expect_tensor(b.flip({0}), {2, 3}, {3, 4, 5, 0, 1, 2});
    expect_tensor(b.flip({1}), {2, 3}, {2, 1, 0, 5, 4, 3});
    expect_tensor(b.flip({-1}), {2, 3}, {2, 1, 0, 5, 4, 3});
    expect_tensor(b.flip({0, 1}), {2, 3}, {5, 4, 3, 2, 1, 0});
    expect_tensor(b.flip({}), {2, 3}, {0, 1, 2, 3, 4, 5});
    auto a = c.template range<3>({2, 3, 2});
    expect_tensor(a.flip({0, 2}), {2, 3, 2}, {7, 6, 9, 8, 11, 10, 1, 0, 3, 2, 5, 4});
    expect_op_error([&] { (void)b.flip({2}); }, "flip");
    expect_op_error([&] { (void)b.flip({0, 0}); }, "flip");
  });
}

TEST_P(Layout, Expand) {
  with_kind(GetParam(), [](auto c) {
    auto row = c.template m<2>({1, 2, 3}, {1, 3});
    expect_tensor(row.template expand<2>({2, 3}), {2, 3}, {1, 2, 3, 1, 2, 3});
    expect_tensor(row.template expand<2>({2, -1}), {2, 3}, {1, 2, 3, 1, 2, 3});
    auto col = c.template m<2>({1, 2}, {2, 1});
    expect_tensor(col.template expand<2>({2, 3}), {2, 3}, {1, 1, 1, 2, 2, 2});
    // New leading dims.
    expect_tensor(c.template m<1>({4, 5}, {2}).template expand<3>({2, 1, 2}), {2, 1, 2}, {4, 5, 4, 5});
    expect_tensor(row.template expand<2>({0, 3}), {0, 3}, {});
    expect_op_error([&] { (void)row.template expand<2>({2, 4}); }, "expand");
    expect_op_error([&] { (void)col.template expand<1>({2}); }, "expand");
    // -1 cannot size a new leading dim.
    expect_op_error([&] { (void)row.template expand<3>({-1, 2, 3}); }, "expand");
  });
}

TEST_P(Layout, UnsqueezeSqueeze) {
  with_kind(GetParam(), [](auto c) {
    auto b = c.template range<2>({2, 3});
    expect_tensor(b.template unsqueeze<3>(), {1, 2, 3}, {0, 1, 2, 3, 4, 5});
    expect_tensor(b.template unsqueeze<4>(), {1, 1, 2, 3}, {0, 1, 2, 3, 4, 5});
    expect_tensor(b.template unsqueeze_dim<3>(1), {2, 1, 3}, {0, 1, 2, 3, 4, 5});
    expect_tensor(b.template unsqueeze_dim<3>(2), {2, 3, 1}, {0, 1, 2, 3, 4, 5});
    expect_tensor(b.template unsqueeze_dim<3>(-1), {2, 3, 1}, {0, 1, 2, 3, 4, 5});
    expect_tensor(b.template unsqueeze_dim<3>(0), {1, 2, 3}, {0, 1, 2, 3, 4, 5});
    auto s = c.template range<3>({2, 1, 3});
    expect_tensor(s.template squeeze<2>(1), {2, 3}, {0, 1, 2, 3, 4, 5});
    expect_tensor(s.template squeeze<2>(-2), {2, 3}, {0, 1, 2, 3, 4, 5});
    expect_op_error([&] { (void)s.template squeeze<2>(0); }, "squeeze");
    expect_op_error([&] { (void)b.template unsqueeze_dim<3>(4); }, "unsqueeze_dim");
  });
}

TEST_P(Layout, Cat) {
  with_kind(GetParam(), [](auto c) {
    using T2 = decltype(c.template range<2>({1, 1}));
    auto a = c.template range<2>({2, 3});
    auto b = c.template m<2>({6, 7, 8}, {1, 3});
    auto out = T2::cat({a, b}, 0);
    EXPECT_EQ(out.dtype(), c.dt);
    expect_tensor(out, {3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
    expect_tensor(T2::cat({a, c.template m<2>({9, 8}, {2, 1})}, 1), {2, 4}, {0, 1, 2, 9, 3, 4, 5, 8});
    expect_tensor(T2::cat({a, c.template m<2>({9, 8}, {2, 1})}, -1), {2, 4}, {0, 1, 2, 9, 3, 4, 5, 8});
    expect_tensor(T2::cat({a}, 0), {2, 3}, {0, 1, 2, 3, 4, 5});
    // Empty pieces are allowed where their other dims match.
    expect_tensor(T2::cat({c.template m<2>({}, {0, 3}), b, c.template m<2>({}, {0, 3})}, 0), {1, 3}, {6, 7, 8});
    expect_tensor(T2::cat({c.template m<2>({}, {2, 0}), a}, 1), {2, 3}, {0, 1, 2, 3, 4, 5});
    expect_op_error([&] { (void)T2::cat({a, c.template m<2>({1, 2}, {1, 2})}, 0); }, "cat");
    expect_op_error([&] { (void)T2::cat({a, b}, 2); }, "cat");
    expect_op_error([&] { (void)T2::cat({}, 0); }, "cat");
  });
}

TEST_P(Layout, Stack) {
  with_kind(GetParam(), [](auto c) {
    using T2 = decltype(c.template range<2>({1, 1}));
    auto a = c.template range<2>({2, 3});
    auto b = c.template m<2>({10, 11, 12, 13, 14, 15}, {2, 3});
    expect_tensor(T2::template stack<3>({a, b}, 0), {2, 2, 3}, {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15});
    expect_tensor(T2::template stack<3>({a, b}, 1), {2, 2, 3}, {0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15});
    expect_tensor(T2::template stack<3>({a, b}, 2), {2, 3, 2}, {0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15});
    expect_tensor(T2::template stack<3>({a, b}, -1), {2, 3, 2}, {0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15});
    expect_tensor(T2::template stack<3>({a}, 1), {2, 1, 3}, {0, 1, 2, 3, 4, 5});
    auto e = c.template m<2>({}, {0, 2});
    expect_tensor(T2::template stack<3>({e, e, e}, 1), {0, 3, 2}, {});
    expect_op_error([&] { (void)T2::template stack<3>({a, c.template range<2>({3, 2})}, 0); }, "stack");
    expect_op_error([&] { (void)T2::template stack<3>({a, b}, 4); }, "stack");
  });
}

TEST_P(Layout, RepeatAndRepeatDim) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<2>({2, 3});
    expect_tensor(a.repeat_dim(0, 2), {4, 3}, {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
    expect_tensor(a.repeat_dim(1, 2), {2, 6}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
    expect_tensor(a.repeat_dim(-1, 1), {2, 3}, {0, 1, 2, 3, 4, 5});
    expect_tensor(a.repeat_dim(0, 0), {0, 3}, {});
    expect_tensor(a.repeat({2, 2}), {4, 6}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
    expect_tensor(a.repeat({1, 1}), {2, 3}, {0, 1, 2, 3, 4, 5});
    expect_tensor(a.repeat({0, 2}), {0, 6}, {});
    expect_op_error([&] { (void)a.repeat_dim(2, 2); }, "repeat_dim");
  });
}

TEST_P(Layout, Unfold) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<1>({7});
    auto u = a.template unfold<2>(0, 3, 2);
    expect_tensor(u, {3, 3}, {0, 1, 2, 2, 3, 4, 4, 5, 6});
    auto b = c.template range<2>({2, 4});
    expect_tensor(b.template unfold<3>(1, 2, 1), {2, 3, 2}, {0, 1, 1, 2, 2, 3, 4, 5, 5, 6, 6, 7});
    expect_tensor(b.template unfold<3>(0, 1, 1), {2, 4, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
    expect_tensor(b.template unfold<3>(1, 4, 3), {2, 1, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
    expect_tensor(b.template unfold<3>(1, 3, 5), {2, 1, 3}, {0, 1, 2, 4, 5, 6});
    expect_tensor(b.transpose().template unfold<3>(0, 2, 2), {2, 2, 2}, {0, 1, 4, 5, 2, 3, 6, 7});
    expect_op_error([&] { (void)b.template unfold<3>(1, 5, 1); }, "unfold");
    expect_op_error([&] { (void)b.template unfold<3>(1, 2, 0); }, "unfold");
  });
}

BURN_ALL_DTYPES_SUITE(Layout);

}  // namespace
}  // namespace burn::conformance
