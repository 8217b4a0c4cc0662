// The module system: a module is any struct that lists its fields with
// BURN_MODULE. Fields may be Params, RunningStates, TrainingModes, other
// modules, and std::vector / std::optional / std::array of those; anything
// not listed (sizes, options, activations) is a constant.
//
//   struct Mlp {
//     burn::nn::Linear fc1, fc2;
//     BURN_MODULE(fc1, fc2)
//     burn::Tensor<2> forward(const burn::Tensor<2>& x) const {
//       return fc2.forward(burn::activation::relu(fc1.forward(x)));
//     }
//   };
//
//   auto model = MlpConfig{...}.init(burn::Device::flex().autodiff());
//   auto moved = model.fork(other_device);     // fresh leaves, same ParamIds
//   auto frozen = model.no_grad();              // nothing trainable
//   auto inference = model.valid();             // parameters without autodiff
//
// Modules are values: copying one is O(1) per tensor and shares storage;
// every transformation returns a new module and leaves its input untouched.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <burn/module/param.hpp>

namespace burn::module {

/// Whether mode-dependent layers (Dropout, BatchNorm) behave as in training.
/// Auto, the default, is Burn's rule: training exactly when the input is on an
/// autodiff device and gradients are being recorded (so `valid()` and
/// NoGradGuard mean evaluation). `module.train()` / `module.eval()` force it,
/// as PyTorch's do.
enum class Mode { Auto, Train, Eval };

/// The mode field of a layer (listed in its BURN_MODULE so train()/eval() reach it).
struct TrainingMode {
  Mode mode = Mode::Auto;
  /// Whether a forward pass on `input` should use training behaviour.
  bool is_training(const burn::detail::TensorRef& input) const noexcept;
  template <std::size_t D, class K>
  bool is_training(const Tensor<D, K>& input) const noexcept {
    return is_training(input.ref());
  }
};

/// Walks a module's fields. Paths are dotted field names ("encoder.layers.0.weight"),
/// the keys records use.
class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void param(const std::string& path, ParamBase& p) {
    (void)path;
    (void)p;
  }
  virtual void state(const std::string& path, ParamBase& s) {
    (void)path;
    (void)s;
  }
  virtual void mode(TrainingMode& m) { (void)m; }
};

template <class M>
concept Module = requires(M& m, Visitor& v, const std::string& prefix) {
  m.visit_fields(v, prefix);
};

namespace detail {

inline std::string join_path(const std::string& prefix, std::string_view name) {
  return prefix.empty() ? std::string(name) : prefix + "." + std::string(name);
}

template <class T>
void visit_field(Visitor& v, const std::string& path, T& field);

template <class T>
void visit_field(Visitor& v, const std::string& path, Param<T>& p) {
  v.param(path, p);
}
template <class T>
void visit_field(Visitor& v, const std::string& path, RunningState<T>& s) {
  v.state(path, s);
}
inline void visit_field(Visitor& v, const std::string&, TrainingMode& m) { v.mode(m); }
template <class T>
void visit_field(Visitor& v, const std::string& path, std::vector<T>& items) {
  for (std::size_t i = 0; i < items.size(); ++i) visit_field(v, join_path(path, std::to_string(i)), items[i]);
}
template <class T, std::size_t N>
void visit_field(Visitor& v, const std::string& path, std::array<T, N>& items) {
  for (std::size_t i = 0; i < N; ++i) visit_field(v, join_path(path, std::to_string(i)), items[i]);
}
template <class T>
void visit_field(Visitor& v, const std::string& path, std::optional<T>& item) {
  if (item) visit_field(v, path, *item);
}
template <class T>
void visit_field(Visitor& v, const std::string& path, T& field) {
  static_assert(Module<T>,
                "a BURN_MODULE field must be a Param, RunningState, TrainingMode, a module (a type with "
                "BURN_MODULE), or a std::vector / std::optional / std::array of those; leave constants out of "
                "the BURN_MODULE list");
  field.visit_fields(v, path);
}

/// Splits BURN_MODULE's stringified argument list "a, b,c" into names.
std::vector<std::string_view> split_field_names(std::string_view names);

template <class... Fields>
void visit_named(Visitor& v, const std::string& prefix, std::string_view names, Fields&... fields) {
  if constexpr (sizeof...(Fields) == 0) return;  // BURN_MODULE(): a layer with no tensors
  const auto split = split_field_names(names);
  std::size_t i = 0;
  (visit_field(v, join_path(prefix, split[i++]), fields), ...);
}

/// Calls `f(path, param)` for every Param (or RunningState when `states`).
class FunctionVisitor final : public Visitor {
 public:
  using Fn = std::function<void(const std::string&, ParamBase&)>;
  FunctionVisitor(Fn on_param, Fn on_state) : on_param_(std::move(on_param)), on_state_(std::move(on_state)) {}
  void param(const std::string& path, ParamBase& p) override {
    if (on_param_) on_param_(path, p);
  }
  void state(const std::string& path, ParamBase& s) override {
    if (on_state_) on_state_(path, s);
  }

 private:
  Fn on_param_, on_state_;
};

/// The per-tensor transformations behind the module methods below.
burn::detail::TensorRef param_to_device(const burn::detail::TensorRef& t, const Device& device);
/// `replacement` for the tensor at `path` (with_tensors): throws burn::Error
/// unless it has the current tensor's rank and kind.
const burn::detail::TensorRef& checked_replacement(const std::string& path, const burn::detail::TensorRef& current,
                                                   const burn::detail::TensorRef& replacement);
/// The error for a list of `given` tensors where the module has `wanted`.
[[noreturn]] void throw_tensor_count(std::size_t wanted, std::size_t given);
burn::detail::TensorRef param_fork(const burn::detail::TensorRef& t, const Device& device);
burn::detail::TensorRef param_valid(const burn::detail::TensorRef& t);

}  // namespace detail

/// Visits every field of `m` from the root (paths start without a prefix).
template <Module M>
void visit(M& m, Visitor& v) {
  m.visit_fields(v, "");
}

/// Calls `f(path, param)` for every Param, in declaration order. Read-only:
/// `f` receives a const ParamBase.
template <Module M, class F>
void for_each_param(const M& m, F&& f) {
  detail::FunctionVisitor v([&](const std::string& path, ParamBase& p) { f(path, std::as_const(p)); }, nullptr);
  // Visiting needs non-const fields, but this visitor only reads them.
  const_cast<M&>(m).visit_fields(v, "");
}

/// Calls `f(path, tensor)` for every Param and RunningState (what a record holds).
template <Module M, class F>
void for_each_tensor(const M& m, F&& f) {
  auto read = [&](const std::string& path, ParamBase& p) { f(path, std::as_const(p)); };
  detail::FunctionVisitor v(read, read);
  const_cast<M&>(m).visit_fields(v, "");
}

/// Replaces every Param's value with `f(path, param)` (a TensorRef of the
/// same rank and kind); returns the new module.
template <Module M, class F>
M map_params(M m, F&& f) {
  detail::FunctionVisitor v([&](const std::string& path, ParamBase& p) { p.set_ref(f(path, std::as_const(p))); },
                            nullptr);
  m.visit_fields(v, "");
  return m;
}

/// Replaces every Param's and RunningState's value.
template <Module M, class F>
M map_tensors(M m, F&& f) {
  auto write = [&](const std::string& path, ParamBase& p) { p.set_ref(f(path, std::as_const(p))); };
  detail::FunctionVisitor v(write, write);
  m.visit_fields(v, "");
  return m;
}

/// Every Param's and RunningState's tensor, in visiting order: the module's
/// state as a list. with_tensors puts such a list back, which is how a
/// traced function takes a module's state as inputs (docs/trace.md).
template <Module M>
std::vector<burn::detail::TensorRef> tensors_of(const M& m) {
  std::vector<burn::detail::TensorRef> out;
  for_each_tensor(m, [&](const std::string&, const ParamBase& p) { out.push_back(p.ref()); });
  return out;
}

/// `m` with its Params' and RunningStates' tensors replaced, in visiting
/// order, by `tensors`: as many as tensors_of lists, each of the rank and
/// kind of the one it replaces (a trainable Param on an autodiff device is
/// tracked, as on construction). Throws burn::Error otherwise.
template <Module M>
M with_tensors(M m, std::span<const burn::detail::TensorRef> tensors) {
  std::size_t wanted = 0;
  for_each_tensor(m, [&](const std::string&, const ParamBase&) { ++wanted; });
  if (wanted != tensors.size()) detail::throw_tensor_count(wanted, tensors.size());
  std::size_t next = 0;
  return map_tensors(std::move(m), [&](const std::string& path, const ParamBase& p) {
    return detail::checked_replacement(path, p.ref(), tensors[next++]);
  });
}

/// The number of trainable scalars (running state is not counted).
template <Module M>
std::size_t num_params(const M& m) {
  std::size_t n = 0;
  for_each_param(m, [&](const std::string&, const ParamBase& p) { n += p.ref()->spec.shape.num_elements(); });
  return n;
}

/// The distinct devices the module's tensors live on.
template <Module M>
std::vector<Device> devices(const M& m) {
  std::vector<Device> out;
  for_each_tensor(m, [&](const std::string&, const ParamBase& p) {
    const Device& d = p.ref()->device;
    for (const auto& seen : out)
      if (seen == d) return;
    out.push_back(d);
  });
  return out;
}

/// Moves every tensor to `device`, each keeping its own autodiff context:
/// tracked parameters stay linked to the source ones (gradients flow back
/// to the originals), untracked ones stay untracked even on an autodiff
/// device (fork() makes trainable leaves there).
template <Module M>
M to_device(M m, const Device& device) {
  return map_tensors(std::move(m),
                     [&](const std::string&, const ParamBase& p) { return detail::param_to_device(p.ref(), device); });
}

/// Moves, detaches and makes fresh trainable leaves on `device`, keeping the
/// ParamIds (so optimiser state carries over).
template <Module M>
M fork(M m, const Device& device) {
  return map_tensors(std::move(m),
                     [&](const std::string&, const ParamBase& p) { return detail::param_fork(p.ref(), device); });
}

/// Marks every parameter as not trainable (no gradients, optimisers skip it).
template <Module M>
M no_grad(M m) {
  detail::FunctionVisitor v([](const std::string&, ParamBase& p) { p.set_trainable(false); }, nullptr);
  m.visit_fields(v, "");
  return m;
}

/// The same module with every tensor moved off autodiff (for evaluation).
template <Module M>
M valid(M m) {
  return map_tensors(std::move(m), [](const std::string&, const ParamBase& p) { return detail::param_valid(p.ref()); });
}

/// Sets every layer's TrainingMode.
template <Module M>
M with_mode(M m, Mode mode) {
  struct ModeVisitor final : Visitor {
    Mode target = Mode::Auto;
    void mode(TrainingMode& t) override { t.mode = target; }
  } v;
  v.target = mode;
  m.visit_fields(v, "");
  return m;
}

}  // namespace burn::module

/// Declares a module's fields, in order: `BURN_MODULE(conv1, conv2, fc)`.
/// Generates the field visitor and Burn's module methods (to_device, fork,
/// no_grad, valid, train, eval, num_params, devices), each returning a new module.
#define BURN_MODULE(...)                                                                                       \
  void visit_fields(::burn::module::Visitor& burn_visitor_, const std::string& burn_prefix_) {                 \
    ::burn::module::detail::visit_named(burn_visitor_, burn_prefix_, #__VA_ARGS__ __VA_OPT__(, ) __VA_ARGS__); \
  }                                                                                                            \
  BURN_MODULE_METHODS

/// The module methods alone, for a module that writes its own visit_fields.
#define BURN_MODULE_METHODS                                                                               \
  auto to_device(const ::burn::Device& device) const { return ::burn::module::to_device(*this, device); } \
  auto fork(const ::burn::Device& device) const { return ::burn::module::fork(*this, device); }           \
  auto no_grad() const { return ::burn::module::no_grad(*this); }                                         \
  auto valid() const { return ::burn::module::valid(*this); }                                             \
  auto train() const { return ::burn::module::with_mode(*this, ::burn::module::Mode::Train); }            \
  auto eval() const { return ::burn::module::with_mode(*this, ::burn::module::Mode::Eval); }              \
  std::size_t num_params() const { return ::burn::module::num_params(*this); }                            \
  std::vector<::burn::Device> devices() const { return ::burn::module::devices(*this); }
