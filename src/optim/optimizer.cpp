#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <burn/optim/optimizer.hpp>
#include <burn/record/safetensors.hpp>
#include <charconv>
#include <cmath>

namespace burn::optim {

namespace {

using burn::detail::TensorRef;

constexpr const char* kOptimizerOp = "Optimizer";
constexpr const char* kFormat = "burn-cpp-optimizer";
constexpr const char* kStepSuffix = ".step";
constexpr std::uint64_t kMaxStep = std::uint64_t{1} << 53;

/// `t` without graph, on `base` (a device without autodiff) and in `dtype`.
TensorRef on(const TensorRef& t, const Device& base, DType dtype) {
  TensorRef out = burn::detail::detach(t);
  if (!(out->device == base)) out = burn::detail::to_device(out, base);
  if (out->spec.dtype != dtype) out = burn::detail::cast(out, dtype);
  return burn::detail::with_context(out, base);
}

/// One parameter being updated.
struct Work {
  const std::string* path;
  module::ParamBase* param;
  TensorRef value;  // detached, on the base device
  TensorRef grad;
};

/// The learning-rate check of an eager and a traced step alike.
void check_lr(double lr) {
  if (!std::isfinite(lr) || lr < 0.0)
    throw Error(kOptimizerOp,
                fmt::format("the learning rate must be finite and non-negative, got {}; nothing was updated "
                            "(check the value or the scheduler that produced it)",
                            lr));
}

using ParamEntry = std::pair<std::string, module::ParamBase*>;

/// Gradients and state are kept per id: two trainable parameters sharing one
/// would trade gradients and share one state, and one of them never be
/// updated.
void check_distinct_ids(std::span<const ParamEntry> params) {
  std::map<module::ParamId, const std::string*> seen;
  for (const auto& [path, p] : params) {
    if (!p->is_trainable()) continue;
    if (const auto [it, fresh] = seen.emplace(p->id(), &path); !fresh)
      throw Error(kOptimizerOp,
                  fmt::format("parameters '{}' and '{}' have the same id {}; nothing was updated (a module "
                              "copied, or one file loaded into two parts of the model: load with "
                              "LoadOptions{{}}.with_fresh_ids())",
                              *it->second, path, p->id().to_string()));
  }
}

/// A trainable parameter and its gradient, checked before an update.
void check_trainable(const std::string& path, const TensorRef& value, const TensorRef& grad) {
  if (!is_float(value->spec.dtype))
    throw Error(kOptimizerOp, fmt::format("parameter '{}' is of dtype {}; only float parameters can be trained", path,
                                          dtype_name(value->spec.dtype)));
  if (grad->spec.shape != value->spec.shape)
    throw Error(kOptimizerOp, fmt::format("the gradient of parameter '{}' has shape {} but the parameter has shape {}",
                                          path, grad->spec.shape.to_string(), value->spec.shape.to_string()));
}

/// A state tensor kept for a parameter, checked against it.
void check_state_shape(std::string_view slot, const std::string& path, const module::ParamBase& p, const TensorRef& t) {
  if (t->spec.shape != p.ref()->spec.shape)
    throw Error(
        kOptimizerOp,
        fmt::format("the '{}' state of parameter '{}' (id {}) has shape {} but the parameter has shape {}; "
                    "was the state saved for another model?",
                    slot, path, p.id().to_string(), t->spec.shape.to_string(), p.ref()->spec.shape.to_string()));
}

/// Clips the gradients of one step (per parameter, or by their global norm).
void clip(const std::optional<GradientClippingConfig>& clipping, std::vector<TensorRef>& grads) {
  if (!clipping) return;
  if (clipping->is_per_parameter()) {
    for (auto& g : grads) g = clipping->clip(g);
  } else {
    detail::clip_global_norm(grads, clipping->threshold());
  }
}

/// Checks a traced step's state list (`who` is the call given it): one
/// tensor per parameter and slot, each of its parameter's shape.
void check_traced_state(std::string_view who, std::span<const ParamEntry> params,
                        const std::vector<std::string_view>& slots, std::span<const TensorRef> state) {
  if (state.size() != params.size() * slots.size())
    throw Error(kOptimizerOp,
                fmt::format("{} was given {} state tensors; {} trainable parameters with {} each ({}) take {} (make "
                            "them with traced_state)",
                            who, state.size(), params.size(), slots.size(), fmt::join(slots, ", "),
                            params.size() * slots.size()));
  for (std::size_t i = 0; i < params.size(); ++i)
    for (std::size_t k = 0; k < slots.size(); ++k) {
      const Shape& shape = state[i * slots.size() + k]->spec.shape;
      if (shape != params[i].second->ref()->spec.shape)
        throw Error(kOptimizerOp, fmt::format("{}: the '{}' state given for parameter '{}' has shape {}, the "
                                              "parameter {}",
                                              who, slots[k], params[i].first, shape.to_string(),
                                              params[i].second->ref()->spec.shape.to_string()));
    }
}

module::ParamId parse_id(std::string_view text, std::string_view key) {
  try {
    return module::ParamId::parse(text);
  } catch (const Error&) {
    throw Error(kOptimizerOp, fmt::format("record key '{}' does not start with a parameter id (16 hex digits)", key));
  }
}

}  // namespace

Optimizer::Optimizer(std::unique_ptr<detail::UpdateRule> rule, std::optional<GradientClippingConfig> clipping)
    : rule_(std::move(rule)), clipping_(clipping) {}
Optimizer::Optimizer(Optimizer&&) noexcept = default;
Optimizer& Optimizer::operator=(Optimizer&&) noexcept = default;
Optimizer::~Optimizer() = default;

std::string_view Optimizer::name() const { return rule_->name(); }

std::uint64_t Optimizer::param_step(const module::ParamId& id) const {
  auto it = states_.find(id);
  return it == states_.end() ? 0 : it->second.step;
}

std::optional<TensorRef> Optimizer::state_tensor(const module::ParamId& id, std::string_view slot) const {
  auto it = states_.find(id);
  if (it == states_.end()) return std::nullopt;
  auto s = it->second.slots.find(std::string(slot));
  if (s == it->second.slots.end()) return std::nullopt;
  return s->second;
}

void Optimizer::step_params(double lr, const std::vector<std::pair<std::string, module::ParamBase*>>& params,
                            GradientsParams grads) {
  // Checked before anything is read or changed (the module and the state).
  check_lr(lr);
  // The update is not part of any graph.
  NoGradGuard no_grad;

  check_distinct_ids(params);
  std::vector<Work> work;
  for (const auto& [path, p] : params) {
    if (!p->is_trainable()) continue;
    auto g = grads.remove_ref(p->id());
    if (!g) continue;
    const TensorRef& value = p->ref();
    check_trainable(path, value, *g);
    const Device base = value->device.without_autodiff();
    work.push_back({&path, p, on(value, base, value->spec.dtype), on(*g, base, value->spec.dtype)});
  }
  if (clipping_) {
    std::vector<TensorRef> gs;
    gs.reserve(work.size());
    for (const auto& w : work) gs.push_back(w.grad);
    clip(clipping_, gs);
    for (std::size_t i = 0; i < work.size(); ++i) work[i].grad = gs[i];
  }

  // Compute every new value and state first, then commit, so an error leaves
  // both the module (updated in place by step's rvalue overload) and the
  // state untouched.
  std::vector<TensorRef> values;
  std::map<module::ParamId, detail::ParamState> states;
  for (const auto& w : work) {
    detail::ParamState st;
    if (auto it = states_.find(w.param->id()); it != states_.end()) st = it->second;
    for (auto& [slot, t] : st.slots) {
      check_state_shape(slot, *w.path, *w.param, t);
      // State follows its parameter (fork, to_device, load).
      t = on(t, w.value->device, w.value->spec.dtype);
    }
    ++st.step;
    std::vector<detail::StepScalar> scalars;
    for (const double v : rule_->step_scalars(lr, st.step)) scalars.push_back({v, nullptr});
    TensorRef updated = rule_->update(scalars, w.value, w.grad, st);
    // Made a fresh trainable leaf here (Param's own rule, which set_ref applies
    // again as a no-op), so the commit below allocates nothing.
    values.push_back(module::detail::prepare_param(burn::detail::with_context(updated, w.param->ref()->device),
                                                   w.param->is_trainable()));
    states.insert_or_assign(w.param->id(), std::move(st));
  }
  // The commit: handle swaps and map-node moves, none of which can fail.
  for (std::size_t i = 0; i < work.size(); ++i) work[i].param->set_ref(std::move(values[i]));
  while (!states.empty()) {
    auto node = states.extract(states.begin());
    if (auto it = states_.find(node.key()); it != states_.end()) it->second = std::move(node.mapped());
    else states_.insert(std::move(node));
  }
}

// ---- traced steps ----------------------------------------------------------------------

std::vector<TensorRef> Optimizer::traced_state_of(const ParamList& params) const {
  const auto slots = rule_->used_slots();
  std::vector<TensorRef> out;
  out.reserve(params.size() * slots.size());
  for (const auto& [path, p] : params) {
    const TensorRef& value = p->ref();
    const Device base = value->device.without_autodiff();
    const auto it = states_.find(p->id());
    for (const auto slot : slots) {
      const TensorRef* kept = nullptr;
      if (it != states_.end())
        if (auto s = it->second.slots.find(std::string(slot)); s != it->second.slots.end()) kept = &s->second;
      if (!kept) {
        out.push_back(burn::detail::full(value->spec.shape, 0.0, {base, value->spec.dtype}, TensorKind::Float));
        continue;
      }
      check_state_shape(slot, path, *p, *kept);
      out.push_back(on(*kept, base, value->spec.dtype));
    }
  }
  return out;
}

TensorRef Optimizer::traced_scalars_of(double lr, const ParamList& params, const Device& device) const {
  check_lr(lr);
  std::optional<std::uint64_t> steps;
  const std::string* first = nullptr;
  for (const auto& [path, p] : params) {
    const std::uint64_t n = param_step(p->id());
    if (steps && *steps != n)
      throw Error(kOptimizerOp,
                  fmt::format("parameters '{}' and '{}' have taken {} and {} steps; a traced step updates every "
                              "trainable parameter with one step count (take eager steps until they agree)",
                              *first, path, *steps, n));
    steps = n;
    first = &path;
  }
  const std::vector<double> values = rule_->step_scalars(lr, steps.value_or(0) + 1);
  std::vector<float> narrowed(values.begin(), values.end());
  return burn::detail::from_data(TensorData(narrowed, {narrowed.size()}), {device.without_autodiff(), DType::F32},
                                 TensorKind::Float);
}

std::vector<TensorRef> Optimizer::traced_update(const TensorRef& scalars, const ParamList& params,
                                                const GradientsParams& grads, std::span<const TensorRef> state) const {
  const auto slots = rule_->used_slots();
  const std::size_t n_scalars = rule_->step_scalars(0.0, 1).size();
  check_traced_state("traced_step", params, slots, state);
  if (scalars->spec.shape != Shape{n_scalars})
    throw Error(kOptimizerOp, fmt::format("the traced step's scalars have shape {}; the {} optimiser takes [{}] "
                                          "(make them with traced_scalars)",
                                          scalars->spec.shape.to_string(), rule_->name(), n_scalars));
  check_distinct_ids(params);
  NoGradGuard no_grad;
  std::vector<detail::StepScalar> step;
  for (std::size_t k = 0; k < n_scalars; ++k) {
    const Range element(static_cast<std::int64_t>(k), static_cast<std::int64_t>(k) + 1);
    step.push_back({0.0, burn::detail::slice(burn::detail::detach(scalars), std::span(&element, 1))});
  }
  // Work out every gradient first (clipping may mix them), then update.
  std::vector<TensorRef> gs;
  for (const auto& [path, p] : params) {
    const auto g = grads.get_ref(p->id());
    if (!g)
      throw Error(kOptimizerOp, fmt::format("parameter '{}' has no gradient; a traced step updates every trainable "
                                            "parameter (freeze the others with no_grad())",
                                            path));
    check_trainable(path, p->ref(), *g);
    gs.push_back(on(*g, p->ref()->device.without_autodiff(), p->ref()->spec.dtype));
  }
  clip(clipping_, gs);
  std::vector<TensorRef> next;
  next.reserve(state.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    module::ParamBase& p = *params[i].second;
    const Device base = p.ref()->device.without_autodiff();
    detail::ParamState st;
    for (std::size_t k = 0; k < slots.size(); ++k)
      st.slots[std::string(slots[k])] = on(state[i * slots.size() + k], base, p.ref()->spec.dtype);
    const TensorRef updated = rule_->update(step, on(p.ref(), base, p.ref()->spec.dtype), gs[i], st);
    for (const auto slot : slots) next.push_back(st.slots.at(std::string(slot)));
    p.set_ref(burn::detail::with_context(updated, p.ref()->device));
  }
  return next;
}

void Optimizer::commit_traced_of(const ParamList& params, std::span<const TensorRef> state) {
  const auto slots = rule_->used_slots();
  check_traced_state("commit_traced", params, slots, state);
  for (std::size_t i = 0; i < params.size(); ++i) {
    detail::ParamState& st = states_[params[i].second->id()];
    for (std::size_t k = 0; k < slots.size(); ++k) st.slots[std::string(slots[k])] = state[i * slots.size() + k];
    ++st.step;
  }
}

std::map<std::string, TensorData> Optimizer::state_tensors() const {
  std::map<std::string, TensorData> out;
  for (const auto& [id, st] : states_)
    for (const auto& [slot, t] : st.slots) out.emplace(id.to_string() + "." + slot, burn::detail::to_data(t));
  return out;
}

std::map<std::string, std::string> Optimizer::state_metadata() const {
  std::map<std::string, std::string> out{{"format", kFormat}, {"optimizer", std::string(rule_->name())}};
  for (const auto& [id, st] : states_) out.emplace(id.to_string() + kStepSuffix, std::to_string(st.step));
  return out;
}

void Optimizer::load_state(const record::SafetensorsFile& file, const Device& device) {
  auto meta = [&](const std::string& key) {
    auto it = file.metadata.find(key);
    return it == file.metadata.end() ? std::string() : it->second;
  };
  if (meta("format") != kFormat)
    throw Error(kOptimizerOp,
                fmt::format("the record holds no optimiser state (metadata 'format' is '{}', expected '{}')",
                            meta("format"), kFormat));
  if (meta("optimizer") != rule_->name())
    throw Error(kOptimizerOp, fmt::format("the record holds the state of a '{}' optimiser; this optimiser is '{}'",
                                          meta("optimizer"), rule_->name()));

  std::map<module::ParamId, detail::ParamState> loaded;
  for (const auto& [key, value] : file.metadata) {
    if (key == "format" || key == "optimizer") continue;
    const std::string_view k = key;
    if (k.size() <= std::string_view(kStepSuffix).size() || !k.ends_with(kStepSuffix))
      throw Error(kOptimizerOp, fmt::format("unexpected metadata key '{}' in an optimiser record", key));
    const auto id = parse_id(k.substr(0, k.size() - std::string_view(kStepSuffix).size()), key);
    std::uint64_t step = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), step);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty())
      throw Error(kOptimizerOp, fmt::format("metadata '{}' = '{}' is not a step count", key, value));
    // A saved state has taken at least one step. Past 2^53 the count is not
    // exact as the double that bias corrections use, and at 2^64 - 1 the next
    // step would wrap it to 0 and divide by zero.
    if (step < 1 || step > kMaxStep)
      throw Error(
          kOptimizerOp,
          fmt::format("metadata '{}' = {} is out of range: a saved state has taken from 1 to 2^53 steps", key, step));
    loaded[id].step = step;
  }
  const auto slot_names = rule_->slot_names();
  for (const auto& [key, data] : file.tensors) {
    const auto dot = key.find('.');
    if (dot == std::string::npos)
      throw Error(kOptimizerOp, fmt::format("tensor key '{}' is not '<param id>.<slot>'", key));
    const auto id = parse_id(std::string_view(key).substr(0, dot), key);
    const std::string slot = key.substr(dot + 1);
    if (std::find(slot_names.begin(), slot_names.end(), slot) == slot_names.end())
      throw Error(kOptimizerOp,
                  fmt::format("tensor '{}': '{}' is not a state of the '{}' optimiser", key, slot, rule_->name()));
    auto it = loaded.find(id);
    if (it == loaded.end())
      throw Error(kOptimizerOp, fmt::format("tensor '{}' has no '{}{}' step count in the metadata", key, id.to_string(),
                                            kStepSuffix));
    if (!is_float(data.dtype()))
      throw Error(kOptimizerOp,
                  fmt::format("tensor '{}' is of dtype {}; optimiser state is float", key, dtype_name(data.dtype())));
    it->second.slots[slot] = burn::detail::from_data(data, {device, data.dtype()}, TensorKind::Float);
  }
  states_ = std::move(loaded);
}

void Optimizer::save(const std::filesystem::path& path) const {
  record::save_safetensors(path, state_tensors(), state_metadata());
}

void Optimizer::load(const std::filesystem::path& path, const Device& device) {
  load_state(record::load_safetensors(path), device);
}

}  // namespace burn::optim
