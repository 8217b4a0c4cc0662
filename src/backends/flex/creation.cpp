#include "backends/flex/kernels.hpp"

#include "backends/flex/parallel.hpp"

namespace burn::flex {

Result kernel(const Context& ctx, const ir::Full& op, Inputs, Outputs out) {
  auto t = ctx.output(out[0]);
  visit_dtype(out[0].dtype, [&]<class T>() {
    const T v = op.value.as<T>();
    T* p = t->data<T>();
    parallel_for(t->num_elements(), [&](std::size_t begin, std::size_t end) { std::fill(p + begin, p + end, v); });
  });
  return {t};
}

Result kernel(const Context& ctx, const ir::Arange& op, Inputs, Outputs out) {
  auto t = ctx.output(out[0]);
  visit_dtype(out[0].dtype, [&]<class T>() {
    T* p = t->data<T>();
    parallel_for(t->num_elements(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i)
        p[i] = convert_element<T>(op.start + static_cast<std::int64_t>(i) * op.step);
    });
  });
  return {t};
}

}  // namespace burn::flex
