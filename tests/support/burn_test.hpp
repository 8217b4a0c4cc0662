// Shared helpers for the test suites: the devices and dtypes each case runs
// on (every backend in the build x every dtype the op accepts).
#pragma once

#include <burn/backend/registry.hpp>
#include <burn/burn.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <source_location>
#include <string>
#include <vector>

namespace burn::testing {

/// Device 0 of every backend in the build that has one on this machine, in
/// the registry's default order (a Vulkan backend runs every suite where an
/// adapter exists). An alias family (wgpu, which is Vulkan on Linux) is left
/// out when the backend it names is in the list too, and so is capture,
/// which records instead of computing. With BURN_TEST_REMOTE
/// set ("127.0.0.1:PORT/flex:0"), that server's device comes last.
inline std::vector<Device> all_devices() {
  std::vector<Device> out;
  for (const auto& backend : backend::registered_backends()) {
    if (backend.alias_of || backend.records_only) continue;
    if (backend.device_count() > 0) out.push_back(Device(DispatchDevice{backend.type, 0}));
  }
#if BURN_HAS_REMOTE
  // A server's device, when the suite runs against one (tests/remote/with_server.sh).
  if (const char* remote = std::getenv("BURN_TEST_REMOTE"); remote && *remote)
    out.push_back(Device::parse(std::string("remote:") + remote));
#endif
  return out;
}

/// The reference device other backends are compared with.
inline Device reference_device() {
#if BURN_HAS_NDARRAY
  return Device::ndarray();
#else
  return Device();
#endif
}

inline const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> d{DType::F32, DType::F64, DType::F16, DType::BF16};
  return d;
}
inline const std::vector<DType>& int_dtypes() {
  static const std::vector<DType> d{DType::I64, DType::I32, DType::I16, DType::I8,
                                    DType::U64, DType::U32, DType::U16, DType::U8};
  return d;
}
inline const std::vector<DType>& signed_int_dtypes() {
  static const std::vector<DType> d{DType::I64, DType::I32, DType::I16, DType::I8};
  return d;
}

/// One test parameter: a device and a dtype.
struct DeviceDType {
  Device device;
  DType dtype;
};

/// Every device x dtype pair the device supports (LibTorch has no u16/u32/u64).
inline std::vector<DeviceDType> combos(const std::vector<DType>& dtypes) {
  std::vector<DeviceDType> out;
  for (const auto& d : all_devices())
    for (auto t : dtypes)
      if (d.supports_dtype(t)) out.push_back({d, t});
  return out;
}

/// Readable parameter values in gtest output ("flex:0 / f16").
inline void PrintTo(const DeviceDType& p, std::ostream* os) { *os << p.device.to_string() << " / " << p.dtype; }

/// gtest parameter name: "ndarray_f32".
inline std::string combo_name(const ::testing::TestParamInfo<DeviceDType>& info) {
  return std::string(info.param.device.type().name()) + "_" + std::string(dtype_name(info.param.dtype));
}

/// Host data of `dtype` from doubles (converted with the dtype's rounding).
inline TensorData data_of(const std::vector<double>& values, Shape shape, DType dtype) {
  return TensorData(values, std::move(shape)).convert(dtype);
}

/// A Float tensor of `dtype` on `device`.
template <std::size_t D>
Tensor<D> float_tensor(const std::vector<double>& values, Shape shape, const Device& device, DType dtype) {
  return Tensor<D>::from_data(data_of(values, std::move(shape), dtype), {device, dtype});
}
/// An Int tensor of `dtype` on `device`.
template <std::size_t D>
Tensor<D, Int> int_tensor(const std::vector<std::int64_t>& values, Shape shape, const Device& device,
                          DType dtype = DType::I64) {
  return Tensor<D, Int>::from_data(TensorData(values, std::move(shape)).convert(dtype), {device, dtype});
}
template <std::size_t D>
Tensor<D, Bool> bool_tensor(const std::vector<bool>& values, Shape shape, const Device& device) {
  return Tensor<D, Bool>::from_data(TensorData(values, std::move(shape)), device);
}

/// Asserts `actual` matches expected doubles within the dtype's tolerance
/// (exactly for int and bool dtypes).
inline void expect_values(const TensorData& actual, const std::vector<double>& expected, Shape shape,
                          Tolerance tol = {}) {
  const TensorData want = TensorData(expected, std::move(shape));
  if (is_float(actual.dtype())) {
    const Tolerance t = (tol.relative == Tolerance{}.relative && tol.absolute == Tolerance{}.absolute)
                            ? Tolerance::default_for(actual.dtype())
                            : tol;
    actual.assert_approx_eq(want, t);
  } else {
    actual.assert_eq(want.convert(actual.dtype()));
  }
}

/// Runs `body` and expects a burn::Error whose message contains `fragment`.
template <class F>
void expect_error(F&& body, const std::string& fragment) {
  try {
    body();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message \"" << e.what() << "\" lacks \"" << fragment << "\"";
    return;
  }
  ADD_FAILURE() << "expected a burn::Error containing \"" << fragment << "\"";
}

/// Runs `body` and expects a burn::Error whose message starts with "[op]" and,
/// when given, contains `fragment`; failures are reported at the caller's line.
template <class F>
void expect_op_error(F&& body, const std::string& op, const std::string& fragment = "",
                     std::source_location loc = std::source_location::current()) {
  const std::string prefix = "[" + op + "]";
  try {
    body();
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(prefix, 0) != 0)
      ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line()))
          << "message \"" << msg << "\" does not start with \"" << prefix << "\"";
    if (!fragment.empty() && msg.find(fragment) == std::string::npos)
      ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line()))
          << "message \"" << msg << "\" lacks \"" << fragment << "\"";
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line()))
        << "expected a burn::Error starting with " << prefix << ", got another exception: " << e.what();
    return;
  }
  ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line())) << "expected a burn::Error starting with " << prefix;
}

}  // namespace burn::testing
