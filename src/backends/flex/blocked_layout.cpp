#include "backends/flex/blocked_layout.hpp"

#include "core/object_pool.hpp"

namespace burn::flex::dnn {
namespace {

/// A private byte tensor over `buffer`: it keeps the bytes alive while a
/// primitive reads or writes them, whatever another thread does meanwhile
/// to the tensor they came from.
host::CpuTensorPtr bytes_of(std::shared_ptr<host::Buffer> buffer) {
  auto bytes = detail::make_pooled<host::CpuTensor>();
  bytes->shape = {buffer->size()};
  bytes->buffer = std::move(buffer);
  bytes->dtype = DType::U8;
  bytes->strides = {1};
  return bytes;
}

}  // namespace

std::shared_ptr<host::Buffer> BlockedLayout::to_plain(const host::CpuTensor& t,
                                                      const std::shared_ptr<host::Buffer>& blocked) const {
  auto plain = detail::make_pooled<host::Buffer>(alloc_, t.num_elements() * dtype_size(t.dtype));
  const dnnl::memory::dims md_dims = md_.dims();  // a fresh vector per call
  const std::vector<std::size_t> dims(md_dims.begin(), md_dims.end());
  const dnnl::memory::desc plain_md = plain_desc(dims, md_.data_type());
  dnnl::memory from(md_, engine(), static_cast<void*>(blocked->data()));
  dnnl::memory to(plain_md, engine(), static_cast<void*>(plain->data()));
  reorder(from, to);
  return plain;
}

BlockedOutput::BlockedOutput(const Context& ctx, const dnnl::memory::desc& want, const dnnl::memory::desc& plain)
    : want_(want) {
  if (want == plain || want.is_zero()) return;
  target_ = ctx.output({Shape{want.get_size()}, DType::U8});
  buffer_ = target_->buffer;
}

BlockedOutput::BlockedOutput(const dnnl::memory::desc& want, std::shared_ptr<host::Buffer> adopted)
    : want_(want), buffer_(std::move(adopted)), target_(bytes_of(buffer_)) {}

void BlockedOutput::finish(const Context& ctx, host::CpuTensor& y) const {
  y.set_opaque(std::make_shared<BlockedLayout>(want_, ctx.alloc), buffer_);
}

std::optional<BlockedInput> blocked_input(const host::CpuTensor& x, const dnnl::memory::desc& plain) {
  const auto view = x.opaque_view();
  if (!view.layout) return std::nullopt;
  const auto* layout = dynamic_cast<const BlockedLayout*>(view.layout.get());
  if (!layout || layout->md().dims() != plain.dims() || layout->md().data_type() != plain.data_type()) {
    x.make_plain();
    return std::nullopt;
  }
  return BlockedInput{layout->md(), bytes_of(view.buffer)};
}

BlockedInput laid_out(const Context& ctx, const host::CpuTensor& x, const dnnl::memory::desc& plain,
                      const dnnl::memory::desc& want, const host::CpuTensor* keep_on) {
  dnnl::memory::desc from_md = plain;
  host::CpuTensorPtr from;
  if (const auto view = x.opaque_view(); view.layout) {
    const auto* layout = dynamic_cast<const BlockedLayout*>(view.layout.get());
    if (layout && layout->md() == want) return {want, bytes_of(view.buffer)};
    if (layout && layout->md().dims() == plain.dims() && layout->md().data_type() == plain.data_type()) {
      from_md = layout->md();
      from = bytes_of(view.buffer);
    } else {
      x.make_plain();
    }
  }
  auto out = ctx.output({Shape{want.get_size()}, DType::U8});
  dnnl::memory source = wrap(from_md, from ? *from : x), target = wrap(want, *out);
  reorder(source, target);
  if (keep_on) keep_on->keep_copy({std::make_shared<BlockedLayout>(want, ctx.alloc), out->buffer});
  return {want, std::move(out)};
}

host::CpuTensorPtr kept_as_opaque(const host::CpuTensor& x, bool take) {
  auto kept = take ? x.take_kept_copy() : x.kept_copy();
  if (!kept.layout) return nullptr;
  auto t = detail::make_pooled<host::CpuTensor>();
  t->dtype = x.dtype;
  t->shape = x.shape;
  t->strides = host::contiguous_strides(x.shape);
  t->set_opaque(std::move(kept.layout), std::move(kept.buffer));
  return t;
}

}  // namespace burn::flex::dnn
