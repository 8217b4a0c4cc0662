// Convolutions through cuDNN (libcudnn.so.<major>, opened with dlopen when a
// device is created, as cuBLASLt is): Conv as cudnnConvolutionForward (plus
// cudnnAddTensor for the bias), ConvTranspose as the backward-data pass of
// the convolution it inverts, ConvWeightGrad as the backward-filter pass.
// This is cuDNN's legacy descriptor API, still part of cuDNN 9; the graph
// API would add fused epilogues (a later step, once both can be measured on
// a GPU). Without cuDNN, or for what it does not take, the generated
// kernels compute the op, slower but the same answer.
//
// 1-d convolutions go in as 2-d ones of height 1 (cuDNN wants 4-d
// tensors or more). f32 computes in f32 (TF32 only with
// BURN_CUDA_ALLOW_TF32=1), f16 and bf16 in f32, f64 in f64.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/cuda/launch.hpp"

namespace burn::cuda {

/// Empty when cuDNN can be used; else why not.
const std::string& cudnn_unavailable();

/// cuDNN's version (cudnnGetVersion: 10000·major + 100·minor + patch), 0
/// when unavailable.
std::size_t cudnn_version();

/// Whether cuDNN takes `op` (Conv, ConvTranspose, ConvWeightGrad) on these
/// operands: float dtypes alike on every operand, 1 to 3 spatial dims, no
/// empty dim.
bool cudnn_takes(const ir::Op& op, std::span<const ir::TensorSpec> inputs, std::span<const ir::TensorSpec> outputs);

/// The dims cuDNN is given for a tensor [N, C, *spatial] of a convolution
/// with `spatial` dims: a 1-d one gets a height of 1 in front.
std::vector<int> cudnn_dims(const Shape& shape);

/// One device's cuDNN handle and the descriptors and algorithms chosen so
/// far, by op and shapes. Create and use it with the device's context current.
class DnnConv {
 public:
  /// Throws ConfigurationError when cuDNN is unavailable or the handle
  /// cannot be made.
  DnnConv(CUstream stream, bool allow_tf32);
  ~DnnConv();
  DnnConv(const DnnConv&) = delete;
  DnnConv& operator=(const DnnConv&) = delete;

  /// Prepares `op` (cudnn_takes must hold; cached by op and shapes): false
  /// when cuDNN has no algorithm for it. Sets `workspace_bytes` to what
  /// run() needs.
  bool prepare(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs,
               std::size_t& workspace_bytes);
  /// Queues the prepared `op` with its workspace at device address
  /// `workspace`; throws ExecutionError when a call fails.
  void run(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs,
           std::uint64_t workspace);

 private:
  struct Plan;
  Plan& plan_for(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs);

  CUstream stream_;

  void* handle_ = nullptr;
  bool allow_tf32_;
  std::map<std::vector<std::int64_t>, std::unique_ptr<Plan>> plans_;
};

}  // namespace burn::cuda
