// load_module's core: a safetensors file -> the module's tensors. Everything
// is checked before anything is replaced, and all problems of one kind are
// reported together so a user fixes them in one go.
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "module_record_internal.hpp"
#include "safetensors_internal.hpp"

namespace burn::record::internal {

namespace {

constexpr std::string_view kOp = "load_module";
constexpr std::size_t kMaxListed = 20;

// The first kMaxListed items, so a wholly wrong model gives a readable message.
std::string listed(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kMaxListed; ++i) out += (i ? std::string(separator) : "") + items[i];
  if (items.size() > kMaxListed) out += fmt::format("{}... and {} more", separator, items.size() - kMaxListed);
  return out;
}

std::string_view kind_name(DType d) noexcept { return is_float(d) ? "float" : is_int(d) ? "int" : "bool"; }
TensorKind kind_of_dtype(DType d) noexcept {
  return is_float(d) ? TensorKind::Float : is_int(d) ? TensorKind::Int : TensorKind::Bool;
}

bool is_num_batches_tracked(std::string_view key) {
  constexpr std::string_view name = "num_batches_tracked";
  return key == name || (key.size() > name.size() && key.ends_with(name) && key[key.size() - name.size() - 1] == '.');
}

std::string adapter_hint(Adapter a) {
  return a == Adapter::PyTorch ? "LoadOptions{}.with_adapter(Adapter::PyTorch)" : "LoadOptions{} (Adapter::Burn)";
}

// A file saved with one adapter loaded with the other would transpose square
// weights silently, so the layout the file declares must match.
void check_layout(const std::map<std::string, std::string>& metadata, Adapter adapter, const std::string& where) {
  if (auto v = metadata.find(std::string(kVersionKey)); v != metadata.end() && v->second != kRecordVersion)
    throw Error(kOp, fmt::format("{}the file has record version '{}', this build reads version {}; save it again "
                                 "with this build",
                                 where, v->second, kRecordVersion));
  if (auto l = metadata.find(std::string(kLayoutKey)); l != metadata.end()) {
    std::optional<Adapter> declared;
    if (l->second == layout_name(Adapter::Burn)) declared = Adapter::Burn;
    if (l->second == layout_name(Adapter::PyTorch)) declared = Adapter::PyTorch;
    if (!declared)
      throw Error(kOp, fmt::format("{}corrupt metadata: \"{}\" is '{}', expected \"burn\" or \"pytorch\"", where,
                                   kLayoutKey, l->second));
    if (*declared != adapter)
      throw Error(kOp, fmt::format("{}the file was saved in the {} layout (\"{}\": \"{}\"); load it with {}", where,
                                   l->second, kLayoutKey, l->second, adapter_hint(*declared)));
    return;
  }
  if (auto f = metadata.find(std::string(kFormatKey));
      f != metadata.end() && f->second == kTorchFormat && adapter == Adapter::Burn)
    throw Error(kOp, fmt::format("{}the file is a PyTorch checkpoint (metadata \"format\": \"pt\"); load it with {}",
                                 where, adapter_hint(Adapter::PyTorch)));
}

// Module key -> file key, after LoadOptions::key_remap.
std::map<std::string, std::string> module_keys(const SafetensorsFile& file, const LoadOptions& options,
                                               const std::string& where) {
  std::vector<std::pair<std::regex, std::string>> rules;
  for (const auto& [pattern, replacement] : options.key_remap) {
    try {
      rules.emplace_back(std::regex(pattern), replacement);
    } catch (const std::regex_error& e) {
      throw Error(kOp, fmt::format("key_remap pattern '{}' is not a valid regular expression: {}", pattern, e.what()));
    }
  }
  std::map<std::string, std::string> keys;
  for (const auto& [key, _] : file.tensors) {
    std::string name = key;
    for (const auto& [re, replacement] : rules) name = std::regex_replace(name, re, replacement);
    const auto [it, inserted] = keys.emplace(name, key);
    if (!inserted)
      throw Error(kOp, fmt::format("{}file keys '{}' and '{}' both become '{}' after key_remap; make the rules "
                                   "keep keys distinct",
                                   where, it->second, key, name));
  }
  return keys;
}

std::optional<module::ParamId> stored_id(const SafetensorsFile& file, const std::string& file_key,
                                         const std::string& where) {
  const auto it = file.metadata.find(std::string(kIdPrefix) + file_key);
  if (it == file.metadata.end()) return std::nullopt;
  try {
    return module::ParamId::parse(it->second);
  } catch (const Error&) {
    throw Error(kOp, fmt::format("{}corrupt metadata: \"{}{}\" is '{}', not a parameter id (16 hex digits)", where,
                                 kIdPrefix, file_key, it->second));
  }
}

struct Update {
  module::ParamBase* tensor;
  burn::detail::TensorRef value;
  std::optional<module::ParamId> id;
};

}  // namespace

void load_slots(std::span<const Slot> slots, const std::filesystem::path& path, const LoadOptions& options) {
  const std::string where = path.string() + ": ";
  const SafetensorsFile file = [&] {
    const auto bytes = burn::record::detail::read_whole_file(path, kOp);
    return burn::record::detail::parse_safetensors(bytes, kOp, where);
  }();
  check_layout(file.metadata, options.adapter, where);
  const auto keys = module_keys(file, options, where);

  std::set<std::string> wanted;
  std::vector<std::string> missing;
  for (const auto& slot : slots) {
    if (!wanted.insert(slot.path).second)
      throw Error(kOp, fmt::format("{}two module tensors share the path '{}'; rename one of the fields", where,
                                   slot.path));
    if (!keys.contains(slot.path)) missing.push_back(slot.path);
  }
  std::vector<std::string> unexpected;
  for (const auto& [name, file_key] : keys) {
    if (wanted.contains(name)) continue;
    // torch's BatchNorm counter has no counterpart here (PyTorch adapter only).
    if (options.adapter == Adapter::PyTorch && is_num_batches_tracked(file_key)) continue;
    unexpected.push_back(name);
  }
  if (!missing.empty()) {
    std::string msg = fmt::format("{}missing keys (in the module, not in the file): {}", where, listed(missing));
    if (!unexpected.empty())
      msg += fmt::format("; the file has these keys the module lacks: {} (rename them with "
                         "LoadOptions::with_key_remap)",
                         listed(unexpected));
    throw Error(kOp, msg);
  }
  if (options.strict && !unexpected.empty())
    throw Error(kOp, fmt::format("{}unexpected keys (in the file, not in the module): {}; load with "
                                 "LoadOptions{{}}.with_strict(false) to ignore them",
                                 where, listed(unexpected)));

  std::vector<std::string> problems;
  std::vector<Update> updates;
  for (const auto& slot : slots) {
    const std::string& file_key = keys.at(slot.path);
    const TensorData& stored = file.tensors.at(file_key);
    const burn::detail::TensorImpl& current = *slot.tensor->ref();
    const DType dtype = current.spec.dtype;
    const bool transposed = stored_transposed(*slot.tensor, options.adapter);
    if (transposed && current.spec.shape.rank() != 2) {
      problems.push_back(fmt::format("'{}' is flagged PyTorch-transposed but has shape {} (only 2-D parameters can "
                                     "be)",
                                     slot.path, current.spec.shape.to_string()));
      continue;
    }
    const Shape expected = transposed ? transposed_shape(current.spec.shape) : current.spec.shape;
    if (stored.shape() != expected) {
      problems.push_back(fmt::format("shape mismatch for '{}': expected {}{}, found {}", slot.path, expected.to_string(),
                                     transposed ? " (PyTorch layout)" : "", stored.shape().to_string()));
      continue;
    }
    if (kind_of_dtype(stored.dtype()) != kind_of_dtype(dtype)) {
      problems.push_back(fmt::format("'{}' holds {} values ({}) but the module tensor is {} ({})", slot.path,
                                     kind_name(stored.dtype()), dtype_name(stored.dtype()), kind_name(dtype),
                                     dtype_name(dtype)));
      continue;
    }
    TensorData data = stored.dtype() == dtype ? stored : stored.convert(dtype);
    if (transposed) data = transpose_2d(data);
    // On the tensor's own device, autodiff context included; set_ref below
    // makes trainable float parameters leaves again.
    auto value = burn::detail::from_data(std::move(data), TensorCreationOptions(current.device, dtype),
                                         kind_of_dtype(dtype));
    updates.push_back({slot.tensor, std::move(value), stored_id(file, file_key, where)});
  }
  if (!problems.empty()) throw Error(kOp, where + listed(problems, "; "));

  for (auto& u : updates) {
    u.tensor->set_ref(std::move(u.value));
    if (u.id) u.tensor->set_id(*u.id);
  }
}

}  // namespace burn::record::internal
