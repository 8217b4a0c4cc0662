// How the CUDA backend computes an op: as a list of kernel launches planned
// on the host. A launch is the CUDA C++ of one kernel and its parameter
// block; the backend compiles the source with NVRTC (once per distinct
// source) and runs it on the device's stream, and the tests compile the
// same source for the CPU and run it on host memory. Planning is pure host
// code, so everything but the driver calls is tested without a GPU.
//
// Every generated kernel has the same form:
//
//   struct Params { unsigned long long n; ... };   // 8-byte fields only
//   extern "C" __global__ void burn_kernel(const Params p) {
//     for (i = this thread's first item; i < p.n; i += all threads) { ... }
//   }
//
// so any launch geometry computes the same result (a grid-stride loop
// over p.n items: elements, lines or output elements by kernel).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <burn/error.hpp>
#include <burn/ir/op.hpp>

namespace burn::cuda {

inline constexpr const char* kKernelEntry = "burn_kernel";

/// Bits a kernel sets in the device error word (raised at the next sync).
enum DeviceErrorBit : std::uint32_t {
  kErrorDivByZero = 1u << 0,
  kErrorRemByZero = 1u << 1,
  kErrorPowNegative = 1u << 2,
  kErrorNegativeShift = 1u << 3,
  kErrorGatherIndex = 1u << 4,
  kErrorSelectIndex = 1u << 5,
  kErrorScatterIndex = 1u << 6,
  kErrorSelectAssignIndex = 1u << 7,
};

/// The error a sync raises for the bits kernels set: named after the op of
/// the first bit (as an eager error would be), listing every one.
ExecutionError device_error(std::uint32_t bits, std::string_view device);

/// A tensor a launch reads or writes: row-major elements at `address`.
struct Operand {
  ir::TensorSpec spec;
  std::uint64_t address = 0;
};

/// Threads of a block-fold kernel's block (block_stride_kernel): the
/// kernel's source names it (BURN_BLOCK), so its results do not depend on
/// how it is launched.
inline constexpr unsigned kBlockThreads = 256;
/// Slots of BURN_BLOCK 8-byte words in a block kernel's shared buffer
/// (burn_block_shared): one per variable of a fold (argmax has three).
inline constexpr unsigned kBlockFoldSlots = 3;

struct Launch {
  std::string source;                 ///< one translation unit defining kKernelEntry
  std::vector<std::uint64_t> params;  ///< the parameter block; params[0] is the item count
  /// Each item is worked on by a whole block of kBlockThreads threads
  /// (block_stride_kernel), not by one thread.
  bool per_block = false;
  std::uint64_t items() const noexcept { return params.empty() ? 0 : params[0]; }
};

/// Where random ops draw from: the device's seed and which draw this is
/// (each random op is one draw; element i of it uses Philox counter (i,
/// draw), philox.hpp).
struct RandomStream {
  std::uint64_t seed = 0;
  std::uint64_t draw = 0;
};

/// Whether plan() has kernels for `op`.
bool can_plan(const ir::Op& op);

/// The launches that compute `op` from `inputs` into `outputs` (already
/// allocated, row-major), in order; `error_word` is the device address of
/// the 32-bit word kernels report errors in (DeviceErrorBit). Launches with
/// no items may be left out. Throws Error "[op] not supported by the cuda
/// backend yet" where can_plan is false.
std::vector<Launch> plan(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs,
                         std::uint64_t error_word, const RandomStream& random = {});

// ---- shared by the op families' planners ----------------------------------------

/// Row-major element strides of `shape`.
std::vector<std::int64_t> row_major_strides(const Shape& shape);

/// A kernel's whole source in the form every generated kernel shares: the
/// device functions `helpers`, a Params struct of the item count `n` and
/// then `fields` (8-byte members, one per line), and the entry's grid-stride
/// loop running `body` for each item i < p.n. `what` names the kernel in its
/// first line.
std::string grid_stride_kernel(std::string_view what, std::string_view helpers, std::string_view fields,
                               std::string_view body);

/// Items a thread of an unrolled grid-stride kernel takes at a time.
inline constexpr unsigned kItemsPerThread = 4;

/// The same with each thread taking kItemsPerThread items one grid stride
/// apart per turn: `body` runs once per turn, with `first` the turn's first
/// item and `step` the grid stride (item u of the turn is first + u·step,
/// some of which may be past p.n). A kernel that loads all its items before
/// computing any keeps that many loads in flight per thread; with one, a
/// unary op streaming memory leaves the GPU's memory waiting.
std::string unrolled_grid_stride_kernel(std::string_view what, std::string_view helpers, std::string_view fields,
                                        std::string_view body);

/// The same for a kernel whose items are each worked on by one block of
/// BURN_BLOCK (kBlockThreads) threads: `body` runs for each item i < p.n
/// with `t` the thread's index in the block; every thread of the block runs
/// it, so it may synchronise (__syncthreads) and share memory: the buffer
/// burn_block_shared of kBlockFoldSlots · BURN_BLOCK doubles (block_fold).
/// Launch it with Launch::per_block.
std::string block_stride_kernel(std::string_view what, std::string_view helpers, std::string_view fields,
                                std::string_view body);

/// The C type that moves an element of `bytes` bytes unchanged.
const char* raw_type(std::size_t bytes);

/// A launch copying elements of `element_bytes` bytes over a loop of
/// `shape`: dst[dst_offset + Σ c_d · dst_strides_d] = src[src_offset + Σ c_d ·
/// src_strides_d] (offsets and strides in elements). Permute, expand, flip,
/// slice, unfold, cat and slice_assign are all this copy with other strides.
Launch strided_copy(std::size_t element_bytes, const Shape& shape, std::uint64_t dst, std::int64_t dst_offset,
                    std::span<const std::int64_t> dst_strides, std::uint64_t src, std::int64_t src_offset,
                    std::span<const std::int64_t> src_strides);

// The op families (one file each).
std::vector<Launch> plan_elementwise(const ir::Op& op, std::span<const Operand> inputs,
                                     std::span<const Operand> outputs, std::uint64_t error_word);
std::vector<Launch> plan_layout(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs);
std::vector<Launch> plan_creation(const ir::Op& op, std::span<const Operand> outputs, const RandomStream& random);
std::vector<Launch> plan_reduce(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs);
std::vector<Launch> plan_sort(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs);
std::vector<Launch> plan_interpolate(const ir::Op& op, std::span<const Operand> inputs,
                                     std::span<const Operand> outputs);
std::vector<Launch> plan_conv(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs);
std::vector<Launch> plan_pool(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs);
std::vector<Launch> plan_matmul(std::span<const Operand> inputs, std::span<const Operand> outputs);
std::vector<Launch> plan_indexing(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs,
                                  std::uint64_t error_word);
std::vector<Launch> plan_norm(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs);

}  // namespace burn::cuda
