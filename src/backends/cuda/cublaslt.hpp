// Matmul through cuBLASLt, NVIDIA's GEMM library, opened with dlopen on
// first use (libcublasLt.so.<major> of the toolkit burn was built with), as
// the driver and NVRTC are: without it the backend runs matmul on its
// generated kernel, slower but the same answer.
//
// Row-major tensors are handed over as the column-major transposes cuBLASLt
// works in: out = a·b is outᵀ = bᵀ·aᵀ, with b's elements as the first
// operand and a's as the second, so nothing is copied or transposed. Batch
// dims become one strided batch; an operand whose batch dims are all 1 is
// read with batch stride 0 (broadcast). f32 accumulates in f32 (TF32 only
// where the device allows it: BURN_CUDA_ALLOW_TF32=1), f16 and bf16 in f32,
// f64 in f64.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "backends/cuda/launch.hpp"

namespace burn::cuda {

/// Empty when cuBLASLt can be used; else why not.
const std::string& cublaslt_unavailable();

/// cuBLASLt's version (as cublasLtGetVersion: 10000·major + 100·minor +
/// patch), 0 when unavailable.
std::size_t cublaslt_version();

/// Whether cuBLASLt takes `out = a · b`: f32, f16, bf16 or f64 on both
/// sides, no empty dim, and batch dims equal on both sides or all 1 on one.
bool cublaslt_takes(const ir::TensorSpec& a, const ir::TensorSpec& b, const ir::TensorSpec& out);

/// The shape of one cuBLASLt call, in cuBLASLt's column-major terms.
struct LtProblem {
  DType dtype = DType::F32;
  std::uint64_t m = 0, n = 0, k = 0;  ///< out is [batch, m, n] row-major
  std::uint64_t batch = 1;
  bool a_broadcast = false;  ///< a's batch dims are all 1 (batch stride 0)
  bool b_broadcast = false;
  auto key() const { return std::tuple(dtype, m, n, k, batch, a_broadcast, b_broadcast); }
};

/// The problem of `out = a · b` (cublaslt_takes must hold).
LtProblem lt_problem(const ir::TensorSpec& a, const ir::TensorSpec& b, const ir::TensorSpec& out);

/// One device's cuBLASLt handle and the algorithms chosen so far, by
/// problem. Create and use it with the device's context current.
class LtMatmul {
 public:
  /// Throws ConfigurationError when cuBLASLt is unavailable or the handle
  /// cannot be made.
  LtMatmul(CUstream stream, bool allow_tf32);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  /// Workspace the algorithms may use, in bytes.
  static constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

  /// Queues out = a · b (device addresses) on the stream, with `workspace`
  /// (kWorkspaceBytes). Returns false, queueing nothing, when cuBLASLt has
  /// no algorithm for the problem; throws ExecutionError when a call fails.
  bool run(const LtProblem& problem, std::uint64_t a, std::uint64_t b, std::uint64_t out, std::uint64_t workspace);

  bool allow_tf32() const noexcept { return allow_tf32_; }

 private:
  struct Plan;
  const Plan* plan_for(const LtProblem& problem);

  void* handle_ = nullptr;
  CUstream stream_;
  bool allow_tf32_;
  std::map<decltype(LtProblem{}.key()), std::unique_ptr<Plan>> plans_;
};

}  // namespace burn::cuda
