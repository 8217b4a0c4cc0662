// mask_where and mask_fill: elementwise choice between two values, with the
// tensor, mask and source broadcast to the output's shape.
#include "backends/ndarray/kernels.hpp"
#include "backends/ndarray/strided.hpp"

namespace burn::ndarray {

Result kernel(const Context& ctx, const ir::MaskWhere&, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  const auto& mask = host::as_cpu(in[1].primitive);
  const auto& source = host::as_cpu(in[2].primitive);
  auto t = ctx.output(out[0]);
  for_each_index(t->shape, [&](std::size_t i, const Index& o) {
    if (element_at<bool>(mask, o)) copy_element(source, offset_of(source, o), *t, i);
    else copy_element(x, offset_of(x, o), *t, i);
  });
  return {t};
}

Result kernel(const Context& ctx, const ir::MaskFill& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  const auto& mask = host::as_cpu(in[1].primitive);
  auto t = ctx.output(out[0]);
  visit_dtype(x.dtype, [&]<class T>() {
    const T value = scalar_as<T>(op.value);
    for_each_index(t->shape, [&](std::size_t i, const Index& o) {
      t->data<T>()[i] = element_at<bool>(mask, o) ? value : element_at<T>(x, o);
    });
  });
  return {t};
}

}  // namespace burn::ndarray
