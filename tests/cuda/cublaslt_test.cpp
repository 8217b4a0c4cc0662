// cuBLASLt, the library the CUDA backend hands matmuls to: that it loads
// here with every function the backend calls (no GPU needed), which
// matmuls it takes and how they map onto its column-major strided batches.
// On a GPU, device_test.cpp compares its results with flex.
#include <gtest/gtest.h>

#include <burn/burn.hpp>

#include "backends/cuda/cublaslt.hpp"
#include "tensor_spec.hpp"

namespace burn::cuda {
namespace {

using testing::spec;

TEST(CudaCublasLt, LoadsWithEveryFunctionTheBackendCalls) {
  // The toolkit these tests are built with carries libcublasLt.so.<major>.
  EXPECT_EQ(cublaslt_unavailable(), "");
  EXPECT_GE(cublaslt_version(), 120000u) << "cuBLASLt of CUDA 12 or newer";
}

TEST(CudaCublasLt, TakesFloatMatmulsWithOneBatchStridePerOperand) {
  EXPECT_TRUE(cublaslt_takes(spec({33, 17}), spec({17, 9}), spec({33, 9})));
  for (DType d : {DType::F16, DType::BF16, DType::F64})
    EXPECT_TRUE(cublaslt_takes(spec({2, 8, 4}, d), spec({2, 4, 3}, d), spec({2, 8, 3}, d))) << dtype_name(d);
  // One side broadcast over every batch dim: batch stride 0.
  EXPECT_TRUE(cublaslt_takes(spec({4, 2, 33, 17}), spec({1, 1, 17, 9}), spec({4, 2, 33, 9})));
  EXPECT_TRUE(cublaslt_takes(spec({1, 33, 17}), spec({5, 17, 9}), spec({5, 33, 9})));
  // Broadcast both ways needs two strides per operand: the generated kernel.
  EXPECT_FALSE(cublaslt_takes(spec({3, 1, 2, 3}), spec({1, 4, 3, 2}), spec({3, 4, 2, 2})));
  // Ints, mixed dtypes and empty matrices too.
  EXPECT_FALSE(cublaslt_takes(spec({2, 3}, DType::I32), spec({3, 4}, DType::I32), spec({2, 4}, DType::I32)));
  EXPECT_FALSE(cublaslt_takes(spec({2, 3}, DType::F16), spec({3, 4}), spec({2, 4})));
  EXPECT_FALSE(cublaslt_takes(spec({2, 0}), spec({0, 4}), spec({2, 4})));
  EXPECT_FALSE(cublaslt_takes(spec({0, 3}), spec({3, 4}), spec({0, 4})));
}

TEST(CudaCublasLt, ProblemsAreTheRowMajorShapes) {
  const LtProblem plain = lt_problem(spec({33, 17}), spec({17, 9}), spec({33, 9}));
  EXPECT_EQ(plain.m, 33u);
  EXPECT_EQ(plain.n, 9u);
  EXPECT_EQ(plain.k, 17u);
  EXPECT_EQ(plain.batch, 1u);
  EXPECT_FALSE(plain.a_broadcast || plain.b_broadcast);

  const LtProblem batched =
      lt_problem(spec({4, 2, 33, 17}, DType::BF16), spec({1, 1, 17, 9}, DType::BF16), spec({4, 2, 33, 9}, DType::BF16));
  EXPECT_EQ(batched.dtype, DType::BF16);
  EXPECT_EQ(batched.batch, 8u);
  EXPECT_FALSE(batched.a_broadcast);
  EXPECT_TRUE(batched.b_broadcast);
  // Different problems are cached apart.
  EXPECT_NE(plain.key(), batched.key());
}

}  // namespace
}  // namespace burn::cuda
