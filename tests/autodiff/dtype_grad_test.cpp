// Backward in every float dtype: a composite touching most rule families runs
// on f32, f16 and bf16 leaves; each gradient keeps its leaf's dtype and agrees
// with the f64 result within that dtype's precision.
#include "grad_check.hpp"

#include <burn/module/ops.hpp>

namespace {

using namespace burn;
using namespace burn::adtest;

class DtypeGrad : public AdTest {
 protected:
  /// Gradients of a composite loss with respect to x [1, 2, 4, 4] and w [2, 2, 3, 3], in `dtype`.
  std::pair<TensorData, TensorData> grads_in(DType dtype, const std::vector<double>& xv,
                                             const std::vector<double>& wv) {
    const auto x = burn::testing::float_tensor<4>(xv, {1, 2, 4, 4}, ad(), dtype).require_grad();
    const auto w = burn::testing::float_tensor<4>(wv, {2, 2, 3, 3}, ad(), dtype).require_grad();
    const auto idx = ints<2>({2, 0, 1, 1, 3, 0}, {2, 3});
    const auto mask = bools<2>({true, false, false, true, false, true, true, false}, {2, 4});

    auto c = module::conv2d(x, w, std::nullopt, {{1, 1}, {1, 1}, {1, 1}});                   // [1, 2, 4, 4]
    c = module::conv_transpose2d(activation::gelu(c), w.swap_dims(0, 1), std::nullopt);      // [1, 2, 6, 6]
    auto p = module::max_pool2d(c, {2, 2}, {2, 2}) + module::avg_pool2d(c, {2, 2}, {2, 2});  // [1, 2, 3, 3]
    p = module::interpolate(p, {4, 4}, {module::InterpolateMode::Bilinear, false}) +
        module::adaptive_avg_pool2d(c, {4, 4});
    auto f = p.flatten<2>(0, 2).slice({{0, 2}, Range::all()});  // [2, 4]
    auto s = activation::softmax(f, 1) * f.cumsum(1) + f.sort(1) * 0.5 - f.var(1).expand<2>({2, 4});
    s = s.mask_fill(mask, 0.25) + f.gather(1, idx).sum_dim(1) * 0.1 + activation::sigmoid(f * 0.3).cumprod(1);
    s = s.slice_assign({{0, 1}, {1, 3}}, f.slice({{1, 2}, {0, 2}}).tanh()).repeat_dim(0, 2);
    const Gradients grads = (s * s).mean().backward();
    return {x.grad(grads)->to_data(), w.grad(grads)->to_data()};
  }
};

TEST_P(DtypeGrad, CompositeInEveryFloatDtype) {
  const auto xv = rng.uniform(32, -1, 1);
  const auto wv = rng.uniform(36, -0.5, 0.5);
  const auto [x64, w64] = grads_in(DType::F64, xv, wv);
  for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const auto [gx, gw] = grads_in(dtype, xv, wv);
    EXPECT_EQ(gx.dtype(), dtype);
    EXPECT_EQ(gw.dtype(), dtype);
    // Half types round every intermediate: compare loosely, relative to the
    // largest gradient.
    const Tolerance tol = dtype == DType::F32   ? Tolerance::rel_abs(1e-4, 1e-5)
                          : dtype == DType::F16 ? Tolerance::rel_abs(0.05, 0.01)
                                                : Tolerance::rel_abs(0.1, 0.04);
    try {
      gx.convert(DType::F64).assert_approx_eq(x64, tol);
      gw.convert(DType::F64).assert_approx_eq(w64, tol);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

BURN_AD_MODES(DtypeGrad);

}  // namespace
