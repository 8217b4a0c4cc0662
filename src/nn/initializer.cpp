#include <burn/nn/initializer.hpp>

#include <fmt/format.h>

namespace burn::nn {

namespace {
std::size_t require_fan(std::optional<std::size_t> fan, const char* which, const char* init) {
  if (!fan) throw Error("Initializer", fmt::format("{} initialisation needs {}; pass it to init()", init, which));
  if (*fan == 0) throw Error("Initializer", fmt::format("{} initialisation needs a non-zero {}", init, which));
  return *fan;
}
}  // namespace

burn::detail::TensorRef Initializer::init_ref(const Shape& shape, const TensorCreationOptions& options,
                                              std::optional<std::size_t> fan_in,
                                              std::optional<std::size_t> fan_out) const {
  auto uniform = [&](double lo, double hi) {
    return burn::detail::random(shape, Distribution::uniform(lo, hi), options, TensorKind::Float);
  };
  auto normal = [&](double mean, double std) {
    return burn::detail::random(shape, Distribution::normal(mean, std), options, TensorKind::Float);
  };
  auto kaiming_fan = [&](const char* name) {
    return fan_out_only_ ? require_fan(fan_out, "fan_out", name) : require_fan(fan_in, "fan_in", name);
  };
  switch (kind_) {
    case Kind::Constant: return burn::detail::full(shape, a_, options, TensorKind::Float);
    case Kind::Uniform: return uniform(a_, b_);
    case Kind::Normal: return normal(a_, b_);
    case Kind::KaimingUniform: {
      double bound = std::sqrt(3.0) * a_ / std::sqrt(static_cast<double>(kaiming_fan("kaiming_uniform")));
      return uniform(-bound, bound);
    }
    case Kind::KaimingNormal: return normal(0.0, a_ / std::sqrt(static_cast<double>(kaiming_fan("kaiming_normal"))));
    case Kind::XavierUniform: {
      double fans = static_cast<double>(require_fan(fan_in, "fan_in", "xavier_uniform") +
                                        require_fan(fan_out, "fan_out", "xavier_uniform"));
      double bound = a_ * std::sqrt(6.0 / fans);
      return uniform(-bound, bound);
    }
    case Kind::XavierNormal: {
      double fans = static_cast<double>(require_fan(fan_in, "fan_in", "xavier_normal") +
                                        require_fan(fan_out, "fan_out", "xavier_normal"));
      return normal(0.0, a_ * std::sqrt(2.0 / fans));
    }
  }
  throw Error("Initializer", "unknown initialiser kind");
}

}  // namespace burn::nn
