#include "distributed.hpp"

#include <fmt/format.h>

#include <burn/error.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#if BURN_HAS_COLLECTIVE
#include <burn/collective.hpp>
#include <burn/collective/gradient_sync.hpp>
#endif

namespace burn_train {

#if BURN_HAS_COLLECTIVE
struct Distributed::Group {
  burn::collective::ProcessGroup group;
  // Declared after the group it uses: destroyed first.
  burn::collective::GradientSync sync;
  explicit Group(burn::collective::ProcessGroup g) : group(std::move(g)), sync(group) {}
};
#else
struct Distributed::Group {};
#endif

Distributed::Distributed(Distributed&&) noexcept = default;
Distributed& Distributed::operator=(Distributed&&) noexcept = default;
Distributed::~Distributed() = default;

Distributed Distributed::from_env() {
  Distributed d;
  const char* world = std::getenv("WORLD_SIZE");
  if (world == nullptr || std::string(world).empty() || std::string(world) == "1") return d;
#if BURN_HAS_COLLECTIVE
  d.group_ = std::make_unique<Group>(burn::collective::ProcessGroup::from_env());
  d.rank_ = d.group_->group.rank();
  d.world_size_ = d.group_->group.world_size();
  return d;
#else
  throw burn::ConfigurationError(
      "burn-train", fmt::format("WORLD_SIZE is {}, but this build of burn has no collectives (configured with "
                                "BURN_COLLECTIVE=OFF); reconfigure with -DBURN_COLLECTIVE=ON to train on several ranks",
                                world));
#endif
}

Model Distributed::broadcast(const Model& model) {
#if BURN_HAS_COLLECTIVE
  if (group_) return group_->sync.broadcast_parameters(model);
#endif
  return model;
}

burn::optim::GradientsParams Distributed::backward(const burn::Tensor<1>& loss, const Model& model) {
#if BURN_HAS_COLLECTIVE
  if (group_) return group_->sync.backward(loss, model);
#endif
  burn::Gradients grads = loss.backward();
  return burn::optim::GradientsParams::from_grads(grads, model);
}

burn::optim::GradientsParams Distributed::average(const burn::optim::GradientsParams& grads, const Model& model) {
#if BURN_HAS_COLLECTIVE
  if (group_) return group_->sync.all_reduce(grads, model);
#endif
  (void)model;
  return grads;
}

PassMetrics Distributed::combine(const PassMetrics& mine) {
#if BURN_HAS_COLLECTIVE
  if (group_) {
    const auto items = static_cast<double>(mine.items);
    // Sums travel, not means: shards may differ in size.
    const std::vector<double> sums{mine.loss * items, std::round(mine.accuracy * items), items,
                                   static_cast<double>(mine.batches)};
    const std::vector<double> all =
        group_->group.all_reduce_data(burn::TensorData(sums, {sums.size()}), burn::collective::ReduceOp::Sum)
            .to_vec<double>();
    PassMetrics out = mine;
    out.items = static_cast<std::size_t>(all[2]);
    out.batches = static_cast<std::size_t>(all[3]);
    out.loss = all[2] > 0 ? all[0] / all[2] : 0.0;
    out.accuracy = all[2] > 0 ? all[1] / all[2] : 0.0;
    return out;
  }
#endif
  return mine;
}

}  // namespace burn_train
