// Device::cuda where the machine has no usable NVIDIA driver (these tests'
// usual case) and, where it has a GPU, the first ops on it.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>

#include <burn/backend/registry.hpp>
#include <burn/burn.hpp>

#include "backends/cuda/driver.hpp"
#include "device/runtime.hpp"

namespace burn {
namespace {

bool has_gpu() { return cuda::driver().unavailable.empty(); }

TEST(CudaWithoutDriver, DeviceCudaIsAClearDeviceError) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a CUDA device; the no-driver behaviour cannot be seen";
  try {
    (void)Device::cuda();
    FAIL() << "Device::cuda() succeeded without a driver";
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), DeviceErrorKind::NotAvailable);
    EXPECT_NE(what.find("no CUDA device: "), std::string::npos) << what;
    EXPECT_NE(what.find(cuda::driver().unavailable), std::string::npos) << what;
  }
  EXPECT_THROW((void)Device::cuda(1), DeviceError);
  // Parsed (burn-train --device cuda, BURN_DEVICE=cuda), the error says why too.
  try {
    (void)Device::parse("cuda:0");
    FAIL() << "Device::parse(\"cuda:0\") succeeded without a driver";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device: " + cuda::driver().unavailable), std::string::npos)
        << e.what();
  }
}

TEST(CudaWithoutDriver, DefaultDeviceAndEnumerationSkipCuda) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a CUDA device";
  EXPECT_TRUE(Device::enumerate(DeviceType::Cuda).empty());
  EXPECT_NE(Device().type(), DeviceType::Cuda);
  for (const Device& d : Device::enumerate(DeviceFilter{})) EXPECT_NE(d.type(), DeviceType::Cuda) << d.to_string();
  EXPECT_EQ(cuda::driver().device_count, 0u);
  // burn-info prints the registry's reason next to "cuda: 0 device(s)".
  const backend::BackendFactory* factory = backend::find_backend(DeviceType::Cuda.kind());
  ASSERT_NE(factory, nullptr);
  ASSERT_NE(factory->why_no_device, nullptr);
  EXPECT_EQ(factory->why_no_device(), "no CUDA device: " + cuda::driver().unavailable);
}

// Run by the ctest entry burn_cuda_stub_driver with BURN_CUDA_DRIVER set to
// the toolkit's stub libcuda.so: a library that loads, exports every
// function and whose cuInit fails, as a broken driver installation would.
TEST(CudaStubDriver, AFailingCuInitIsNamedInTheError) {
  const char* configured = std::getenv("BURN_CUDA_DRIVER");
  if (configured == nullptr || *configured == '\0')
    GTEST_SKIP() << "runs under the ctest entry burn_cuda_stub_driver (BURN_CUDA_DRIVER=<stub libcuda.so>)";
  const std::string& why = cuda::driver().unavailable;
  EXPECT_NE(why.find("cuInit failed"), std::string::npos) << why;
  try {
    (void)Device::cuda();
    FAIL() << "Device::cuda() succeeded on the stub driver";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device: cuInit failed"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(Device::enumerate(DeviceType::Cuda).empty());
}

TEST(CudaWithoutDriver, AMissingDriverLibraryIsNamed) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a CUDA device";
  const char* configured = std::getenv("BURN_CUDA_DRIVER");
  if (configured != nullptr && *configured != '\0') GTEST_SKIP() << "BURN_CUDA_DRIVER is set";
  EXPECT_NE(cuda::driver().unavailable.find("libcuda.so.1"), std::string::npos) << cuda::driver().unavailable;
}

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_gpu()) GTEST_SKIP() << "no CUDA device: " << cuda::driver().unavailable;
  }
};

TEST_F(CudaDevice, ElementwiseOpsMatchFlex) {
  const Device gpu = Device::cuda();
  const Device cpu = Device::flex();
  const std::vector<float> a{-2.5f, -1.0f, 0.0f, 0.5f, 1.5f, 3.0f};
  const std::vector<float> b{1.0f, 2.0f, -3.0f, 4.0f, 0.25f, -1.5f};
  const auto run = [&](const Device& d) {
    auto x = Tensor<2>::from_data(TensorData(a, Shape{2, 3}), d);
    auto y = Tensor<2>::from_data(TensorData(b, Shape{2, 3}), d);
    auto bias = Tensor<2>::from_data(TensorData(std::vector<float>{1.0f, -1.0f, 2.0f}, Shape{1, 3}), d);
    auto r = ((x * y + bias).exp().clamp(0.0f, 50.0f) - x.abs()).remainder(y);
    return r.to_data().to_vec<float>();
  };
  const auto want = run(cpu);
  const auto got = run(gpu);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << i;
}

TEST_F(CudaDevice, IntegerDivisionByZeroIsAnExecutionErrorAtSync) {
  const Device gpu = Device::cuda();
  auto x = Tensor<1, Int>::from_data(TensorData(std::vector<std::int64_t>{4, 5}, Shape{2}), gpu);
  auto z = Tensor<1, Int>::from_data(TensorData(std::vector<std::int64_t>{2, 0}, Shape{2}), gpu);
  auto q = x / z;
  try {
    gpu.sync();
    FAIL() << "division by zero was not reported";
  } catch (const ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find("integer division by zero"), std::string::npos) << e.what();
  }
  gpu.sync();  // reported once
}

TEST_F(CudaDevice, BatchedMatmulMatchesFlex) {
  const Device cpu = Device::flex();
  cpu.seed(3);
  const auto a = Tensor<3>::random(Shape{4, 33, 17}, Distribution::Default, cpu);
  const auto b = Tensor<3>::random(Shape{1, 17, 9}, Distribution::Default, cpu);
  const auto want = a.matmul(b).to_data().to_vec<float>();
  const auto got = a.to_device(Device::cuda()).matmul(b.to_device(Device::cuda())).to_data().to_vec<float>();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f) << i;
}

// Through cuBLASLt (the description says whether it is in use): f32, f16
// and bf16, batched with one side broadcast, against flex.
TEST_F(CudaDevice, MatmulByCublasLtMatchesFlex) {
  const std::string description = Device::cuda().runtime().backend().description();
  EXPECT_NE(description.find("matmul by cuBLASLt"), std::string::npos) << description;
  const Device cpu = Device::flex();
  cpu.seed(11);
  const auto a = Tensor<3>::random(Shape{3, 64, 96}, Distribution::uniform(-1.0, 1.0), cpu);
  const auto b = Tensor<3>::random(Shape{1, 96, 80}, Distribution::uniform(-1.0, 1.0), cpu);
  for (const DType d : {DType::F32, DType::F16, DType::BF16}) {
    const auto want = a.cast(d).matmul(b.cast(d)).cast(DType::F32).to_data().to_vec<float>();
    const auto got = a.cast(d)
                         .to_device(Device::cuda())
                         .matmul(b.cast(d).to_device(Device::cuda()))
                         .cast(DType::F32)
                         .to_data()
                         .to_vec<float>();
    ASSERT_EQ(got.size(), want.size());
    // Sums of 96 products in f32 either way; the half types round the result.
    const float tolerance = d == DType::F32 ? 1e-4f : d == DType::F16 ? 2e-2f : 1.5e-1f;
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], tolerance) << dtype_name(d) << " element " << i;
  }
}

// Through cuDNN (the description says whether it is in use): a grouped,
// strided 2-d convolution with bias in f32 and f16, a 1-d one, a transposed
// one with output padding, and the weight gradient autodiff asks for,
// against flex.
TEST_F(CudaDevice, ConvolutionsByCudnnMatchFlex) {
  const std::string description = Device::cuda().runtime().backend().description();
  EXPECT_NE(description.find("convolutions by cuDNN"), std::string::npos) << description;
  const Device cpu = Device::flex();
  cpu.seed(13);
  const auto uniform = Distribution::uniform(-1.0, 1.0);
  const auto x = Tensor<4>::random(Shape{2, 4, 17, 15}, uniform, cpu);
  const auto w = Tensor<4>::random(Shape{6, 2, 3, 3}, uniform, cpu);
  const auto b = Tensor<1>::random(Shape{6}, uniform, cpu);
  const module::ConvOptions<2> strided{{2, 1}, {1, 1}, {1, 2}, 2};
  const auto near = [](const TensorData& got, const TensorData& want, float tolerance, const char* what) {
    const auto g = got.convert(DType::F32).to_vec<float>();
    const auto v = want.convert(DType::F32).to_vec<float>();
    ASSERT_EQ(g.size(), v.size()) << what;
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_NEAR(g[i], v[i], tolerance) << what << " element " << i;
  };
  const Device gpu = Device::cuda();
  for (const DType d : {DType::F32, DType::F16}) {
    const float tolerance = d == DType::F32 ? 1e-4f : 3e-2f;
    const auto want = module::conv2d(x.cast(d), w.cast(d), b.cast(d), strided).to_data();
    const auto got =
        module::conv2d(x.cast(d).to_device(gpu), w.cast(d).to_device(gpu), b.cast(d).to_device(gpu), strided);
    near(got.to_data(), want, tolerance, "conv2d");
  }
  const auto x1 = Tensor<3>::random(Shape{3, 5, 40}, uniform, cpu);
  const auto w1 = Tensor<3>::random(Shape{7, 5, 4}, uniform, cpu);
  const module::ConvOptions<1> one{{3}, {2}, {1}, 1};
  near(module::conv1d(x1.to_device(gpu), w1.to_device(gpu), std::nullopt, one).to_data(),
       module::conv1d(x1, w1, std::nullopt, one).to_data(), 1e-4f, "conv1d");
  const auto wt = Tensor<4>::random(Shape{4, 3, 3, 3}, uniform, cpu);
  const auto bt = Tensor<1>::random(Shape{3}, uniform, cpu);
  const module::ConvTransposeOptions<2> up{{2, 2}, {1, 1}, {1, 0}, {1, 1}, 1};
  near(module::conv_transpose2d(x.to_device(gpu), wt.to_device(gpu), bt.to_device(gpu), up).to_data(),
       module::conv_transpose2d(x, wt, bt, up).to_data(), 1e-4f, "conv_transpose2d");
  // The weight gradient (ConvWeightGrad) through autodiff.
  const auto weight_grad = [&](const Device& d) {
    // A tensor keeps its autodiff context across devices: tracked once moved.
    const auto wg = w.to_device(d).autodiff().require_grad();
    const auto y = module::conv2d(x.to_device(d).autodiff(), wg, std::nullopt, strided);
    const auto grads = (y * y).sum().backward();
    return wg.grad(grads)->to_data();
  };
  near(weight_grad(gpu), weight_grad(cpu), 1e-3f, "conv weight gradient");
}

TEST_F(CudaDevice, RandomDrawsRepeatAfterTheSameSeed) {
  const Device gpu = Device::cuda();
  const auto draw = [&] {
    return Tensor<1>::random(Shape{100000}, Distribution::normal(1.0, 2.0), gpu).to_data().to_vec<float>();
  };
  gpu.seed(7);
  const auto first = draw();
  const auto second = draw();
  gpu.seed(7);
  EXPECT_EQ(draw(), first);
  EXPECT_NE(second, first);
  double mean = 0;
  for (float v : first) mean += v / static_cast<double>(first.size());
  EXPECT_NEAR(mean, 1.0, 0.05);
}

TEST_F(CudaDevice, SortAndInterpolateMatchFlex) {
  const Device cpu = Device::flex();
  cpu.seed(5);
  // Ties on purpose: the sort must be stable.
  const auto x = (Tensor<2>::random(Shape{64, 300}, Distribution::Default, cpu) * 8.0f).floor();
  const auto [want_values, want_indices] = x.sort_descending_with_indices(1);
  const auto [values, indices] = x.to_device(Device::cuda()).sort_descending_with_indices(1);
  EXPECT_EQ(values.to_data().to_vec<float>(), want_values.to_data().to_vec<float>());
  EXPECT_EQ(indices.to_data().to_vec<std::int64_t>(), want_indices.to_data().to_vec<std::int64_t>());

  const auto image = Tensor<4>::random(Shape{2, 3, 17, 9}, Distribution::Default, cpu);
  const module::InterpolateOptions bicubic{module::InterpolateMode::Bicubic, false};
  const auto want = module::interpolate(image, {31, 5}, bicubic).to_data().to_vec<float>();
  const auto got = module::interpolate(image.to_device(Device::cuda()), {31, 5}, bicubic).to_data().to_vec<float>();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << i;
}

// Long lines fold by block on the GPU (256 threads a line, merged in a
// fixed tree): reductions along and across memory, argmax and argmin with
// ties and a NaN (the first position wins, as on the CPU), softmax and layer
// norm over rows of 1,030 (one block row kernel each), and batch norm as its
// one kernel, against flex.
TEST_F(CudaDevice, LongLinesFoldByBlockAndMatchFlex) {
  const Device cpu = Device::flex();
  const Device gpu = Device::cuda();
  cpu.seed(17);
  const auto close = [](const TensorData& got, const TensorData& want, float tolerance, const char* what) {
    const auto g = got.convert(DType::F32).to_vec<float>();
    const auto v = want.convert(DType::F32).to_vec<float>();
    ASSERT_EQ(g.size(), v.size()) << what;
    for (std::size_t i = 0; i < v.size(); ++i)
      ASSERT_NEAR(g[i], v[i], tolerance * (1 + std::abs(v[i]))) << what << " element " << i;
  };
  const auto x = Tensor<2>::random(Shape{37, 1030}, Distribution::Default, cpu);
  const auto xg = x.to_device(gpu);
  close(xg.sum_dim(1).to_data(), x.sum_dim(1).to_data(), 1e-5f, "sum along rows");
  close(xg.max_dim(1).to_data(), x.max_dim(1).to_data(), 0.0f, "max along rows");
  const auto tall = x.reshape({1030, 37});
  close(tall.to_device(gpu).mean_dim(0).to_data(), tall.mean_dim(0).to_data(), 1e-5f, "mean across rows");

  // Ties everywhere, and a NaN in row 3 after an earlier maximum.
  std::vector<float> values(4 * 700);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 7919) % 13);
  values[3 * 700 + 611] = std::nanf("");
  const auto ties = Tensor<2>::from_data(TensorData(values, Shape{4, 700}), cpu);
  for (const bool max : {true, false}) {
    const auto want = (max ? ties.argmax(1) : ties.argmin(1)).to_data().to_vec<std::int64_t>();
    const auto got = (max ? ties.to_device(gpu).argmax(1) : ties.to_device(gpu).argmin(1)).to_data();
    EXPECT_EQ(got.to_vec<std::int64_t>(), want) << (max ? "argmax" : "argmin");
  }

  close(activation::softmax(xg, 1).to_data(), activation::softmax(x, 1).to_data(), 1e-5f, "softmax");
  const auto w = Tensor<1>::random(Shape{1030}, Distribution::Default, cpu);
  const auto b = Tensor<1>::random(Shape{1030}, Distribution::Default, cpu);
  close(module::layer_norm(xg, w.to_device(gpu), b.to_device(gpu), 1e-5).to_data(),
        module::layer_norm(x, w, b, 1e-5).to_data(), 1e-4f, "layer norm");

  EXPECT_TRUE(gpu.supports_op(ir::BatchNorm{}));
  const auto images = Tensor<4>::random(Shape{8, 3, 20, 17}, Distribution::Default, cpu);
  const auto gamma = Tensor<1>::random(Shape{3}, Distribution::Default, cpu);
  const auto beta = Tensor<1>::random(Shape{3}, Distribution::Default, cpu);
  const auto batch_norm = [&](const Device& d) {
    const std::array<detail::TensorRef, 3> in{images.to_device(d).ref(), gamma.to_device(d).ref(),
                                              beta.to_device(d).ref()};
    return detail::execute(ir::BatchNorm{1e-5}, in);
  };
  const auto want = batch_norm(cpu);
  const auto got = batch_norm(gpu);
  const char* names[] = {"batch norm y", "batch norm mean", "batch norm var"};
  for (std::size_t k = 0; k < 3; ++k)
    close(Tensor<1>(detail::reshape_exact(got[k], Shape{got[k]->spec.shape.num_elements()})).to_data(),
          Tensor<1>(detail::reshape_exact(want[k], Shape{want[k]->spec.shape.num_elements()})).to_data(), 1e-4f,
          names[k]);
}

}  // namespace
}  // namespace burn
