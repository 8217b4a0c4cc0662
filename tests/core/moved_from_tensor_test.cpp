// A tensor used after std::move: every op and accessor throws a burn::Error
// naming the operation, and assigning a new value makes the tensor usable.
#include <burn/nn/linear.hpp>

#include <sstream>
#include <utility>
#include <vector>

#include <burn_test.hpp>

namespace {

using namespace burn;
using burn::testing::all_devices;
using burn::testing::expect_op_error;

constexpr const char* kMoved = "the tensor was moved from (std::move); use it only after assigning a new value";

TEST(MovedFromTensor, MessageNamesTheOperation) {
  auto a = Tensor<2>::ones({2, 2}, Device::flex());
  const auto b = std::move(a);
  try {
    (void)(a + b);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), std::string("[add] ") + kMoved);
    EXPECT_EQ(e.op(), "add");
  }
}

TEST(MovedFromTensor, FloatOpsAndAccessorsThrow) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    auto a = Tensor<2>::from_floats({{1, 2}, {3, 4}}, device);
    auto b = std::move(a);
    const auto mask = Tensor<2, Bool>::from_bools({{true, false}, {false, true}}, device);

    // Accessors.
    expect_op_error([&] { (void)a.shape(); }, "shape", kMoved);
    expect_op_error([&] { (void)a.dims(); }, "dims", kMoved);
    expect_op_error([&] { (void)a.num_elements(); }, "num_elements", kMoved);
    expect_op_error([&] { (void)a.dtype(); }, "dtype", kMoved);
    expect_op_error([&] { (void)a.device(); }, "device", kMoved);
    expect_op_error([&] { (void)a.is_autodiff(); }, "is_autodiff", kMoved);
    expect_op_error([&] { (void)a.is_require_grad(); }, "is_require_grad", kMoved);
    expect_op_error([&] { (void)a.to_data(); }, "to_data", kMoved);
    expect_op_error([&] { (void)a.into_scalar<float>(); }, "to_data", kMoved);
    expect_op_error(
        [&] {
          std::ostringstream os;
          os << a;
        },
        "device", kMoved);

    // Operators, with the moved-from tensor on either side and consumed.
    expect_op_error([&] { (void)(a + b); }, "add", kMoved);
    expect_op_error([&] { (void)(b - a); }, "sub", kMoved);
    expect_op_error([&] { (void)(std::move(a) * b); }, "mul", kMoved);
    expect_op_error([&] { (void)(b / Tensor<2>(std::move(a))); }, "div", kMoved);
    expect_op_error([&] { (void)(a * 2.0f); }, "mul", kMoved);
    expect_op_error([&] { (void)(2.0f - a); }, "sub", kMoved);
    expect_op_error([&] { (void)(1.0f / a); }, "div", kMoved);
    expect_op_error([&] { (void)(-a); }, "neg", kMoved);
    expect_op_error([&] { (void)(-std::move(a)); }, "neg", kMoved);

    // Methods of every family.
    expect_op_error([&] { (void)a.exp(); }, "exp", kMoved);
    expect_op_error([&] { (void)std::move(a).exp(); }, "exp", kMoved);
    expect_op_error([&] { (void)a.clamp(0, 1); }, "clamp", kMoved);
    expect_op_error([&] { (void)a.matmul(b); }, "matmul", kMoved);
    expect_op_error([&] { (void)b.matmul(a); }, "matmul", kMoved);
    expect_op_error([&] { (void)a.greater(b); }, "greater", kMoved);
    expect_op_error([&] { (void)a.sum(); }, "sum", kMoved);
    expect_op_error([&] { (void)a.mean_dim(1); }, "mean_dim", kMoved);
    expect_op_error([&] { (void)a.argmax(1); }, "argmax", kMoved);
    expect_op_error([&] { (void)a.var(0); }, "var", kMoved);
    expect_op_error([&] { (void)a.sort(0); }, "sort", kMoved);
    expect_op_error([&] { (void)a.reshape({4}); }, "reshape", kMoved);
    expect_op_error([&] { (void)a.flatten<1>(0, 1); }, "flatten", kMoved);
    expect_op_error([&] { (void)a.transpose(); }, "swap_dims", kMoved);
    expect_op_error([&] { (void)a.unsqueeze<3>(); }, "unsqueeze", kMoved);
    expect_op_error([&] { (void)a.slice({{0, 1}}); }, "slice", kMoved);
    expect_op_error([&] { (void)Tensor<2>::cat({b, a}, 0); }, "cat", kMoved);
    expect_op_error([&] { (void)Tensor<2>::stack<3>({a, b}, 0); }, "stack", kMoved);
    expect_op_error([&] { (void)a.mask_fill(mask, 0); }, "mask_fill", kMoved);
    expect_op_error([&] { (void)b.mask_where(mask, a); }, "mask_where", kMoved);
    expect_op_error([&] { (void)where(mask, a, b); }, "mask_where", kMoved);
    expect_op_error([&] { (void)a.to_int(); }, "to_int", kMoved);
    expect_op_error([&] { (void)a.cast(DType::F64); }, "cast", kMoved);
    expect_op_error([&] { (void)a.to_device(device); }, "to_device", kMoved);
    expect_op_error([&] { (void)a.detach(); }, "detach", kMoved);
    expect_op_error([&] { (void)Tensor<2>::zeros_like(a); }, "zeros_like", kMoved);
    expect_op_error([&] { (void)Tensor<2>::full_like(a, 2.0); }, "full_like", kMoved);

    // Functions outside the class read the handle through ref().
    expect_op_error([&] { (void)activation::relu(a); }, "relu", kMoved);
    const auto linear = nn::LinearConfig{2, 3}.init(device);
    expect_op_error([&] { (void)linear.forward(a); }, "linear", kMoved);

    // The other tensor holds the values; a new value makes `a` usable again.
    b.to_data().assert_eq(TensorData(std::vector<float>{1, 2, 3, 4}, Shape{2, 2}));
    a = b * 2.0f;
    a.to_data().assert_eq(TensorData(std::vector<float>{2, 4, 6, 8}, Shape{2, 2}));
    EXPECT_EQ(a.dims(), (std::array<std::size_t, 2>{2, 2}));
  }
}

TEST(MovedFromTensor, IntOpsAndAccessorsThrow) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    auto i = Tensor<1, Int>::from_ints({3, 1, 2}, {device, DType::I64});
    auto j = std::move(i);
    expect_op_error([&] { (void)i.shape(); }, "shape", kMoved);
    expect_op_error([&] { (void)i.dims(); }, "dims", kMoved);
    expect_op_error([&] { (void)i.dtype(); }, "dtype", kMoved);
    expect_op_error([&] { (void)i.to_data(); }, "to_data", kMoved);
    expect_op_error([&] { (void)(i + j); }, "add", kMoved);
    expect_op_error([&] { (void)(j * i); }, "mul", kMoved);
    expect_op_error([&] { (void)(std::move(i) + 1); }, "add", kMoved);
    expect_op_error([&] { (void)i.remainder(2); }, "remainder", kMoved);
    expect_op_error([&] { (void)i.bitwise_and(j); }, "bitwise_and", kMoved);
    expect_op_error([&] { (void)i.argsort(0); }, "argsort", kMoved);
    expect_op_error([&] { (void)i.sum(); }, "sum", kMoved);
    expect_op_error([&] { (void)i.to_float(); }, "to_float", kMoved);
    expect_op_error([&] { (void)i.equal_elem(1); }, "equal_elem", kMoved);
    const auto values = Tensor<2>::from_floats({{10, 20, 30}}, device);
    const auto rows = Tensor<1, Int>(std::move(j));
    expect_op_error([&] { (void)values.select(1, j); }, "select", kMoved);

    j = rows;
    values.select(1, j - 1).to_data().assert_eq(TensorData(std::vector<float>{30, 10, 20}, Shape{1, 3}));
  }
}

TEST(MovedFromTensor, BoolOpsAndAccessorsThrow) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    auto m = Tensor<2, Bool>::from_bools({{true, false}, {false, false}}, device);
    auto n = std::move(m);
    const auto x = Tensor<2>::from_floats({{1, 2}, {3, 4}}, device);
    expect_op_error([&] { (void)m.shape(); }, "shape", kMoved);
    expect_op_error([&] { (void)m.dims(); }, "dims", kMoved);
    expect_op_error([&] { (void)m.to_data(); }, "to_data", kMoved);
    expect_op_error([&] { (void)m.bool_not(); }, "bool_not", kMoved);
    expect_op_error([&] { (void)std::move(m).bool_not(); }, "bool_not", kMoved);
    expect_op_error([&] { (void)m.bool_and(n); }, "bool_and", kMoved);
    expect_op_error([&] { (void)n.bool_or(m); }, "bool_or", kMoved);
    expect_op_error([&] { (void)m.any(); }, "any", kMoved);
    expect_op_error([&] { (void)m.to_int(); }, "to_int", kMoved);
    expect_op_error([&] { (void)m.argwhere(); }, "argwhere", kMoved);
    expect_op_error([&] { (void)x.mask_fill(m, 0); }, "mask_fill", kMoved);
    expect_op_error([&] { (void)where(m, x, x); }, "mask_where", kMoved);

    m = n.bool_not();
    m.to_data().assert_eq(TensorData(std::vector<bool>{false, true, true, true}, Shape{2, 2}));
    x.mask_fill(n, 0).to_data().assert_eq(TensorData(std::vector<float>{0, 2, 3, 4}, Shape{2, 2}));
  }
}

TEST(MovedFromTensor, DispatchRefusesAMissingHandle) {
  // Code holding raw handles (modules, autodiff rules) reaches dispatch
  // without Tensor's check; dispatch names the op too.
  const auto a = Tensor<1>::from_floats({1, 2}, Device::flex());
  expect_op_error([&] { (void)burn::detail::binary(ir::BinaryOp::Add, a.ref(), burn::detail::TensorRef{}); }, "add",
                  kMoved);
  expect_op_error([&] { (void)burn::detail::unary(ir::UnaryOp::Exp, burn::detail::TensorRef{}); }, "exp", kMoved);
  expect_op_error([] { (void)Tensor<1>(burn::detail::TensorRef{}); }, "Tensor", "empty tensor handle");
}

#if BURN_HAS_AUTODIFF
TEST(MovedFromTensor, GradientAccessThrows) {
  const Device device = Device::flex().autodiff();
  auto w = Tensor<1>::from_floats({1, 2}, device).require_grad();
  const auto loss = (w * w).sum();
  const Gradients grads = loss.backward();
  const auto kept = std::move(w);
  expect_op_error([&] { (void)w.grad(grads); }, "grad", kMoved);
  expect_op_error([&] { (void)w.require_grad(); }, "require_grad", kMoved);
  expect_op_error([&] { (void)w.backward(); }, "backward", kMoved);
  kept.grad(grads)->to_data().assert_eq(TensorData(std::vector<float>{2, 4}));
}
#endif

}  // namespace
