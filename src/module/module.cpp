// The non-template parts of the module system: ids, field-name parsing and
// the per-tensor transformations behind to_device / fork / valid.
#include <burn/module/module.hpp>

#include <atomic>
#include <charconv>
#include <random>

#include <fmt/format.h>

namespace burn::module {

namespace {
// splitmix64's finaliser: a bijection on 64-bit values, so distinct counters
// give distinct ids while the salt makes them differ between processes.
std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t next_param_id() {
  static const std::uint64_t salt = [] {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  static std::atomic<std::uint64_t> counter{0};
  return mix64(salt + 0x9E3779B97F4A7C15ULL * counter.fetch_add(1, std::memory_order_relaxed));
}
}  // namespace

ParamId::ParamId() : value_(next_param_id()) {}

std::string ParamId::to_string() const { return fmt::format("{:016x}", value_); }

ParamId ParamId::parse(std::string_view text) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
  if (text.size() != 16 || ec != std::errc() || end != text.data() + text.size())
    throw Error("ParamId", fmt::format("'{}' is not a parameter id (16 hex digits)", text));
  return ParamId(v);
}

namespace detail {

bool is_tracked(const burn::detail::TensorRef& t) noexcept { return t->node != nullptr; }

burn::detail::TensorRef prepare_param(burn::detail::TensorRef t, bool trainable) {
  if (!t->device.is_autodiff() || !is_float(t->spec.dtype)) return t;
  if (trainable) return is_tracked(t) ? t : burn::detail::require_grad(t, true);
  return is_tracked(t) ? burn::detail::detach(t) : t;
}

std::vector<std::string_view> split_field_names(std::string_view names) {
  std::vector<std::string_view> out;
  while (true) {
    auto comma = names.find(',');
    auto item = names.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\n' || item.front() == '\t'))
      item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\n' || item.back() == '\t')) item.remove_suffix(1);
    out.push_back(item);
    if (comma == std::string_view::npos) break;
    names.remove_prefix(comma + 1);
  }
  return out;
}

burn::detail::TensorRef param_to_device(const burn::detail::TensorRef& t, const Device& device) {
  return burn::detail::to_device(t, device);
}

burn::detail::TensorRef param_fork(const burn::detail::TensorRef& t, const Device& device) {
  auto moved = burn::detail::to_device(burn::detail::detach(t), device);
  // A fork onto an autodiff device trains there, whatever the source was.
  if (device.is_autodiff()) moved = burn::detail::with_context(moved, device);
  return moved;
}

burn::detail::TensorRef param_valid(const burn::detail::TensorRef& t) {
  return burn::detail::with_context(t, t->device.without_autodiff());
}

const burn::detail::TensorRef& checked_replacement(const std::string& path, const burn::detail::TensorRef& current,
                                                   const burn::detail::TensorRef& replacement) {
  const auto describe = [](const ir::TensorSpec& s) {
    return fmt::format("{} {}", dtype_name(s.dtype), s.shape.to_string());
  };
  if (!replacement) throw Error("module::with_tensors", fmt::format("the tensor for '{}' is an empty handle", path));
  const ir::TensorSpec &have = current->spec, &given = replacement->spec;
  if (given.shape.rank() != have.shape.rank() || kind_of_dtype(given.dtype) != kind_of_dtype(have.dtype))
    throw Error("module::with_tensors", fmt::format("'{}' is {}, and cannot take {}; pass tensors in the order and "
                                                    "of the ranks and kinds module::tensors_of lists",
                                                    path, describe(have), describe(given)));
  return replacement;
}

void throw_tensor_count(std::size_t wanted, std::size_t given) {
  throw Error("module::with_tensors",
              fmt::format("the module has {} tensors (module::tensors_of), {} were given", wanted, given));
}

}  // namespace detail

bool TrainingMode::is_training(const burn::detail::TensorRef& input) const noexcept {
  switch (mode) {
    case Mode::Train: return true;
    case Mode::Eval: return false;
    case Mode::Auto: break;
  }
  return input->device.is_autodiff() && is_grad_enabled();
}

}  // namespace burn::module
