// Creation ops and dtype casts.
#include "backends/ndarray/kernels.hpp"
#include "backends/ndarray/numeric.hpp"

namespace burn::ndarray {

Result kernel(const Context& ctx, const ir::Full& op, Inputs, Outputs out) {
  auto t = ctx.output(out[0]);
  visit_dtype(out[0].dtype, [&]<class T>() {
    const T v = scalar_as<T>(op.value);
    T* p = t->data<T>();
    for (std::size_t i = 0; i < t->num_elements(); ++i) p[i] = v;
  });
  return {t};
}

Result kernel(const Context& ctx, const ir::Arange& op, Inputs, Outputs out) {
  auto t = ctx.output(out[0]);
  visit_dtype(out[0].dtype, [&]<class T>() {
    T* p = t->data<T>();
    for (std::size_t i = 0; i < t->num_elements(); ++i)
      p[i] = convert_element<T>(op.start + static_cast<std::int64_t>(i) * op.step);
  });
  return {t};
}

Result kernel(const Context& ctx, const ir::Cast&, Inputs in, Outputs out) {
  const auto& src = host::as_cpu(in[0].primitive);
  auto t = ctx.output(out[0]);
  visit_dtype(src.dtype, [&]<class From>() {
    visit_dtype(out[0].dtype, [&]<class To>() {
      const From* s = reinterpret_cast<const From*>(src.buffer ? src.buffer->data() : nullptr);
      To* d = t->data<To>();
      host::for_each_offset(src.shape, src.strides, src.offset,
                            [&](std::size_t i, std::int64_t off) { d[i] = convert_element<To>(s[off]); });
    });
  });
  return {t};
}

}  // namespace burn::ndarray
