// Parameters and running state: the tensors a module owns.
//
//   struct Affine {
//     burn::module::Param<burn::Tensor<1>> scale;          // trained
//     burn::module::RunningState<burn::Tensor<1>> count;   // saved, never trained
//     BURN_MODULE(scale, count)
//   };
//
// A Param has a stable ParamId that survives to_device, fork, save and load,
// so optimiser state keyed by it follows the parameter wherever it goes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <burn/tensor.hpp>

namespace burn::module {

/// A parameter's identity: unique within a process (a bijective mix of a
/// counter and a per-process random salt) and random across processes.
class ParamId {
 public:
  /// A fresh id.
  ParamId();
  explicit ParamId(std::uint64_t value) noexcept : value_(value) {}
  std::uint64_t value() const noexcept { return value_; }
  /// 16 lower-case hex digits (the form records store).
  std::string to_string() const;
  /// Parses to_string()'s form; throws burn::Error("[ParamId] ...") otherwise.
  static ParamId parse(std::string_view text);
  friend bool operator==(const ParamId&, const ParamId&) = default;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 flags the defaulted operator's own comparison with 0
  friend auto operator<=>(const ParamId&, const ParamId&) = default;

 private:
  std::uint64_t value_;
};

namespace detail {
/// Whether `t` already belongs to an autodiff graph (a leaf or an op output).
bool is_tracked(const burn::detail::TensorRef& t) noexcept;
/// Makes a parameter value consistent with its trainable flag: a trainable
/// float value on an autodiff device that is not yet part of a graph becomes a
/// leaf that collects gradients; a frozen one loses its leaf. Values linked to
/// a source graph (to_device on an autodiff device) are kept as they are.
burn::detail::TensorRef prepare_param(burn::detail::TensorRef t, bool trainable);
}  // namespace detail

/// What module visitors see of a Param or RunningState: its id, whether it is
/// trained, and its value as an untyped handle.
class ParamBase {
 public:
  const ParamId& id() const noexcept { return id_; }
  void set_id(const ParamId& id) noexcept { id_ = id; }
  /// Whether optimisers update it and backward collects its gradient.
  bool is_trainable() const noexcept { return trainable_; }
  void set_trainable(bool trainable) {
    trainable_ = trainable;
    set_ref(ref());
  }
  /// Whether PyTorch stores this 2-D parameter transposed (Linear weights:
  /// ours are [d_input, d_output], torch's [out, in]); the PyTorch record
  /// adapter transposes these on load and save.
  bool is_pytorch_transposed() const noexcept { return pytorch_transposed_; }
  void set_pytorch_transposed(bool transposed) const noexcept { pytorch_transposed_ = transposed; }
  virtual burn::detail::TensorRef ref() const = 0;
  /// Replaces the value; throws burn::Error if rank or kind differ.
  virtual void set_ref(burn::detail::TensorRef value) = 0;

 protected:
  ParamBase(ParamId id, bool trainable) : id_(id), trainable_(trainable) {}
  ParamBase(const ParamBase&) = default;
  ParamBase& operator=(const ParamBase&) = default;
  ~ParamBase() = default;

 private:
  ParamId id_;
  bool trainable_;
  // Mutable: a layer may (re)state its layout while being visited through a
  // const module (nn::Linear does).
  mutable bool pytorch_transposed_ = false;
};

/// A trainable tensor with a stable id. Read it with `val()` or `->`.
template <class T>
class Param final : public ParamBase {
 public:
  explicit Param(T value, bool trainable = true) : Param(ParamId(), std::move(value), trainable) {}
  Param(ParamId id, T value, bool trainable = true)
      : ParamBase(id, trainable), value_(T(detail::prepare_param(value.ref(), trainable))) {}

  const T& val() const noexcept { return value_; }
  const T* operator->() const noexcept { return &value_; }
  const T& operator*() const noexcept { return value_; }
  void set(T value) { value_ = T(detail::prepare_param(value.ref(), is_trainable())); }

  /// This parameter's gradient in `grads` (nullopt if none reached it).
  auto grad(const Gradients& grads) const { return value_.grad(grads); }

  burn::detail::TensorRef ref() const override { return value_.ref(); }
  void set_ref(burn::detail::TensorRef value) override {
    value_ = T(detail::prepare_param(std::move(value), is_trainable()));
  }

 private:
  T value_;
};

/// Module state that is saved and moved with the module but never trained
/// (batch-norm running statistics). Layers update it during forward, so it
/// is mutable through a const module; values are always detached.
template <class T>
class RunningState final : public ParamBase {
 public:
  explicit RunningState(T value) : RunningState(ParamId(), std::move(value)) {}
  RunningState(ParamId id, T value) : ParamBase(id, false), value_(value.detach()) {}

  const T& val() const noexcept { return value_; }
  const T* operator->() const noexcept { return &value_; }
  /// Replaces the value (detached); allowed on a const module, as running
  /// statistics change during a forward pass.
  void update(const T& value) const { value_ = value.detach(); }

  burn::detail::TensorRef ref() const override { return value_.ref(); }
  void set_ref(burn::detail::TensorRef value) override { value_ = T(std::move(value)).detach(); }

 private:
  mutable T value_;
};

}  // namespace burn::module
