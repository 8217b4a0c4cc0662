// Full, Arange and Random.
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "backends/host/random_fill.hpp"
#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {

template <class T>
T scalar_as(const Scalar& s) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    if (s.kind() == Scalar::Kind::Float) return convert_element<T>(s.as_double());
  return s.as<T>();
}

}  // namespace

Result kernel(const Context& ctx, const ir::Full& op, Inputs, Outputs out) {
  auto t = ctx.output(out[0]);
  // The value's bytes repeated over 8 bytes, written as 32-bit words.
  std::byte pattern[8];
  visit_dtype(out[0].dtype, [&]<class T>() {
    const T v = scalar_as<T>(op.value);
    for (std::size_t i = 0; i < sizeof pattern; i += sizeof(T)) std::memcpy(pattern + i, &v, sizeof(T));
  });
  struct {
    std::uint32_t n;
    std::uint32_t pattern[2];
  } params{};
  const std::uint64_t bytes = t->num_elements() * dtype_size(t->dtype);
  params.n = static_cast<std::uint32_t>((bytes + 3) / 4);  // the block is padded to 4 bytes at least
  std::memcpy(params.pattern, pattern, sizeof pattern);
  std::uint32_t gx = 0, gy = 0;
  grid_for(ctx, (params.n + kWorkgroup - 1) / kWorkgroup, gx, gy);
  const Binding bindings[] = {t->binding()};
  ctx.stream().dispatch(ctx.pipeline("fill"), bindings, std::as_bytes(std::span(&params, 1)), gx, gy);
  return {t};
}

Result kernel(const Context& ctx, const ir::Arange& op, Inputs, Outputs out) {
  auto t = ctx.output(out[0]);
  const std::size_t n = t->num_elements();
  if (n == 0) return {t};
  const std::int64_t last = op.start + static_cast<std::int64_t>(n - 1) * op.step;
  auto fits = [](std::int64_t v) {
    return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
  };
  if (fits(op.start) && fits(last) && fits(op.step)) {
    struct {
      std::uint32_t n;
      std::int32_t start, step;
    } params{static_cast<std::uint32_t>(n), static_cast<std::int32_t>(op.start), static_cast<std::int32_t>(op.step)};
    std::uint32_t gx = 0, gy = 0;
    grid_for(ctx, (n + kWorkgroup - 1) / kWorkgroup, gx, gy);
    const Binding bindings[] = {t->binding()};
    ctx.stream().dispatch(ctx.pipeline(fmt::format("arange_{}", dtype_suffix(t->dtype))), bindings,
                          std::as_bytes(std::span(&params, 1)), gx, gy);
    return {t};
  }
  // Values past 32 bits: computed exactly in 64 bits on the host and uploaded.
  TensorData data = TensorData::zeros(Shape(t->shape), t->dtype);
  visit_dtype(t->dtype, [&]<class T>() {
    auto* p = reinterpret_cast<T*>(data.bytes_mut().data());
    for (std::size_t i = 0; i < n; ++i) p[i] = convert_element<T>(op.start + static_cast<std::int64_t>(i) * op.step);
  });
  ctx.stream().upload(data.bytes(), Binding{t->buffer->block().buffer, t->buffer->block().offset, data.bytes().size()});
  return {t};
}

Result kernel(const Context& ctx, const ir::Random& op, Inputs, Outputs out) {
  // Drawn on the host from the device's seeded generator with the CPU
  // backends' recipe (53-bit uniforms, Box-Muller normals), so one seed gives
  // the same tensor on every device; then uploaded like from_data.
  auto t = ctx.output(out[0]);
  const std::size_t n = t->num_elements();
  TensorData data = TensorData::zeros(Shape(t->shape), t->dtype);
  host::fill_random(op, ctx.backend.rng(), t->dtype, data.bytes_mut().data(), n);
  ctx.stream().upload(data.bytes(), Binding{t->buffer->block().buffer, t->buffer->block().offset, data.bytes().size()});
  return {t};
}

}  // namespace burn::vulkan
