#include "backends/flex/conv_common.hpp"

#include <algorithm>

#include "backends/flex/blocked_layout.hpp"
#include "backends/flex/parallel.hpp"
#include "backends/flex/strided.hpp"

namespace burn::flex::dnn {

ConvTensors conv_inputs(const Context& ctx, Inputs in, bool has_bias) {
  ConvTensors t;
  // flex's run-merging parallel copy: the conv backward rule feeds permuted
  // views here (the weight gradient correlates [C, N, H, W] views), and the
  // element-by-element host::contiguous walk cost more than the conv itself.
  t.input = host::as_cpu_ptr(in[0].primitive);
  t.x = conv_operand(ctx, t.input);
  t.w = make_contiguous(ctx, host::as_cpu_ptr(in[1].primitive));
  if (has_bias) t.bias = make_contiguous(ctx, host::as_cpu_ptr(in[2].primitive));
  return t;
}

host::CpuTensorPtr conv_operand(const Context& ctx, const host::CpuTensorPtr& input, bool take_kept) {
  if (input->is_opaque()) return input;
  if (auto kept = kept_as_opaque(*input, take_kept)) return kept;
  return make_contiguous(ctx, input);
}

ConvTensors widen(const Context& ctx, const ConvTensors& t) {
  return {to_f32(ctx, *t.x), to_f32(ctx, *t.w), t.bias ? to_f32(ctx, *t.bias) : nullptr, nullptr};
}

void fill_bias(const ConvTensors& t, host::CpuTensor& y) {
  const std::size_t channels = y.shape[1];
  const std::size_t planes = y.shape[0] * channels;
  const std::size_t vol = planes ? y.num_elements() / planes : 0;
  visit_float_dtype("fill_bias", y.dtype, [&]<class T>() {
    T* out = y.data<T>();
    const T* b = t.bias ? t.bias->data<T>() : nullptr;
    parallel_for(planes, [&](std::size_t begin, std::size_t end) {
      for (std::size_t p = begin; p < end; ++p)
        std::fill(out + p * vol, out + (p + 1) * vol, b ? b[p % channels] : T(0.0f));
    });
  });
}

std::vector<std::size_t> unit_spatial(std::vector<std::size_t> shape, std::size_t n) {
  while (shape.size() < n + 2) shape.push_back(1);
  return shape;
}

std::vector<std::size_t> conv_weight_dims(const std::vector<std::size_t>& weight_shape, std::size_t n,
                                          std::size_t groups) {
  auto dims = unit_spatial(weight_shape, n);
  if (groups > 1) {
    dims[0] /= groups;
    dims.insert(dims.begin(), groups);
  }
  return dims;
}

ConvGeometry conv_geometry(const std::vector<std::size_t>& stride, const std::vector<std::size_t>& padding,
                           const std::vector<std::size_t>& dilation, std::size_t n) {
  ConvGeometry g{dnnl::memory::dims(n, 1), dnnl::memory::dims(n, 0), dnnl::memory::dims(n, 0)};
  for (std::size_t i = 0; i < stride.size(); ++i) {
    g.strides[i] = static_cast<dnnl::memory::dim>(stride[i]);
    g.dilates[i] = static_cast<dnnl::memory::dim>(dilation[i]) - 1;
    g.pad[i] = static_cast<dnnl::memory::dim>(padding[i]);
  }
  return g;
}

}  // namespace burn::flex::dnn
