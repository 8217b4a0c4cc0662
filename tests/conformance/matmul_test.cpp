// matmul (2-D, batched, broadcast batch dims, ints, empty) and cross.
#include "conformance.hpp"

namespace burn::conformance {
namespace {

class MatmulFloat : public ComboTest {};
class MatmulInt : public ComboTest {};
class MatmulSignedInt : public ComboTest {};

TEST_P(MatmulFloat, TwoD) {
  auto a = f<2>({1, 7, 2, 3, 1, 5}, {3, 2});
  auto b = f<2>({4, 7, 5, 2, 3, 5}, {2, 3});
  auto out = a.matmul(b);
  EXPECT_EQ(out.dtype(), dt());
  expect_tensor(out, {3, 3}, {18, 28, 40, 14, 23, 25, 14, 22, 30});
  expect_tensor(f<2>({1, 2, 3}, {1, 3}).matmul(f<2>({1, 1, 1}, {3, 1})), {1, 1}, {6});
  expect_tensor(f<2>({2}, {1, 1}).matmul(f<2>({1, -1, 0.5}, {1, 3})), {1, 3}, {2, -2, 1});
}

TEST_P(MatmulFloat, Batched) {
  auto a = f<3>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  auto b = f<3>({-3, -2, -1, 0, 1, 2, 3, 4}, {2, 2, 2});
  expect_tensor(a.matmul(b), {2, 2, 2}, {-1, 0, -9, -4, 19, 28, 27, 40});
}

TEST_P(MatmulFloat, BroadcastBatchDims) {
  std::vector<double> av(12), bv(18);
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>(i);
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<double>(i % 5) - 2;
  auto a = f<4>(av, {2, 1, 2, 3});
  auto b = f<4>(bv, {1, 3, 3, 2});
  expect_tensor(a.matmul(b), {2, 3, 2, 2},
                {4, -3, 4, -9, -3, 0, -9, 3, 0, -2, 3, -5, 4, -15, 4, -21, -15, 6, -21, 9, 6, -8, 9, -11});
  // A single matrix against a batch.
  auto m = f<3>({1, 0, 0, 1}, {1, 2, 2});
  expect_tensor(m.matmul(f<3>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2})), {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_P(MatmulFloat, EmptyDims) {
  // k = 0: every output element is an empty sum.
  expect_tensor(f<2>({}, {2, 0}).matmul(f<2>({}, {0, 3})), {2, 3}, {0, 0, 0, 0, 0, 0});
  expect_tensor(f<2>({}, {0, 3}).matmul(f<2>({1, 2, 3, 4, 5, 6}, {3, 2})), {0, 2}, {});
  expect_tensor(f<3>({}, {0, 2, 3}).matmul(f<3>({1, 2, 3, 4, 5, 6}, {1, 3, 2})), {0, 2, 2}, {});
}

// Every operand layout a 2-D product can take — dense, transposed views,
// a column slice (leading dimension wider than the row), a stepped slice —
// at sizes on both sides of flex's small-product path (dnnl_sgemm up to 2^21
// multiply-adds and 2^16 outputs, a matmul primitive above), against a
// reference computed here. Small integers keep every sum exact in f32.
TEST_P(MatmulFloat, LayoutsAndSizesAgainstAReference) {
  struct Size {
    std::size_t m, k, n;
  };
  const Size sizes[] = {{1, 1, 1},
                        {1, 7, 5},
                        {5, 7, 1},
                        {3, 1, 4},
                        {33, 17, 9},
                        {64, 128, 10},
                        {130, 129, 131} /* > 2^21 multiply-adds */,
                        {300, 3, 300} /* > 2^16 outputs */};
  auto av = [](std::size_t i, std::size_t p) { return static_cast<double>((i * 7 + p * 3) % 7) - 3.0; };
  auto bv = [](std::size_t p, std::size_t j) { return static_cast<double>((p * 5 + j * 11) % 5) - 2.0; };
  for (const Size& z : sizes) {
    SCOPED_TRACE(::testing::Message() << z.m << "x" << z.k << "x" << z.n);
    const auto m = z.m, k = z.k, n = z.n;
    std::vector<double> a(m * k), at(k * m), b(k * n), bt(n * k), expected(m * n, 0.0);
    std::vector<double> a_wide(m * (k + 3), 9.0), a_stepped(m * 2 * k, 9.0);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t p = 0; p < k; ++p) {
        a[i * k + p] = at[p * m + i] = a_wide[i * (k + 3) + 1 + p] = a_stepped[i * 2 * k + 2 * p] = av(i, p);
      }
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t j = 0; j < n; ++j) b[p * n + j] = bt[j * k + p] = bv(p, j);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (std::size_t p = 0; p < k; ++p) sum += av(i, p) * bv(p, j);
        expected[i * n + j] = rounded(sum, dt());
      }
    const auto ik = static_cast<std::int64_t>(k);
    const auto dense_a = f<2>(a, {m, k}), dense_b = f<2>(b, {k, n});
    const auto view_a = f<2>(at, {k, m}).transpose(), view_b = f<2>(bt, {n, k}).transpose();
    const auto sliced_a = f<2>(a_wide, {m, k + 3}).slice({Range::all(), Range(1, ik + 1)});
    const auto stepped_a = f<2>(a_stepped, {m, 2 * k}).slice({Range::all(), Range(0, 2 * ik, 2)});
    expect_tensor(dense_a.matmul(dense_b), {m, n}, expected);
    expect_tensor(view_a.matmul(dense_b), {m, n}, expected);
    expect_tensor(dense_a.matmul(view_b), {m, n}, expected);
    expect_tensor(view_a.matmul(view_b), {m, n}, expected);
    expect_tensor(sliced_a.matmul(dense_b), {m, n}, expected);
    expect_tensor(stepped_a.matmul(view_b), {m, n}, expected);
  }
}

TEST_P(MatmulFloat, Errors) {
  expect_op_error([&] { (void)f<2>({1, 2, 3, 4, 5, 6}, {2, 3}).matmul(f<2>({1, 2, 3, 4}, {2, 2})); }, "matmul");
  expect_op_error(
      [&] {
        (void)f<3>(std::vector<double>(12, 1.0), {2, 2, 3}).matmul(f<3>(std::vector<double>(18, 1.0), {3, 3, 2}));
      },
      "matmul");
  expect_op_error([&] { (void)f<1>({1, 2}, {2}).matmul(f<1>({1, 2}, {2})); }, "matmul");
  const DType other = dt() == DType::F32 ? DType::F64 : DType::F32;
  auto c = burn::testing::float_tensor<2>({1, 2, 3, 4}, {2, 2}, dev(), other);
  expect_op_error([&] { (void)f<2>({1, 2, 3, 4}, {2, 2}).matmul(c); }, "matmul");
}

TEST_P(MatmulFloat, Cross) {
  auto a = f<2>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto b = f<2>({-1, 0.5, 2, 3, -2, 1}, {2, 3});
  expect_tensor(a.cross(b, 1), {2, 3}, {2.5, -5, 2.5, 17, 14, -23});
  expect_tensor(a.cross(b, -1), {2, 3}, {2.5, -5, 2.5, 17, 14, -23});
  expect_tensor(a.transpose().cross(b.transpose(), 0), {3, 2}, {2.5, 17, -5, 14, 2.5, -23});
  expect_op_error([&] { (void)f<2>({1, 2, 3, 4}, {2, 2}).cross(f<2>({1, 2, 3, 4}, {2, 2}), 1); }, "cross");
}

TEST_P(MatmulInt, TwoDAndBatched) {
  auto a = in<2>({1, 7, 2, 3, 1, 5}, {3, 2});
  auto b = in<2>({4, 7, 5, 2, 3, 5}, {2, 3});
  auto out = a.matmul(b);
  EXPECT_EQ(out.dtype(), dt());
  expect_tensor(out, {3, 3}, {18, 28, 40, 14, 23, 25, 14, 22, 30});
  auto x = in<3>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  auto y = in<3>({1, 0, 2, 1, 0, 1, 1, 2}, {2, 2, 2});
  // [[0,1],[2,3]]x[[1,0],[2,1]] = [[2,1],[8,3]]; [[4,5],[6,7]]x[[0,1],[1,2]] = [[5,14],[7,20]]
  expect_tensor(x.matmul(y), {2, 2, 2}, {2, 1, 8, 3, 5, 14, 7, 20});
  expect_tensor(in<3>({1, 0, 0, 1}, {1, 2, 2}).matmul(x), {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_P(MatmulSignedInt, NegativeValuesAndCross) {
  auto a = in<2>({-1, 2, 3, -4}, {2, 2});
  expect_tensor(a.matmul(in<2>({5, -6, 7, 8}, {2, 2})), {2, 2}, {9, 22, -13, -50});
  expect_tensor(in<2>({1, 0, 0}, {1, 3}).cross(in<2>({0, 1, 0}, {1, 3}), 1), {1, 3}, {0, 0, 1});
}

BURN_FLOAT_SUITE(MatmulFloat);
BURN_INT_SUITE(MatmulInt);
BURN_SIGNED_INT_SUITE(MatmulSignedInt);

}  // namespace
}  // namespace burn::conformance
