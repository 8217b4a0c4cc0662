// The CUDA backend's planning, code generation and fusion with the GPU
// replaced by the CPU: an emulated device keeps tensors in host memory,
// plans every op with the backend's own planners (launch.hpp), queues the
// launches, and at each sync compiles the new kernel sources for the CPU
// (host_kernels.hpp) and runs the queue in order. Everything of
// Device::cuda() but the driver calls runs, so the fusion tests check the
// whole path from the fusion layer to the generated kernels here.
#pragma once

#include <burn/burn.hpp>

namespace burn::cuda::testing {

/// An emulated CUDA device, installed under an index no machine has. With
/// `fused`, behind the fusion layer exactly as Device::cuda() is (its
/// fusers and compilers); without, every op runs as its
/// own kernels — the eager twin the fused results must equal bit for bit.
Device emulated_cuda_device(bool fused);

/// The fusion backend of cuda:0 with a second, unfused CUDA backend on the
/// same GPU as its eager twin: the same checks on a real device. Throws
/// DeviceError without a GPU.
Device eager_twin_of_cuda0();

}  // namespace burn::cuda::testing
