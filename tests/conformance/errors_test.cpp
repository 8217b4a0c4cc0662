// Errors shared by every op family: device mismatch (both devices named, with
// the to_device hint), rank mismatch reaching the untyped layer, and handles
// of the wrong rank or kind. Per-op errors live with each family's tests.
#include "conformance.hpp"

namespace burn::conformance {
namespace {

/// Expects "[op] ..." naming both devices and suggesting to_device.
template <class F>
void expect_device_mismatch(F&& body, const std::string& op, const Device& a, const Device& b,
                            std::source_location loc = std::source_location::current()) {
  try {
    body();
    ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line())) << "mixing devices in " << op << " must throw";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[" + op + "]", 0), 0u) << msg << " (line " << loc.line() << ")";
    EXPECT_NE(msg.find(a.to_string()), std::string::npos) << msg << " (line " << loc.line() << ")";
    EXPECT_NE(msg.find(b.to_string()), std::string::npos) << msg << " (line " << loc.line() << ")";
    EXPECT_NE(msg.find("to_device"), std::string::npos) << msg << " (line " << loc.line() << ")";
  }
}

TEST(Errors, DeviceMismatchInEveryInputPosition) {
  const auto devices = burn::testing::all_devices();
  if (devices.size() < 2) return;  // a single-backend build has nothing to mix
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Device& da = devices[i];
    const Device& db = devices[(i + 1) % devices.size()];
    SCOPED_TRACE(da.to_string() + " with " + db.to_string());
    auto a = Tensor<2>::ones({2, 2}, da);
    auto b = Tensor<2>::ones({2, 2}, db);
    auto idx = Tensor<2, Int>::zeros({2, 2}, db);
    auto sel = Tensor<1, Int>::zeros({1}, db);
    auto mask = Tensor<2, Bool>::zeros({2, 2}, db);
    expect_device_mismatch([&] { (void)(a - b); }, "sub", da, db);
    expect_device_mismatch([&] { (void)a.matmul(b); }, "matmul", da, db);
    expect_device_mismatch([&] { (void)a.greater(b); }, "greater", da, db);
    expect_device_mismatch([&] { (void)a.gather(0, idx); }, "gather", da, db);
    expect_device_mismatch([&] { (void)a.scatter(0, idx, a); }, "scatter", da, db);
    expect_device_mismatch([&] { (void)a.select(0, sel); }, "select", da, db);
    expect_device_mismatch([&] { (void)a.mask_fill(mask, 1.0); }, "mask_fill", da, db);
    expect_device_mismatch([&] { (void)a.mask_where(mask.to_device(da), b); }, "mask_where", da, db);
    expect_device_mismatch([&] { (void)a.slice_assign({{0, 1}}, b.slice({{0, 1}})); }, "slice_assign", da, db);
    expect_device_mismatch([&] { (void)Tensor<2>::cat({a, b}, 0); }, "cat", da, db);
    // Moving first makes it work.
    auto sum = a + b.to_device(da);
    EXPECT_EQ(sum.device(), da);
    expect_tensor(sum, {2, 2}, {2, 2, 2, 2});
  }
}

TEST(Errors, RankMismatchReachingTheUntypedLayer) {
  for (const auto& d : burn::testing::all_devices()) {
    SCOPED_TRACE(d.to_string());
    auto a = Tensor<2>::ones({2, 3}, d);
    auto b = Tensor<3>::ones({1, 2, 3}, d);
    expect_op_error([&] { (void)burn::detail::binary(ir::BinaryOp::Add, a.ref(), b.ref()); }, "add");
    expect_op_error([&] { (void)burn::detail::matmul(a.ref(), b.ref()); }, "matmul");
    const burn::detail::TensorRef pieces[] = {a.ref(), b.ref()};
    expect_op_error([&] { (void)burn::detail::cat(pieces, 0); }, "cat");
    auto idx = Tensor<1, Int>::zeros({3}, d);
    expect_op_error([&] { (void)burn::detail::gather(a.ref(), 0, idx.ref()); }, "gather");
  }
}

TEST(Errors, WrongRankOrKindForTheTensorType) {
  for (const auto& d : burn::testing::all_devices()) {
    SCOPED_TRACE(d.to_string());
    // Data of rank 1 for a Tensor<2>.
    burn::testing::expect_error(
        [&] {
          (void)Tensor<2>::from_data(TensorData(std::vector<float>{1, 2, 3, 4}, Shape{4}), d);
        },
        "rank");
    auto i = Tensor<1, Int>::ones({2}, d);
    burn::testing::expect_error([&] { (void)Tensor<1>(i.ref()); }, "Float");
    burn::testing::expect_error([&] { (void)Tensor<2, Int>(i.ref()); }, "rank");
  }
}

}  // namespace
}  // namespace burn::conformance
