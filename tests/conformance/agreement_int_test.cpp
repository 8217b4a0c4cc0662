// Int and bool agreement with the reference device, including views.
#include "agreement.hpp"

namespace burn::conformance {
namespace {

class AgreeInt : public AgreementTest {
 protected:
  void SetUp() override { ref().seed(99); }
  /// Small non-negative ints of the parameter dtype (results fit every int dtype).
  template <std::size_t D>
  Tensor<D, Int> small(Shape s, std::int64_t n = 10) const {
    return rand_int<D>(std::move(s), n, dt());
  }
};

using I1 = Tensor<1, Int>;
using I2 = Tensor<2, Int>;
using I3 = Tensor<3, Int>;

TEST_P(AgreeInt, Arithmetic) {
  auto x = small<3>({3, 4, 5});
  auto y = small<3>({3, 4, 5});
  auto nz = small<3>({3, 4, 5}, 9) + 1;  // divisors in [1, 9]
  agree(
      "add", [](const I3& a, const I3& b) { return a + b; }, x, y);
  agree(
      "mul", [](const I3& a, const I3& b) { return a * b; }, x, y);
  agree(
      "div", [](const I3& a, const I3& b) { return a / b; }, x, nz);
  agree(
      "remainder", [](const I3& a, const I3& b) { return a.remainder(b); }, x, nz);
  agree(
      "broadcast",
      [](const I3& a, const I3& b) {
        return a + b.slice({{0, 1}, Range::all(), {0, 1}});
      },
      x, y);
  agree(
      "scalar", [](const I3& a) { return (a * 3 + 2) / 4; }, x);
  agree(
      "clamp", [](const I3& a) { return a.clamp(2, 6); }, x);
  agree(
      "max_pair", [](const I3& a, const I3& b) { return a.max_pair(b); }, x, y);
  agree(
      "compare", [](const I3& a, const I3& b) { return a.greater_equal(b); }, x, y);
  agree(
      "powi", [](const I3& a) { return a.clamp_max(4).powi_scalar(3); }, x);
}

TEST_P(AgreeInt, Bitwise) {
  auto x = small<2>({6, 7}, 16);
  auto y = small<2>({6, 7}, 16);
  auto sh = small<2>({6, 7}, 4);
  agree(
      "and", [](const I2& a, const I2& b) { return a.bitwise_and(b); }, x, y);
  agree(
      "or", [](const I2& a, const I2& b) { return a.bitwise_or(b); }, x, y);
  agree(
      "xor", [](const I2& a, const I2& b) { return a.bitwise_xor(b); }, x, y);
  agree(
      "not", [](const I2& a) { return a.bitwise_not(); }, x);
  agree(
      "shl", [](const I2& a, const I2& b) { return a.bitwise_left_shift(b); }, x, sh);
  agree(
      "shr", [](const I2& a, const I2& b) { return a.bitwise_right_shift(b); }, x, sh);
  agree(
      "transposed and", [](const I2& a, const I2& b) { return a.transpose().bitwise_and(b.transpose()); }, x, y);
}

TEST_P(AgreeInt, ReductionsScansSorts) {
  auto x = small<3>({3, 4, 5});
  // Whole-tensor sum on 12 values so it fits 8-bit dtypes.
  agree(
      "sum", [](const I3& a) { return a.sum(); }, small<3>({2, 2, 3}));
  for (std::int64_t d = 0; d < 3; ++d) {
    SCOPED_TRACE(d);
    agree(
        "sum_dim", [d](const I3& a) { return a.sum_dim(d); }, x);
    agree(
        "mean_dim", [d](const I3& a) { return a.mean_dim(d); }, x);
    agree(
        "max_dim", [d](const I3& a) { return a.max_dim(d); }, x);
    agree(
        "argmax", [d](const I3& a) { return a.argmax(d); }, x);
    agree(
        "argmin", [d](const I3& a) { return a.argmin(d); }, x);
    agree(
        "cumsum", [d](const I3& a) { return a.cumsum(d); }, x);
    agree(
        "cummax", [d](const I3& a) { return a.cummax(d); }, x);
    // Values 0..9 repeat a lot: stability decides the indices.
    agree(
        "argsort", [d](const I3& a) { return a.argsort(d); }, x);
    agree(
        "argsort_descending", [d](const I3& a) { return a.argsort_descending(d); }, x);
    agree(
        "sort", [d](const I3& a) { return a.sort_descending(d); }, x);
  }
  agree(
      "argsort of flip", [](const I3& a) { return a.flip({2}).argsort(2); }, x);
  agree(
      "sum_dim of permute",
      [](const I3& a) {
        return a.permute({2, 0, 1}).sum_dim(2);
      },
      x);
}

TEST_P(AgreeInt, MatmulLayoutIndexing) {
  auto a = small<3>({2, 3, 4}, 4);
  auto b = small<3>({2, 4, 5}, 4);
  agree(
      "matmul", [](const I3& p, const I3& q) { return p.matmul(q); }, a, b);
  agree(
      "matmul of views", [](const I3& p, const I3& q) { return q.transpose().matmul(p.transpose()); }, a, b);
  agree(
      "cat stack",
      [](const I3& p) {
        return I3::cat({p, p.flip({1})}, 1);
      },
      a);
  agree(
      "repeat",
      [](const I3& p) {
        return p.repeat({2, 1, 2});
      },
      a);
  agree(
      "slice",
      [](const I3& p) {
        return p.slice({Range::all(), {0, 3, -2}, {1, 4, 2}});
      },
      a);
  auto idx = rand_int<3>({2, 3, 6}, 4);
  agree(
      "gather", [](const I3& p, const Tensor<3, Int>& i) { return p.gather(2, i); }, a, idx);
  agree(
      "gather of permuted",
      [](const I3& p, const Tensor<3, Int>& i) {
        return p.permute({0, 1, 2}).flip({1}).gather(2, i);
      },
      a, idx);
  auto sel = rand_int<1>({5}, 3);
  agree(
      "select", [](const I3& p, const I1& i) { return p.select(1, i); }, a, sel);
  agree(
      "select_assign", [](const I3& p, const I1& i) { return p.select_assign(1, i, p.select(1, i)); }, a, sel);
  agree(
      "argwhere",
      [](const I3& p) {
        return p.permute({2, 1, 0}).argwhere();
      },
      a);
}

// Above the flex backend's parallel threshold (2^15 elements).
TEST_P(AgreeInt, LargeTensors) {
  auto x = small<2>({300, 250});
  auto y = small<2>({300, 250}, 9) + 1;
  agree(
      "add", [](const I2& a, const I2& b) { return a + b; }, x, y);
  agree(
      "div of transposed", [](const I2& a, const I2& b) { return a.transpose() / b.transpose(); }, x, y);
  agree(
      "bitwise", [](const I2& a, const I2& b) { return a.bitwise_xor(b); }, x, y);
  agree(
      "max_dim", [](const I2& a) { return a.max_dim(1); }, x);
  agree(
      "argmax", [](const I2& a) { return a.argmax(0); }, x);
  agree(
      "argsort", [](const I2& a) { return a.argsort(1); }, x);
  agree(
      "cummax", [](const I2& a) { return a.cummax(0); }, x);
  agree(
      "argwhere", [](const I2& a) { return a.equal_elem(3).argwhere(); }, x);
}

class AgreeBool : public AgreementTest {
 protected:
  void SetUp() override { ref().seed(5); }
};

TEST_P(AgreeBool, LogicAndViews) {
  using B3 = Tensor<3, Bool>;
  auto x = rand_bool<3>({3, 4, 5});
  auto y = rand_bool<3>({3, 4, 5}, 0.3);
  agree(
      "and", [](const B3& a, const B3& b) { return a.bool_and(b); }, x, y);
  agree(
      "or of permuted",
      [](const B3& a, const B3& b) {
        return a.permute({0, 1, 2}).flip({2}).bool_or(b);
      },
      x, y);
  agree(
      "xor", [](const B3& a, const B3& b) { return a.bool_xor(b); }, x, y);
  agree(
      "not of slice",
      [](const B3& a) {
        return a.slice({Range::all(), {0, 4, 2}}).bool_not();
      },
      x);
  agree(
      "any_dim", [](const B3& a) { return a.any_dim(1); }, x);
  agree(
      "all_dim", [](const B3& a) { return a.all_dim(2); }, x);
  agree(
      "argwhere", [](const B3& a) { return a.swap_dims(0, 2).argwhere(); }, x);
  agree(
      "to_int sum", [](const B3& a) { return a.to_int().sum_dim(0); }, x);
  agree(
      "cat",
      [](const B3& a, const B3& b) {
        return B3::cat({a, b.flip({0})}, 0);
      },
      x, y);
}

std::vector<DType> bool_dtype() { return {DType::Bool}; }

BURN_AGREEMENT_SUITE(AgreeInt, burn::testing::int_dtypes());
BURN_AGREEMENT_SUITE(AgreeBool, bool_dtype());

}  // namespace
}  // namespace burn::conformance
