// Helpers of the Vulkan suite: the device under test (vulkan:0, lavapipe in
// CI), the reference device, random inputs, and the agreement check that runs
// an op on both devices and compares the results.
#pragma once

#include <burn_test.hpp>

#include <functional>
#include <string>
#include <vector>

namespace burn::vktest {

using burn::detail::TensorRef;

inline Device vk() { return Device::vulkan(); }
inline Device ref() { return Device::ndarray(); }

/// Uniform random values in [lo, hi) on the reference device, cast to `dtype`
/// (ints truncate toward zero).
inline TensorRef rand(const Shape& shape, DType dtype, double lo = -2.0, double hi = 2.0) {
  auto f = burn::detail::random(shape, Distribution::uniform(lo, hi), {ref(), DType::F64}, TensorKind::Float);
  return dtype == DType::F64 ? f : burn::detail::cast(f, dtype);
}
inline TensorRef rand_bool(const Shape& shape) {
  auto f = burn::detail::random(shape, Distribution::bernoulli(0.5), {ref(), DType::F32}, TensorKind::Float);
  return burn::detail::cast(f, DType::Bool);
}
/// Host values of `dtype` (converted from doubles) on `device`.
inline TensorRef values(const std::vector<double>& v, const Shape& shape, DType dtype, const Device& device) {
  return burn::detail::from_data(TensorData(v, shape).convert(dtype), {device, dtype},
                                 is_float(dtype)  ? TensorKind::Float
                                 : is_bool(dtype) ? TensorKind::Bool
                                                  : TensorKind::Int);
}

/// Exact for ints and bools, the dtype's tolerance for floats.
inline void expect_same(const TensorData& got, const TensorData& want) {
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  if (is_float(want.dtype())) got.assert_approx_eq(want, Tolerance::default_for(want.dtype()));
  else got.assert_eq(want);
}

/// Runs `op` on `inputs` (reference tensors) and on their copies on vulkan:0;
/// the vulkan result must live there and agree with the reference.
inline void agree(const std::string& what, const std::function<TensorRef(const std::vector<TensorRef>&)>& op,
                  const std::vector<TensorRef>& inputs) {
  SCOPED_TRACE(what);
  try {
    const TensorRef want = op(inputs);
    std::vector<TensorRef> moved;
    for (const auto& t : inputs) moved.push_back(burn::detail::to_device(t, vk()));
    const TensorRef got = op(moved);
    EXPECT_EQ(got->device, vk());
    expect_same(burn::detail::to_data(got), burn::detail::to_data(want));
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

inline std::string name_of(DType d) { return std::string(dtype_name(d)); }

/// Output `output` of `op` run on `in` through the dispatcher.
inline TensorRef run(const ir::Op& op, const std::vector<TensorRef>& in, std::size_t output = 0) {
  return burn::detail::execute(op, in)[output];
}

}  // namespace burn::vktest
