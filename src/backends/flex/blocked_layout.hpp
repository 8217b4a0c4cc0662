// oneDNN's activation layouts as CpuTensor opaque layouts: a convolution
// leaves its output in the layout its primitive wrote (nChw16c, or
// channels-last for few channels, on AVX-512), and the next convolution reads it as is — no reorder out of
// the first and into the second. Any other kernel sees the tensor after
// make_plain(), which reorders it once (the reorder the convolution would
// otherwise have done itself).
#pragma once

#include "backends/flex/dnnl_engine.hpp"

namespace burn::flex::dnn {

class BlockedLayout final : public host::OpaqueLayout {
 public:
  BlockedLayout(dnnl::memory::desc md, std::shared_ptr<host::Allocator> alloc) : md_(md), alloc_(std::move(alloc)) {}

  /// The layout, with oneDNN's dims (unit-padded spatial dims included).
  const dnnl::memory::desc& md() const noexcept { return md_; }
  const std::shared_ptr<host::Allocator>& allocator() const noexcept { return alloc_; }

  std::shared_ptr<host::Buffer> to_plain(const host::CpuTensor& t,
                                         const std::shared_ptr<host::Buffer>& blocked) const override;

 private:
  dnnl::memory::desc md_;
  std::shared_ptr<host::Allocator> alloc_;
};

/// A convolution output the primitive writes in `want`: when that is not
/// the plain layout, a buffer for it, which `finish` then hands to `y` as
/// an opaque layout instead of reordering into y's row-major buffer.
class BlockedOutput {
 public:
  BlockedOutput(const Context& ctx, const dnnl::memory::desc& want, const dnnl::memory::desc& plain);
  /// An output written into `adopted`, a buffer that already holds a tensor
  /// in `want` (the residual a convolution's sum post-op accumulates onto).
  BlockedOutput(const dnnl::memory::desc& want, std::shared_ptr<host::Buffer> adopted);
  /// Whether the output stays blocked (false: the plain path as usual).
  bool active() const noexcept { return buffer_ != nullptr; }
  /// A tensor whose base() is the blocked buffer, to pass as the primitive's
  /// destination with md().
  const host::CpuTensor& target() const noexcept { return *target_; }
  const dnnl::memory::desc& md() const noexcept { return want_; }
  void finish(const Context& ctx, host::CpuTensor& y) const;

 private:
  dnnl::memory::desc want_;
  std::shared_ptr<host::Buffer> buffer_;
  host::CpuTensorPtr target_;
};

/// The blocked layout of an opaque convolution input whose dims and type
/// match `plain` (x as the primitive sees it), or nullopt: the input is
/// then made plain and read as usual.
struct BlockedInput {
  dnnl::memory::desc md;
  host::CpuTensorPtr bytes;  // base() is the blocked buffer, kept alive
};
std::optional<BlockedInput> blocked_input(const host::CpuTensor& x, const dnnl::memory::desc& plain);

/// A convolution-family operand in the layout `want` its primitive asks
/// for: x's own bytes when x is opaque in exactly that layout; otherwise a
/// reorder into a fresh buffer from x's opaque layout (with x's dims) or
/// from its row-major data (x contiguous, described by `plain`). With
/// `keep_on`, a fresh copy is kept on that tensor (CpuTensor::keep_copy)
/// for the next kernel that reads it in `want` (see kept_as_opaque).
BlockedInput laid_out(const Context& ctx, const host::CpuTensor& x, const dnnl::memory::desc& plain,
                      const dnnl::memory::desc& want, const host::CpuTensor* keep_on = nullptr);

/// A fresh opaque tensor with x's shape over the copy a kernel kept on x,
/// which convolution-family kernels then read as they read any opaque
/// input; nullptr when x has none. With `take`, x keeps it no longer.
host::CpuTensorPtr kept_as_opaque(const host::CpuTensor& x, bool take = false);

/// Max pooling without indices read and written in x's opaque layout when
/// that is channel-blocked or channels-last f32; nullptr otherwise (the
/// caller then pools the row-major data). See max_pool_blocked.cpp.
host::CpuTensorPtr max_pool_blocked(const Context& ctx, const ir::MaxPool& op, const host::CpuTensor& x,
                                    const ir::TensorSpec& out);

}  // namespace burn::flex::dnn
