#include "backends/cpu_common/cpu_backend.hpp"

#include <cmath>
#include <fstream>

namespace burn::backend {
void Backend::set_num_threads(std::size_t) {
  throw Error("Device::set_num_threads",
              "the " + name() + " backend computes on a fixed number of threads (" + std::to_string(num_threads()) + ")");
}
}  // namespace burn::backend

namespace burn::cpu {

CpuBackendBase::CpuBackendBase(bool caching_allocator)
    : alloc_(std::make_shared<Allocator>(caching_allocator)), rng_(std::random_device{}()) {}

backend::PrimitivePtr CpuBackendBase::from_data(TensorData data) { return from_tensor_data(alloc_, data); }

TensorData CpuBackendBase::to_data(const backend::PrimitivePtr& p, const ir::TensorSpec&) {
  return to_tensor_data(as_cpu(p));
}

void CpuBackendBase::seed(std::uint64_t seed) {
  std::lock_guard lock(rng_mutex_);
  rng_.seed(seed);
}

PhysicalIdentity CpuBackendBase::identity() const { return PhysicalIdentity{std::nullopt, std::nullopt, "host-cpu"}; }

std::string CpuBackendBase::physical_name() const { return host_cpu_name(); }

std::string host_cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        return name;
      }
    }
  }
  return "host CPU";
}

CpuTensorPtr CpuBackendBase::random(const ir::Random& op, const ir::TensorSpec& spec) {
  auto out = CpuTensor::allocate(alloc_, spec);
  const std::size_t n = spec.shape.num_elements();
  std::lock_guard lock(rng_mutex_);
  // 53 random bits -> a double in [0, 1), identical on every platform
  // (std::uniform_real_distribution is implementation-defined).
  auto unit = [&] { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; };
  visit_dtype(spec.dtype, [&]<class T>() {
    T* dst = out->data<T>();
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
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // Int tensors: uniform integers in [a, b) (floor keeps the bound exclusive).
        dst[i] = static_cast<T>(std::floor(v));
      } else {
        dst[i] = convert_element<T>(v);
      }
    }
  });
  return out;
}

}  // namespace burn::cpu
