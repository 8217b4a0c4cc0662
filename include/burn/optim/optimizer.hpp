// The optimiser: one type-erased class that steps a whole module.
//
//   auto optim = burn::optim::AdamConfig{}.init();
//   for (...) {
//     auto grads = loss.backward();
//     model = optim.step(lr, model, burn::optim::GradientsParams::from_grads(grads, model));
//   }
//   optim.save("optim.safetensors");                 // atomic
//   optim.load("optim.safetensors", device);
//
// Every trainable Param that has a gradient is updated (frozen ones and ones
// without a gradient are left as they are); the update runs without autodiff
// recording, and the new value is a fresh trainable leaf with the same
// ParamId on the parameter's own device and autodiff context. Per-parameter
// state is keyed by ParamId, so it follows the parameters through fork,
// to_device and save/load; it moves to each parameter's device and dtype
// when that parameter is next updated.
#pragma once

#include <burn/module/module.hpp>
#include <burn/optim/grad_clipping.hpp>
#include <burn/optim/gradients_params.hpp>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace burn::record {
struct SafetensorsFile;
}

namespace burn::optim {

namespace detail {

/// One parameter's state: named tensors and the number of updates it has had.
struct ParamState {
  std::map<std::string, burn::detail::TensorRef> slots;
  std::uint64_t step = 0;
};

/// The per-tensor update rule of one optimiser kind.
class UpdateRule {
 public:
  virtual ~UpdateRule() = default;
  /// "sgd", "adam", ... (recorded in saved state, checked on load).
  virtual std::string_view name() const = 0;
  /// The slot names this rule may keep (others in a loaded file are an error).
  virtual std::vector<std::string_view> slot_names() const = 0;
  /// The new parameter value. `param`, `grad` and the slots share one device
  /// (without autodiff), dtype and shape; `state.step` already counts this
  /// update (1 on the first).
  virtual burn::detail::TensorRef update(double lr, const burn::detail::TensorRef& param,
                                         const burn::detail::TensorRef& grad, ParamState& state) const = 0;
};

}  // namespace detail

class Optimizer {
 public:
  Optimizer(std::unique_ptr<detail::UpdateRule> rule, std::optional<GradientClippingConfig> clipping);
  Optimizer(Optimizer&&) noexcept;
  Optimizer& operator=(Optimizer&&) noexcept;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  ~Optimizer();

  /// One update of `module` with learning rate `lr` (finite, >= 0): returns
  /// the updated copy. Throws burn::Error("[Optimizer] ...") for another
  /// learning rate or a gradient whose shape differs from its parameter's;
  /// nothing (module or state) changes then.
  template <module::Module M>
  M step(double lr, const M& module, GradientsParams grads) {
    M updated = module;
    update(lr, updated, std::move(grads));
    return updated;
  }
  /// The same for a module passed with std::move, as in
  /// `model = optim.step(lr, std::move(model), grads)`: it is updated in place
  /// and moved out only when the step succeeds, so after an error the
  /// caller's model is still there, unchanged (a by-value parameter would
  /// have taken it with it).
  template <module::Module M>
  requires(!std::is_reference_v<M> && !std::is_const_v<M>) M step(double lr, M&& module, GradientsParams grads) {
    update(lr, module, std::move(grads));
    // NOLINTNEXTLINE(bugprone-move-forwarding-reference): M is never a reference (the requires above)
    return std::move(module);
  }

  /// "sgd", "adam", "adamw" or "rmsprop".
  std::string_view name() const;
  const std::optional<GradientClippingConfig>& gradient_clipping() const noexcept { return clipping_; }
  /// The number of parameters that have state.
  std::size_t num_states() const noexcept { return states_.size(); }
  /// How many updates parameter `id` has had (0 if it has no state).
  std::uint64_t param_step(const module::ParamId& id) const;
  /// A state tensor of `id` ("velocity", "moment_1", ...), if present.
  std::optional<burn::detail::TensorRef> state_tensor(const module::ParamId& id, std::string_view slot) const;

  /// The state as a record: tensors keyed "<param id hex>.<slot>", metadata
  /// with the format, the optimiser's name and "<param id hex>.step" counters.
  std::map<std::string, TensorData> state_tensors() const;
  std::map<std::string, std::string> state_metadata() const;
  /// Replaces the whole state with a record's, its tensors created on
  /// `device`. Throws burn::Error("[Optimizer] ...") for a record of another
  /// optimiser or a malformed key; the state is unchanged then.
  void load_state(const record::SafetensorsFile& file, const Device& device);
  /// Writes the state as a safetensors file, atomically.
  void save(const std::filesystem::path& path) const;
  /// Reads a file written by save().
  void load(const std::filesystem::path& path, const Device& device);

 private:
  template <module::Module M>
  void update(double lr, M& module, GradientsParams grads) {
    std::vector<std::pair<std::string, module::ParamBase*>> params;
    module::detail::FunctionVisitor v(
        [&](const std::string& path, module::ParamBase& p) { params.emplace_back(path, &p); }, nullptr);
    module.visit_fields(v, "");
    step_params(lr, params, std::move(grads));
  }
  /// Updates the parameters and their state, all or nothing: everything that
  /// can fail runs before the first parameter or state entry is replaced.
  void step_params(double lr, const std::vector<std::pair<std::string, module::ParamBase*>>& params,
                   GradientsParams grads);

  std::unique_ptr<detail::UpdateRule> rule_;
  std::optional<GradientClippingConfig> clipping_;
  std::map<module::ParamId, detail::ParamState> states_;
};

}  // namespace burn::optim
