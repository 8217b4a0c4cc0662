#include "backends/host/random_fill.hpp"

#include <cmath>
#include <type_traits>

namespace burn::host {

void fill_random(const ir::Random& op, std::mt19937_64& rng, DType dtype, std::byte* dst, std::size_t n) {
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  visit_dtype(dtype, [&]<class T>() {
    T* out = reinterpret_cast<T*>(dst);
    for (std::size_t i = 0; i < n; ++i) {
      double v = 0;
      switch (op.dist) {
        case ir::DistributionKind::Default: v = unit(); break;
        case ir::DistributionKind::Uniform: v = op.a + (op.b - op.a) * unit(); break;
        case ir::DistributionKind::Bernoulli: v = unit() < op.a ? 1.0 : 0.0; break;
        case ir::DistributionKind::Normal: {
          // Box-Muller; 1 - unit() is in (0, 1] so the log is finite.
          const double u1 = 1.0 - unit(), u2 = unit();
          v = op.a + op.b * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
          break;
        }
      }
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) out[i] = static_cast<T>(std::floor(v));
      else out[i] = convert_element<T>(v);
    }
  });
}

}  // namespace burn::host
