// cuDNN, the library the CUDA backend hands convolutions to: that it loads
// here with every function the backend calls (no GPU needed), which ops it
// takes and the dims it is given. On a GPU, device_test.cpp compares its
// convolutions with flex.
#include <gtest/gtest.h>

#include <burn/burn.hpp>

#include "backends/cuda/cudnn.hpp"
#include "tensor_spec.hpp"

namespace burn::cuda {
namespace {

using testing::spec;

TEST(CudaCudnn, LoadsWithEveryFunctionTheBackendCalls) {
  // These machines carry cuDNN 9 beside the toolkit.
  EXPECT_EQ(cudnn_unavailable(), "");
  EXPECT_GE(cudnn_version(), 90000u) << "cuDNN 9";
}

TEST(CudaCudnn, TakesFloatConvolutionsOfOneToThreeSpatialDims) {
  const ir::Conv conv2d{{1, 1}, {1, 1}, {1, 1}, 1, true};
  const std::vector<ir::TensorSpec> in2{spec({2, 3, 8, 8}), spec({4, 3, 3, 3}), spec({4})};
  const std::vector<ir::TensorSpec> out2{spec({2, 4, 8, 8})};
  EXPECT_TRUE(cudnn_takes(conv2d, in2, out2));
  for (DType d : {DType::F16, DType::BF16, DType::F64}) {
    const std::vector<ir::TensorSpec> in{spec({2, 3, 8, 8}, d), spec({4, 3, 3, 3}, d), spec({4}, d)};
    EXPECT_TRUE(cudnn_takes(conv2d, in, std::vector{spec({2, 4, 8, 8}, d)})) << dtype_name(d);
  }
  const ir::Conv conv1d{{2}, {1}, {1}, 1, false};
  EXPECT_TRUE(cudnn_takes(conv1d, std::vector{spec({2, 3, 9}), spec({4, 3, 3})}, std::vector{spec({2, 4, 5})}));
  const ir::ConvWeightGrad grad{{3, 3}, {1, 1}, {1, 1}, {1, 1}, 1};
  EXPECT_TRUE(cudnn_takes(grad, std::vector{spec({2, 3, 8, 8}), spec({2, 4, 8, 8})}, std::vector{spec({4, 3, 3, 3})}));
  // Transposed: an output padding below the stride is cuDNN's backward
  // data; one at the stride or above (dilation 2, stride 1) is not.
  const ir::ConvTranspose up{{2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, false};
  EXPECT_TRUE(cudnn_takes(up, std::vector{spec({1, 3, 4, 4}), spec({3, 2, 3, 3})}, std::vector{spec({1, 2, 8, 8})}));
  const ir::ConvTranspose dilated{{1, 1}, {0, 0}, {1, 0}, {2, 2}, 1, false};
  EXPECT_FALSE(
      cudnn_takes(dilated, std::vector{spec({1, 3, 4, 4}), spec({3, 2, 3, 3})}, std::vector{spec({1, 2, 9, 8})}));
  // Not: int dtypes, mixed dtypes, empty tensors, other ops.
  const std::vector<ir::TensorSpec> ints{spec({2, 3, 8, 8}, DType::I32), spec({4, 3, 3, 3}, DType::I32),
                                         spec({4}, DType::I32)};
  EXPECT_FALSE(cudnn_takes(conv2d, ints, std::vector{spec({2, 4, 8, 8}, DType::I32)}));
  const std::vector<ir::TensorSpec> mixed{spec({2, 3, 8, 8}, DType::F16), spec({4, 3, 3, 3}), spec({4})};
  EXPECT_FALSE(cudnn_takes(conv2d, mixed, out2));
  const std::vector<ir::TensorSpec> empty{spec({0, 3, 8, 8}), spec({4, 3, 3, 3}), spec({4})};
  EXPECT_FALSE(cudnn_takes(conv2d, empty, std::vector{spec({0, 4, 8, 8})}));
  EXPECT_FALSE(cudnn_takes(ir::Matmul{}, std::vector{spec({2, 3}), spec({3, 4})}, std::vector{spec({2, 4})}));
}

TEST(CudaCudnn, OneDimensionalConvolutionsGetAHeightOfOne) {
  EXPECT_EQ(cudnn_dims(Shape{2, 3, 9}), (std::vector<int>{2, 3, 1, 9}));
  EXPECT_EQ(cudnn_dims(Shape{2, 3, 8, 7}), (std::vector<int>{2, 3, 8, 7}));
  EXPECT_EQ(cudnn_dims(Shape{1, 2, 4, 5, 3}), (std::vector<int>{1, 2, 4, 5, 3}));
}

}  // namespace
}  // namespace burn::cuda
