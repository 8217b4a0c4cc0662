// CUDA C++ for elementwise work, generated from the backend-neutral
// description the fusion layer builds (fusion::ElementwiseProgram): one op
// run eagerly is a program of one instruction, a fused chain a program of
// many, and both become one kernel that makes a single pass over the output.
//
// Semantics follow flex (the CPU backends' rules): half types compute in
// f32 and every result of a half dtype is rounded to it, so a fused chain
// gives what the same ops run one by one give; narrow ints compute in 32
// bits and wrap to their width after each op; signed arithmetic wraps
// (computed unsigned); integer division or remainder by zero, 0 to a
// negative power and negative shift counts set a bit in the device's error
// word (DeviceErrorBit), raised as ExecutionError at the next sync; float
// -> int casts truncate toward zero, saturate and map NaN to 0.
//
// A kernel reads one parameter block, passed by value, whose layout the
// generator and the host share through ElementwiseLayout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <burn/ir/op.hpp>

#include "backends/cuda/launch.hpp"
#include "fusion/elementwise.hpp"

namespace burn::cuda {

/// How a kernel finds its operands' elements.
enum class Indexing : std::uint8_t {
  /// Every operand is row-major in the loop's shape: element i is at i.
  Contiguous,
  /// Each operand has its own element strides over the loop's shape (0 for
  /// a broadcast dimension; any sign).
  Strided,
};

/// One scalar word of the parameter block: the scalar operand of an
/// instruction, converted to the dtype the instruction computes in and
/// stored as that type's bits (f32 and the half types as f32 in the low 32
/// bits, f64 as its 64 bits, ints sign- or zero-extended to 64 bits, bool as
/// 0 or 1).
struct ScalarSlot {
  enum class Source : std::uint8_t { Value, ClampMin, ClampMax };
  std::uint32_t op = 0;  ///< index into the program's ops
  Source source = Source::Value;
  DType dtype = DType::F32;  ///< the tensor dtype the scalar is applied to
};

/// The parameter block, as 8-byte words in this order:
///   n                      elements of the loop (rows for a row kernel)
///   shape[rank]            the loop's shape            (Strided only)
///   pointer[operands]      outputs first, then inputs; already offset
///   stride[operands][rank] element strides             (Strided only)
///   scalar[scalars.size()]
///   error                  pointer to the 32-bit error word
struct ElementwiseLayout {
  Indexing indexing = Indexing::Contiguous;
  /// A row kernel: n counts the rows of the loop's shape (every dim but the
  /// last), not its elements.
  bool rows = false;
  /// A row kernel whose rows are folded by a block of threads each
  /// (folds_by_block): launched with Launch::per_block.
  bool block = false;
  std::size_t rank = 0;
  std::size_t operands = 0;
  std::vector<ScalarSlot> scalars;

  std::size_t shape_word() const noexcept { return 1; }
  std::size_t pointer_word() const noexcept { return 1 + strided_rank(); }
  std::size_t stride_word() const noexcept { return pointer_word() + operands; }
  std::size_t scalar_word() const noexcept { return stride_word() + operands * strided_rank(); }
  std::size_t error_word() const noexcept { return scalar_word() + scalars.size(); }
  std::size_t bytes() const noexcept { return 8 * (error_word() + 1); }

 private:
  std::size_t strided_rank() const noexcept { return indexing == Indexing::Strided ? rank : 0; }
};

/// The text shared by generated kernels: element types and conversions,
/// and the device functions (half conversions, integer division, ...) a
/// kernel needs, each emitted once and only when used, so NVRTC compiles
/// little and warns about nothing.
class KernelText {
 public:
  /// The type a dtype is computed in ("float" for the half types, "int"
  /// for 8- and 16-bit ints, "bool") and stored as in memory.
  static const char* compute_type(DType d);
  static const char* storage_type(DType d);
  /// The unsigned type integer arithmetic on `d` wraps in (computing signed
  /// sums and products there is defined): 64 bits for the 64-bit dtypes,
  /// 32 otherwise.
  static const char* wrapping_type(DType d);
  /// An element in memory (an expression of storage_type) as compute_type.
  std::string load(DType d, const std::string& element);
  /// A compute_type value as storage_type, to write to memory.
  std::string store(DType d, const std::string& value);
  /// `value` rounded or wrapped to `d` and back: what a trip through memory
  /// gives, so a fused chain computes what the ops one by one compute.
  std::string narrow(DType d, const std::string& value);
  /// Adds helper `name` (defined by `definition`) unless it is there.
  void need(const std::string& name, const std::string& definition);
  /// The helpers' definitions, to put before the kernel.
  std::string helpers() const;

 private:
  std::map<std::string, std::string> helpers_;
};

/// How a reduction folds one line in order, as flex folds it (float sums
/// in the compute type, float products in double, integer sums and products
/// wrapping, int means in 64 bits, max/min and their positions with NaN
/// winning, any/all with NaN counting as true). The eager reduction kernel
/// and the fused row kernel share it, so both give the same bits.
struct LineFold {
  std::string declare;  ///< the accumulator's declarations, before the loop
  std::string step;     ///< folds in one element
  std::string result;   ///< the reduction's value, in the output's compute type
  /// The accumulator's variables (type, name), and how a partial fold of
  /// other elements (the same variables suffixed "_o") merges into it: as
  /// if the two folds' elements had been folded in the line's order (so
  /// argmax/argmin keep the first position, NaN first of all).
  std::vector<std::pair<std::string, std::string>> vars;
  std::string combine;
};

/// A line this long or longer is folded by a block of kBlockThreads threads
/// (block_fold) instead of one thread: each thread folds every
/// kBlockThreads-th element, then the partial folds merge pairwise in a
/// fixed tree. The eager reduction and the row kernel choose alike (a row
/// is a line of a last-dim reduction), so fused still equals eager.
inline constexpr std::uint64_t kBlockFoldMin = 256;

/// Whether `lines` lines of `len` elements, `inner` elements apart, fold by
/// block: long lines, unless they lie across memory (inner > 1) and are so
/// many that one thread per line fills the GPU with coalesced reads.
bool folds_by_block(std::uint64_t len, std::uint64_t lines, std::uint64_t inner);

/// Code merging the partial folds of a block's threads (thread `t`'s
/// accumulator in `fold`'s variables) through shared memory; afterwards
/// every thread holds the whole line's fold. Every thread of the block must
/// run it.
std::string block_fold(const LineFold& fold);

/// The fold of `op` from `in` to `out`: its variables start with `name`,
/// `element` is the element (in the compute type of `in`), `position` its
/// index in the line and `length` the line's length (expressions).
LineFold line_fold(ir::ReduceOp op, DType in, DType out, const std::string& name, const std::string& element,
                   const std::string& position, const std::string& length);

struct ElementwiseKernel {
  std::string name;  ///< the extern "C" __global__ function (kKernelEntry)
  std::string source;
  ElementwiseLayout layout;
};

/// Whether the generator has code for `op` on `inputs` (unary, binary,
/// clamp, cast, mask_where and mask_fill on every dtype ir::infer_outputs
/// accepts for them).
bool generates(const ir::Op& op, std::span<const ir::TensorSpec> inputs);

/// The kernel for `program` over a loop of rank `rank` (the program's shape
/// with contiguous dimensions merged by the caller; 0 for a single element
/// works too). Throws Error naming the op when an instruction has no code.
ElementwiseKernel generate_elementwise(const fusion::ElementwiseProgram& program, Indexing indexing, std::size_t rank);

/// Whether the row kernel takes `op` on `inputs`: every op generates()
/// takes, and every reduction (over the last dim, as the row fuser offers).
bool generates_in_rows(const ir::Op& op, std::span<const ir::TensorSpec> inputs);

/// The row kernel of a row-reduce group (fusion/row_reduce.hpp): one thread
/// per row of the program's shape [..., L], or a block of threads per row
/// where rows are long (folds_by_block, as the eager reduction decides; the
/// threads fold every BURN_BLOCK-th element and merge). It folds the row
/// once per reduction, recomputing the elementwise values a fold reads from the
/// inputs (they stay in registers, never in memory), computes the row
/// statistics in between, and makes a last pass writing the full-size
/// outputs. Strided indexing over the program's shape with the item count
/// the number of rows (ElementwiseLayout::rows).
ElementwiseKernel generate_rows(const fusion::ElementwiseProgram& program);

}  // namespace burn::cuda
