#include "backends/flex/layout_elementwise.hpp"

#include "backends/flex/blocked_layout.hpp"
#include "backends/flex/strided.hpp"
#include "core/object_pool.hpp"

namespace burn::flex {

// binary.cpp
host::CpuTensorPtr single_output_kernel(const Context& ctx, const ir::Binary& op, Inputs in, const ir::TensorSpec& out);

namespace dnn {
namespace {

using tag = dnnl::memory::format_tag;

/// Channels per block of a blocked layout; 0 for channels-last.
constexpr std::size_t block_of(ActivationLayout layout) {
  switch (layout) {
    case ActivationLayout::Blocked8: return 8;
    case ActivationLayout::Blocked16: return 16;
    case ActivationLayout::ChannelsLast: break;
  }
  return 0;
}

constexpr bool is_blocked(ActivationLayout layout) { return block_of(layout) != 0; }

/// oneDNN's name for an element type an opaque layout may hold (Bool as its
/// bytes); nullopt for the rest (f64, i64, ...), which stay row-major.
std::optional<dnnl::memory::data_type> layout_type(DType d) {
  switch (d) {
    case DType::F32: return dnnl::memory::data_type::f32;
    case DType::F16: return dnnl::memory::data_type::f16;
    case DType::BF16: return dnnl::memory::data_type::bf16;
    case DType::I32: return dnnl::memory::data_type::s32;
    case DType::I8: return dnnl::memory::data_type::s8;
    case DType::U8:
    case DType::Bool: return dnnl::memory::data_type::u8;
    default: return std::nullopt;
  }
}

/// The format tag of `layout` for a rank-3..5 shape.
std::optional<tag> format_of(ActivationLayout layout, std::size_t rank) {
  static constexpr tag last[] = {tag::nwc, tag::nhwc, tag::ndhwc};
  static constexpr tag blocked8[] = {tag::nCw8c, tag::nChw8c, tag::nCdhw8c};
  static constexpr tag blocked16[] = {tag::nCw16c, tag::nChw16c, tag::nCdhw16c};
  if (rank < 3 || rank > 5) return std::nullopt;
  switch (layout) {
    case ActivationLayout::Blocked8: return blocked8[rank - 3];
    case ActivationLayout::Blocked16: return blocked16[rank - 3];
    case ActivationLayout::ChannelsLast: break;
  }
  return last[rank - 3];
}

dnnl::memory::desc layout_md(ActivationLayout layout, const host::Extents& shape, dnnl::memory::data_type dt) {
  return dnnl::memory::desc(to_dims(std::vector<std::size_t>(shape.begin(), shape.end())), dt,
                            *format_of(layout, shape.size()));
}

/// The layout and md of an opaque tensor of shape `shape`, or nullopt.
std::optional<ActivationLayout> layout_at(const host::CpuTensor& t, const host::Extents& shape) {
  if (t.shape != shape || shape.size() < 3 || shape.size() > 5) return std::nullopt;
  const auto view = t.opaque_view();
  const auto* layout = dynamic_cast<const BlockedLayout*>(view.layout.get());
  if (!layout) return std::nullopt;
  const dnnl::memory::desc& md = layout->md();
  const auto dims = md.dims();
  if (dims.size() != shape.size()) return std::nullopt;  // unit-padded spatial dims
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (static_cast<std::size_t>(dims[d]) != shape[d]) return std::nullopt;
  for (const ActivationLayout l :
       {ActivationLayout::ChannelsLast, ActivationLayout::Blocked8, ActivationLayout::Blocked16}) {
    if (is_blocked(l) && shape[1] % block_of(l) != 0) continue;  // a padded last block
    if (md == layout_md(l, shape, md.data_type())) return l;
  }
  return std::nullopt;
}

/// Extents or strides of a dim vector in the layout's memory order. For a
/// blocked layout C splits into (C/block, block): a broadcast C (extent 1)
/// into two broadcast dims.
template <class V>
V to_physical(ActivationLayout layout, const V& v, bool strides, bool broadcast_c) {
  using T = typename V::value_type;
  const T block = static_cast<T>(block_of(layout));
  V p;
  p.push_back(v[0]);
  if (is_blocked(layout)) {
    if (broadcast_c) p.push_back(strides ? T(0) : T(1));
    else p.push_back(strides ? v[1] * block : v[1] / block);
  }
  for (std::size_t d = 2; d < v.size(); ++d) p.push_back(v[d]);
  if (layout == ActivationLayout::ChannelsLast) p.push_back(v[1]);
  else if (broadcast_c) p.push_back(strides ? T(0) : T(1));
  else p.push_back(strides ? v[1] : block);
  return p;
}

bool is_elementwise(const ir::Op& op) {
  return std::holds_alternative<ir::Unary>(op) || std::holds_alternative<ir::Binary>(op) ||
         std::holds_alternative<ir::Clamp>(op) || std::holds_alternative<ir::Cast>(op) ||
         std::holds_alternative<ir::MaskFill>(op) || std::holds_alternative<ir::MaskWhere>(op) ||
         std::holds_alternative<ir::Gelu>(op);
}

}  // namespace

std::optional<ActivationLayout> activation_layout(const host::CpuTensor& t) {
  return t.is_opaque() ? layout_at(t, t.shape) : std::nullopt;
}

std::optional<ActivationLayout> loop_layout(Inputs in, const host::Extents& shape, std::span<const DType> out_dtypes) {
  if (shape.size() < 3 || shape.size() > 5) return std::nullopt;
  for (const DType d : out_dtypes)
    if (!layout_type(d)) return std::nullopt;
  // The first opaque input's layout; another opaque input in the other
  // layout is converted to it (one reorder instead of two to row-major).
  std::optional<ActivationLayout> layout;
  for (const backend::Input& input : in) {
    const host::CpuTensor& t = host::as_cpu(input.primitive);
    if (t.rank() != shape.size()) return std::nullopt;
    if (!t.is_opaque()) continue;
    const auto l = layout_at(t, shape);
    if (!l) return std::nullopt;
    if (!layout) layout = l;
  }
  if (layout && is_blocked(*layout)) {
    // A plain operand's C is the loop's (split into blocks) or broadcast.
    for (const backend::Input& input : in) {
      const host::CpuTensor& t = host::as_cpu(input.primitive);
      if (!t.is_opaque() && t.shape[1] != shape[1] && t.shape[1] != 1) return std::nullopt;
    }
  }
  return layout;
}

host::Extents physical_shape(ActivationLayout layout, const host::Extents& shape) {
  return to_physical(layout, shape, false, false);
}

host::CpuTensorPtr physical_view(const Context& ctx, ActivationLayout layout, const host::CpuTensor& t) {
  auto view = detail::make_pooled<host::CpuTensor>();
  view->dtype = t.dtype;
  const bool broadcast_c = t.shape[1] == 1 && is_blocked(layout);
  view->shape = to_physical(layout, t.shape, false, broadcast_c);
  if (const auto opaque = t.opaque_view(); opaque.buffer) {
    // The opaque bytes are the physical order, row-major (after a reorder
    // when they are in the other layout).
    const auto& md = static_cast<const BlockedLayout*>(opaque.layout.get())->md();
    const auto want = layout_md(layout, t.shape, md.data_type());
    view->buffer = opaque.buffer;
    if (md != want) {
      auto converted = ctx.output({Shape{want.get_size()}, DType::U8});
      dnnl::memory from(md, engine(), static_cast<void*>(opaque.buffer->data()));
      dnnl::memory to(want, engine(), static_cast<void*>(converted->base()));
      reorder(from, to);
      view->buffer = converted->buffer;
    }
    view->strides = host::contiguous_strides(view->shape);
  } else {
    view->buffer = t.buffer;
    view->strides = to_physical(layout, t.strides, true, broadcast_c);
    view->offset = t.offset;
  }
  return view;
}

host::CpuTensorPtr from_physical(const Context& ctx, ActivationLayout layout, host::CpuTensorPtr physical,
                                 const host::Extents& shape) {
  if (!physical->is_contiguous() || physical->offset != 0) physical = contiguous_copy(ctx, *physical);
  auto result = detail::make_pooled<host::CpuTensor>();
  result->dtype = physical->dtype;
  result->shape = shape;
  result->strides = host::contiguous_strides(shape);
  result->set_opaque(
      std::make_shared<BlockedLayout>(layout_md(layout, shape, *layout_type(physical->dtype)), ctx.alloc),
      physical->buffer);
  return result;
}

host::CpuTensorPtr reshape_in_layout(const ir::Op& op, Inputs in, const ir::TensorSpec& out) {
  if (!std::holds_alternative<ir::Reshape>(op) || in.size() != 1) return nullptr;
  const host::CpuTensor& t = host::as_cpu(in[0].primitive);
  const host::Extents& shape = out.shape.dims();
  const auto layout = activation_layout(t);
  if (!layout || !format_of(*layout, shape.size()) || shape[0] != t.shape[0] || shape[1] != t.shape[1]) return nullptr;
  const auto opaque = t.opaque_view();
  if (!opaque.buffer) return nullptr;  // made plain meanwhile
  const auto* blocked = static_cast<const BlockedLayout*>(opaque.layout.get());
  auto result = detail::make_pooled<host::CpuTensor>();
  result->dtype = t.dtype;
  result->shape = shape;
  result->strides = host::contiguous_strides(shape);
  result->set_opaque(
      std::make_shared<BlockedLayout>(layout_md(*layout, shape, blocked->md().data_type()), blocked->allocator()),
      opaque.buffer);
  return result;
}

host::CpuTensorPtr elementwise_in_layout(const Context& ctx, const ir::Op& op, Inputs in, const ir::TensorSpec& out) {
  const host::Extents& shape = out.shape.dims();
  if (!is_elementwise(op)) return nullptr;
  const auto layout = loop_layout(in, shape, std::span(&out.dtype, 1));
  if (!layout) return nullptr;
  std::vector<backend::Input> physical;
  physical.reserve(in.size());
  for (const backend::Input& input : in) {
    auto view = physical_view(ctx, *layout, host::as_cpu(input.primitive));
    ir::TensorSpec spec{Shape(view->shape), view->dtype};
    // Not reusable: the view shares its buffer with the tensor it views.
    physical.push_back({std::move(view), std::move(spec), false});
  }
  const ir::TensorSpec physical_out{Shape(physical_shape(*layout, shape)), out.dtype};
  const std::span<const ir::TensorSpec> outs(&physical_out, 1);
  host::CpuTensorPtr y = std::visit(
      [&](const auto& o) -> host::CpuTensorPtr {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, ir::Binary>) {
          return single_output_kernel(ctx, o, physical, physical_out);
        } else if constexpr (std::is_same_v<O, ir::Unary> || std::is_same_v<O, ir::Clamp> ||
                             std::is_same_v<O, ir::Cast> || std::is_same_v<O, ir::MaskFill> ||
                             std::is_same_v<O, ir::MaskWhere> || std::is_same_v<O, ir::Gelu>) {
          return host::as_cpu_ptr(kernel(ctx, o, physical, outs).at(0));
        } else {
          return nullptr;
        }
      },
      op);
  return y ? from_physical(ctx, *layout, std::move(y), shape) : nullptr;
}

}  // namespace dnn
}  // namespace burn::flex
