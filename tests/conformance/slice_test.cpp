// Slicing on every dtype: ranges, negative indices, steps (negative too),
// empty results, slice_assign, slice_fill, narrow, chunk, split.
#include "any_kind.hpp"

namespace burn::conformance {
namespace {

class Slice : public ComboTest {};

Range stepped(std::int64_t step) {
  Range r;
  r.step = step;
  return r;
}

TEST_P(Slice, RangesAndNegativeIndices) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<2>({3, 4});
    auto s = a.slice({{0, 2}});
    EXPECT_EQ(s.dtype(), c.dt);
    expect_tensor(s, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
    expect_tensor(a.slice({Range::all(), {1, 3}}), {3, 2}, {1, 2, 5, 6, 9, 10});
    expect_tensor(a.slice({{-2, 3}}), {2, 4}, {4, 5, 6, 7, 8, 9, 10, 11});
    expect_tensor(a.slice({Range::all(), {-3, -1}}), {3, 2}, {1, 2, 5, 6, 9, 10});
    expect_tensor(a.slice({Range::index(1)}), {1, 4}, {4, 5, 6, 7});
    expect_tensor(a.slice({Range::index(-1), Range::index(0)}), {1, 1}, {8});
    expect_tensor(a.slice({Range::from(2)}), {1, 4}, {8, 9, 10, 11});
    expect_tensor(a.slice({Range::from(-2), Range::from(3)}), {2, 1}, {7, 11});
    expect_tensor(a.slice({{1, 2}, {1, 3}}), {1, 2}, {5, 6});
  });
}

TEST_P(Slice, Steps) {
  with_kind(GetParam(), [](auto c) {
    auto v = c.template range<1>({7});
    expect_tensor(v.slice({{0, 7, 2}}), {4}, {0, 2, 4, 6});
    expect_tensor(v.slice({{1, 6, 2}}), {3}, {1, 3, 5});
    expect_tensor(v.slice({{0, 7, 3}}), {3}, {0, 3, 6});
    // A negative step walks [start, end) backwards from end - 1.
    expect_tensor(v.slice({{0, 7, -1}}), {7}, {6, 5, 4, 3, 2, 1, 0});
    expect_tensor(v.slice({{0, 7, -2}}), {4}, {6, 4, 2, 0});
    expect_tensor(v.slice({{1, 5, -2}}), {2}, {4, 2});
    expect_tensor(v.slice({stepped(-3)}), {3}, {6, 3, 0});
    expect_tensor(v.slice({{-3, 7, -1}}), {3}, {6, 5, 4});
    auto a = c.template range<2>({3, 4});
    expect_tensor(a.slice({{0, 3, 2}, {0, 4, -2}}), {2, 2}, {3, 1, 11, 9});
    expect_tensor(a.slice({stepped(-1)}), {3, 4}, {8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3});
    // Slicing a slice composes.
    expect_tensor(a.slice({Range::all(), {0, 4, 2}}).slice({{1, 3}}), {2, 2}, {4, 6, 8, 10});
  });
}

TEST_P(Slice, EmptyResultsAndClamping) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<2>({3, 4});
    expect_tensor(a.slice({{2, 2}}), {0, 4}, {});
    expect_tensor(a.slice({{3, 1}}), {0, 4}, {});
    expect_tensor(a.slice({Range::all(), {4, 4}}), {3, 0}, {});
    expect_tensor(a.slice({{3, 1, -1}}), {0, 4}, {});
    // Bounds past the end are clamped, as in PyTorch.
    expect_tensor(a.slice({{1, 10}}), {2, 4}, {4, 5, 6, 7, 8, 9, 10, 11});
    expect_tensor(a.slice({{-10, 1}}), {1, 4}, {0, 1, 2, 3});
    auto e = c.template m<2>({}, {0, 4});
    expect_tensor(e.slice({Range::all(), {1, 3}}), {0, 2}, {});
  });
}

TEST_P(Slice, Errors) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<2>({3, 4});
    expect_op_error([&] { (void)a.slice({{0, 3, 0}}); }, "slice");
    expect_op_error([&] { (void)a.slice({Range::all(), Range::all(), Range::all()}); }, "slice");
    expect_op_error([&] { (void)a.slice_assign({{0, 3, 0}}, a); }, "slice_assign");
    expect_op_error([&] { (void)a.slice_assign({{0, 2}}, a); }, "slice_assign");
    expect_op_error([&] { (void)a.slice_fill({{0, 1}, {0, 1}, {0, 1}}, 1); }, "slice_fill");
  });
}

TEST_P(Slice, SliceAssignAndFill) {
  with_kind(GetParam(), [](auto c) {
    auto z = c.template m<2>(std::vector<double>(12, 0.0), {3, 4});
    auto v = c.template m<2>({1, 2, 3, 4}, {2, 2});
    auto out = z.slice_assign({{1, 3}, {0, 2}}, v);
    EXPECT_EQ(out.dtype(), c.dt);
    expect_tensor(out, {3, 4}, {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0});
    // The input is unchanged: operations never modify their inputs.
    expect_tensor(z, {3, 4}, std::vector<double>(12, 0.0));
    auto cols = c.template m<2>({1, 2, 3, 4, 5, 6}, {3, 2});
    expect_tensor(z.slice_assign({Range::all(), {0, 4, 2}}, cols), {3, 4}, {1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0});
    // Negative step: values are written walking backwards.
    auto rows = c.template m<2>({1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, {3, 4});
    expect_tensor(z.slice_assign({stepped(-1)}, rows), {3, 4}, {3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1});
    expect_tensor(z.slice_assign({Range::index(-1), {-1, 4}}, c.template m<2>({9}, {1, 1})), {3, 4},
                  {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9});
    expect_tensor(z.slice_assign({{1, 1}}, c.template m<2>({}, {0, 4})), {3, 4}, std::vector<double>(12, 0.0));
    expect_tensor(z.slice_fill({{0, 1}}, 7), {3, 4}, {7, 7, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0});
    expect_tensor(z.slice_fill({Range::all(), {1, 4, 2}}, 5), {3, 4}, {0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5});
  });
}

TEST_P(Slice, Narrow) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template range<2>({3, 4});
    expect_tensor(a.narrow(1, 1, 2), {3, 2}, {1, 2, 5, 6, 9, 10});
    expect_tensor(a.narrow(0, -1, 1), {1, 4}, {8, 9, 10, 11});
    expect_tensor(a.narrow(-1, 0, 1), {3, 1}, {0, 4, 8});
    expect_tensor(a.narrow(0, 3, 0), {0, 4}, {});
    expect_op_error([&] { (void)a.narrow(1, 3, 2); }, "narrow");
    expect_op_error([&] { (void)a.narrow(2, 0, 1); }, "narrow");
    expect_op_error([&] { (void)a.narrow(0, 5, 1); }, "narrow");
  });
}

template <class T>
void expect_pieces(const std::vector<T>& pieces, const std::vector<std::vector<double>>& expected,
                   std::source_location loc = std::source_location::current()) {
  ASSERT_EQ(pieces.size(), expected.size()) << "called from line " << loc.line();
  for (std::size_t i = 0; i < pieces.size(); ++i) expect_tensor(pieces[i], {expected[i].size()}, expected[i], {}, loc);
}

TEST_P(Slice, ChunkAndSplit) {
  with_kind(GetParam(), [](auto c) {
    expect_pieces(c.template range<1>({6}).chunk(3, 0), {{0, 1}, {2, 3}, {4, 5}});
    expect_pieces(c.template range<1>({5}).chunk(2, 0), {{0, 1, 2}, {3, 4}});
    expect_pieces(c.template range<1>({11}).chunk(6, 0), {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10}});
    expect_pieces(c.template range<1>({2}).chunk(4, 0), {{0}, {1}});
    expect_pieces(c.template range<1>({5}).split(2, 0), {{0, 1}, {2, 3}, {4}});
    expect_pieces(c.template range<1>({5}).split(5, 0), {{0, 1, 2, 3, 4}});
    expect_pieces(c.template range<1>({5}).split_with_sizes({1, 3, 1}, 0), {{0}, {1, 2, 3}, {4}});
    expect_pieces(c.template range<1>({3}).split_with_sizes({0, 3}, 0), {{}, {0, 1, 2}});
    auto a = c.template range<2>({3, 4});
    auto halves = a.split(2, 1);
    ASSERT_EQ(halves.size(), 2u);
    expect_tensor(halves[0], {3, 2}, {0, 1, 4, 5, 8, 9});
    expect_tensor(halves[1], {3, 2}, {2, 3, 6, 7, 10, 11});
    auto rows = a.chunk(2, 0);
    ASSERT_EQ(rows.size(), 2u);
    expect_tensor(rows[0], {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
    expect_tensor(rows[1], {1, 4}, {8, 9, 10, 11});
    expect_op_error([&] { (void)a.split_with_sizes({1, 1}, 0); }, "split_with_sizes");
    expect_op_error([&] { (void)a.chunk(0, 0); }, "chunk");
    expect_op_error([&] { (void)a.split(0, 0); }, "split");
    expect_op_error([&] { (void)a.split(1, 2); }, "split");
  });
}

BURN_ALL_DTYPES_SUITE(Slice);

}  // namespace
}  // namespace burn::conformance
