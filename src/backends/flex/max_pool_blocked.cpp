// Max pooling on a convolution output still in the layout oneDNN wrote it
// in — channel-blocked (nC[d][h]wXc) or channels-last (n[d][h]wc), both with
// channels innermost — so conv -> pool -> conv keeps it throughout. Same
// values as the row-major loop (max_pool.cpp): padding is never selected
// and a NaN in the window wins. Indices are PyTorch's row-major positions,
// so pools that return them take the row-major path.
#include <algorithm>
#include <vector>

#include "backends/flex/blocked_layout.hpp"
#include "backends/flex/parallel.hpp"
#include "backends/flex/simd/window_max.hpp"
#include "backends/flex/window.hpp"

namespace burn::flex::dnn {
namespace {

using tag = dnnl::memory::format_tag;

/// How a blocked f32 activation groups channels: `lanes` consecutive
/// channels are innermost, in `groups` groups per image (nC[d][h]wXc:
/// X lanes, ceil(C / X) groups; channels-last n[d][h]wc: C lanes, one
/// group). {0, ...} for any other layout.
struct ChannelGrouping {
  std::size_t lanes = 0, groups = 0;
  tag format = tag::any;
};

ChannelGrouping channel_grouping(const dnnl::memory::desc& md) {
  const auto dims = md.dims();
  if (md.data_type() != dnnl::memory::data_type::f32 || dims.size() < 3 || dims.size() > 5) return {};
  const auto channels = static_cast<std::size_t>(dims[1]);
  const std::size_t r = dims.size() - 3;
  const tag blocked16[] = {tag::nCw16c, tag::nChw16c, tag::nCdhw16c};
  const tag blocked8[] = {tag::nCw8c, tag::nChw8c, tag::nCdhw8c};
  const tag last[] = {tag::nwc, tag::nhwc, tag::ndhwc};
  auto is = [&](tag t) { return md == dnnl::memory::desc(dims, md.data_type(), t); };
  if (is(blocked16[r])) return {16, (channels + 15) / 16, blocked16[r]};
  if (is(blocked8[r])) return {8, (channels + 7) / 8, blocked8[r]};
  if (is(last[r])) return {channels, 1, last[r]};
  return {};
}

/// Where pool_grouped writes: output position p of channel group g of
/// image n starts at n * image + g * group + p * pixel (floats). The input's
/// own layout (group = out_vol * lanes, pixel = lanes), or channels-last
/// (group = lanes, pixel = channels).
struct OutputStrides {
  std::size_t image, group, pixel;
};

/// Pools `planes` (image, channel group) planes of `lanes` interleaved
/// channels each (`groups` per image), one output row at a time: the input
/// rows its windows cover, then every output pixel of the row, a vector of
/// channels at a time (simd::window_max_row).
void pool_grouped(const float* src, float* dst, std::size_t planes, std::size_t groups, std::size_t lanes,
                  const Window3& w, const OutputStrides& o) {
  const AxisWindows wd = axis_windows(w, 0), wh = axis_windows(w, 1), ww = axis_windows(w, 2);
  const std::size_t in_vol = w.in_volume();
  parallel_for(
      planes * w.out[0] * w.out[1],
      [&](std::size_t begin, std::size_t end) {
        std::vector<const float*> rows;
        rows.reserve(w.k[0] * w.k[1]);
        for (std::size_t row = begin; row < end; ++row) {
          const std::size_t oh = row % w.out[1], od = (row / w.out[1]) % w.out[0], plane = row / (w.out[0] * w.out[1]);
          const float* xp = src + plane * in_vol * lanes;
          rows.clear();
          for (std::size_t id = wd.first[od]; id < wd.end[od]; id += w.d[0])
            for (std::size_t ih = wh.first[oh]; ih < wh.end[oh]; ih += w.d[1])
              rows.push_back(xp + (id * w.in[1] + ih) * w.in[2] * lanes);
          float* yp =
              dst + plane / groups * o.image + plane % groups * o.group + (od * w.out[1] + oh) * w.out[2] * o.pixel;
          simd::window_max_row(
              {rows.data(), rows.size(), ww.first.data(), ww.end.data(), w.d[2], lanes, w.out[2], lanes, yp, o.pixel});
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, w.out[2] * w.k_volume() * lanes)));
}

/// Whether oneDNN's convolutions on this CPU read activations
/// channels-last when left to choose (its brgconv kernels, AVX-512), asked
/// once of a typical 3x3 layer.
bool convolutions_read_channels_last() {
  static const bool yes = [] {
    using dt = dnnl::memory::data_type;
    const dnnl::memory::desc x({1, 64, 56, 56}, dt::f32, tag::any), w({64, 64, 3, 3}, dt::f32, tag::any);
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x,
                                            w, x, {1, 1}, {0, 0}, {1, 1}, {1, 1});
    const auto pd = try_create<dnnl::convolution_forward::primitive_desc>(d, engine());
    return pd && pd->src_desc() == dnnl::memory::desc({1, 64, 56, 56}, dt::f32, tag::nhwc);
  }();
  return yes;
}

}  // namespace

host::CpuTensorPtr max_pool_blocked(const Context& ctx, const ir::MaxPool& op, const host::CpuTensor& x,
                                    const ir::TensorSpec& out) {
  if (op.with_indices || out.shape.num_elements() == 0) return nullptr;
  const auto view = x.opaque_view();
  const auto* layout = dynamic_cast<const BlockedLayout*>(view.layout.get());
  if (!layout || layout->md().dims().size() != op.kernel.size() + 2) return nullptr;
  const ChannelGrouping g = channel_grouping(layout->md());
  if (g.lanes == 0) return nullptr;

  const Window3 w = make_window(ir::op_name(ir::Op(op)), std::span(x.shape).subspan(2),
                                std::span(out.shape.dims()).subspan(2), op.kernel, op.stride, op.padding, op.dilation);
  const auto out_dims = to_dims(std::vector<std::size_t>(out.shape.dims().begin(), out.shape.dims().end()));
  const std::size_t channels = x.shape[1], out_vol = w.out_volume();
  // Channel blocks (a network's first convolution writes them) become
  // channels-last where that is what the next convolutions read: the pool
  // writes each block's vector at its channels-last place for free, where
  // a reorder would be a pass over the output (ResNet-18 at batch 32: two,
  // 2.4 ms each, one for the next layer's input and one for its residual).
  // Not at Float32Precision::High: Winograd convolutions read the blocks.
  // (A single block of all the channels is channels-last already: the
  // same bytes, relabelled.)
  const bool to_channels_last =
      channels % g.lanes == 0 && op.kernel.size() == 2 && !ctx.fast_f32() && convolutions_read_channels_last();
  const dnnl::memory::desc out_md(out_dims, dnnl::memory::data_type::f32, to_channels_last ? tag::nhwc : g.format);
  const OutputStrides strides = to_channels_last
                                    ? OutputStrides{out_vol * channels, g.lanes, channels}
                                    : OutputStrides{g.groups * out_vol * g.lanes, out_vol * g.lanes, g.lanes};
  auto blocked = ctx.output({Shape{out_md.get_size()}, DType::U8});
  // A last channel block past C is zero padding; max of zeros keeps it zero,
  // as oneDNN expects of it.
  pool_grouped(reinterpret_cast<const float*>(view.buffer->data()), reinterpret_cast<float*>(blocked->base()),
               x.shape[0] * g.groups, g.groups, g.lanes, w, strides);

  auto y = ctx.output(out);
  y->set_opaque(std::make_shared<BlockedLayout>(out_md, ctx.alloc), blocked->buffer);
  return y;
}

}  // namespace burn::flex::dnn
