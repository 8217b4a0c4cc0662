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
#include <span>
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

/// A number an update rule's step depends on (the learning rate, a bias
/// correction): a host value in an eager step; in a traced one, a tensor
/// of one element the rule broadcasts (an element of the step's inputs).
struct StepScalar {
  double value = 0.0;
  burn::detail::TensorRef tensor;  ///< null in an eager step
};

/// The per-tensor update rule of one optimiser kind.
class UpdateRule {
 public:
  virtual ~UpdateRule() = default;
  /// "sgd", "adam", ... (recorded in saved state, checked on load).
  virtual std::string_view name() const = 0;
  /// The slot names this rule may keep (others in a loaded file are an error).
  virtual std::vector<std::string_view> slot_names() const = 0;
  /// The slots this rule keeps with its configuration, in the order a
  /// traced step takes them.
  virtual std::vector<std::string_view> used_slots() const = 0;
  /// The step's scalars for learning rate `lr` and update number `step`
  /// (1 on the first), in the order update() reads them.
  virtual std::vector<double> step_scalars(double lr, std::uint64_t step) const = 0;
  /// The new parameter value. `param`, `grad` and the slots share one device
  /// (without autodiff), dtype and shape. An eager step leaves out the
  /// slots a parameter has no value for yet; a traced one passes every
  /// used slot, zeros before the first step, for which the rules give the
  /// same values.
  virtual burn::detail::TensorRef update(std::span<const StepScalar> scalars, const burn::detail::TensorRef& param,
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

  // ---- a step inside a traced function (burn::trace; docs/trace.md, "Optimisers") ----
  // A recording cannot hold the state or read the step count, so they are
  // the traced function's inputs and results:
  //
  //   Tensors state = optim.traced_state(model);           // once
  //   ... inside the traced function, with `scalars` and `state` among its inputs:
  //   auto [next, next_state] = optim.traced_step(scalars, m, GradientsParams::from_grads(grads, m), state);
  //   ... each call:
  //   Tensors out = step(/* model tensors, state, optim.traced_scalars(lr, model, device), batch */);
  //   optim.commit_traced(model, /* the state among out */);
  //
  // For f32 parameters a traced step gives the eager step's bits.

  /// The state tensors a traced step takes for `module`: for each trainable
  /// parameter in visiting order, the slots the optimiser keeps with its
  /// configuration (Adam: moment_1, moment_2), zeros where the parameter
  /// has none yet, on the parameter's device without autodiff.
  template <module::Module M>
  std::vector<burn::detail::TensorRef> traced_state(const M& module) const {
    return traced_state_of(trainable_params(module));
  }
  /// The next step's scalars (the learning rate and what the optimiser
  /// derives from it and the step count: Adam's bias corrections) as one
  /// f32 tensor on `device`. Throws burn::Error("[Optimizer] ...") for a bad
  /// learning rate, or when the trainable parameters have taken different
  /// numbers of steps.
  template <module::Module M>
  burn::detail::TensorRef traced_scalars(double lr, const M& module, const Device& device) const {
    return traced_scalars_of(lr, trainable_params(module), device);
  }
  /// Inside the traced function: the updated module and its new state from
  /// the step's `scalars` and `state` (inputs of the function, made by the
  /// two calls above) and the gradients. Every trainable parameter must have
  /// a gradient. Changes nothing in the optimiser.
  template <module::Module M>
  std::pair<M, std::vector<burn::detail::TensorRef>> traced_step(const burn::detail::TensorRef& scalars,
                                                                 const M& module, const GradientsParams& grads,
                                                                 std::span<const burn::detail::TensorRef> state) const {
    M updated = module;
    auto next = traced_update(scalars, trainable_params(updated), grads, state);
    return {std::move(updated), std::move(next)};
  }
  /// After a call of the traced step: keeps `state` (its new state, as
  /// traced_state lays it out) and counts the step for every trainable
  /// parameter of `module`, so save() and an eager step continue from it.
  template <module::Module M>
  void commit_traced(const M& module, std::span<const burn::detail::TensorRef> state) {
    commit_traced_of(trainable_params(module), state);
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

  using ParamList = std::vector<std::pair<std::string, module::ParamBase*>>;
  /// The trainable parameters of `module` (which may be const: the traced
  /// calls that only read them take them so).
  template <module::Module M>
  static ParamList trainable_params(const M& module) {
    ParamList params;
    module::detail::FunctionVisitor v(
        [&](const std::string& path, module::ParamBase& p) {
          if (p.is_trainable()) params.emplace_back(path, &p);
        },
        nullptr);
    // Visiting needs non-const fields; the pointers are written only by
    // traced_step, on its own copy.
    const_cast<M&>(module).visit_fields(v, "");
    return params;
  }
  std::vector<burn::detail::TensorRef> traced_state_of(const ParamList& params) const;
  burn::detail::TensorRef traced_scalars_of(double lr, const ParamList& params, const Device& device) const;
  std::vector<burn::detail::TensorRef> traced_update(const burn::detail::TensorRef& scalars, const ParamList& params,
                                                     const GradientsParams& grads,
                                                     std::span<const burn::detail::TensorRef> state) const;
  void commit_traced_of(const ParamList& params, std::span<const burn::detail::TensorRef> state);

  std::unique_ptr<detail::UpdateRule> rule_;
  std::optional<GradientClippingConfig> clipping_;
  std::map<module::ParamId, detail::ParamState> states_;
};

}  // namespace burn::optim
