// load_module's core: a safetensors file -> the module's tensors. Everything
// is checked before anything is replaced, and all problems of one kind are
// reported together so a user fixes them in one go.
#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "module_record_detail.hpp"
#include "module_record_metadata.hpp"
#include "pytorch_names.hpp"
#include "record_file.hpp"
#include "safetensors_internal.hpp"

namespace burn::record::detail {

namespace {

constexpr std::size_t kMaxListed = 20;

// The first kMaxListed items, so a wholly wrong model gives a readable message.
std::string listed(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kMaxListed; ++i) out += (i ? std::string(separator) : "") + items[i];
  if (items.size() > kMaxListed) out += fmt::format("{}... and {} more", separator, items.size() - kMaxListed);
  return out;
}

std::string_view kind_name(DType d) noexcept { return is_float(d) ? "float" : is_int(d) ? "int" : "bool"; }

bool is_num_batches_tracked(std::string_view key) {
  constexpr std::string_view name = "num_batches_tracked";
  return key == name || (key.size() > name.size() && key.ends_with(name) && key[key.size() - name.size() - 1] == '.');
}

struct Update {
  module::ParamBase* tensor;
  burn::detail::TensorRef value;
  std::optional<module::ParamId> id;
};

/// The layout to read a file in when the caller named none: the one the
/// file declares, else the one its contents show. Burn's layout stores a
/// Linear weight [d_input, d_output], PyTorch's [d_output, d_input]; a
/// non-square weight matches one of them only, BatchNorm's
/// "num_batches_tracked" counters exist in PyTorch's files only. A square
/// weight matches both, so a file of square weights alone is refused.
Adapter detect_adapter(std::span<const Slot> slots, const SafetensorsFile& file,
                       const std::map<std::string, NamedTensor>& tensors, const std::string& where) {
  if (file.metadata.contains(std::string(kLayoutKey))) {
    const std::string& layout = file.metadata.at(std::string(kLayoutKey));
    return layout == layout_name(Adapter::PyTorch) ? Adapter::PyTorch : Adapter::Burn;  // checked by check_layout
  }
  if (auto f = file.metadata.find(std::string(kFormatKey)); f != file.metadata.end() && f->second == kTorchFormat)
    return Adapter::PyTorch;
  std::vector<std::string> burn_shaped, torch_shaped, square;
  for (const auto& slot : slots) {
    if (!slot.tensor->is_pytorch_transposed()) continue;
    const auto entry = tensors.find(slot.path);
    if (entry == tensors.end()) continue;  // reported as missing
    const Shape& mine = slot.tensor->ref()->spec.shape;
    const Shape& stored = entry->second.data.shape();
    if (mine.rank() != 2 || stored.rank() != 2) continue;
    const bool as_burn = stored == mine, as_torch = stored == transposed_shape(mine);
    if (as_burn && as_torch) square.push_back(slot.path);
    else if (as_burn) burn_shaped.push_back(slot.path);
    else if (as_torch) torch_shaped.push_back(slot.path);
  }
  // BatchNorm's counters and fused attention projections: PyTorch's names.
  bool counters = false;
  for (const auto& [key, _] : tensors) counters = counters || is_num_batches_tracked(key) || is_pytorch_only_name(key);
  if ((!torch_shaped.empty() || counters) && burn_shaped.empty()) return Adapter::PyTorch;
  if (!burn_shaped.empty() && torch_shaped.empty()) return Adapter::Burn;
  if (!burn_shaped.empty() && !torch_shaped.empty())
    throw Error(kLoadOp, fmt::format("{}the file declares no layout, and its weights disagree on one: {} in Burn's "
                                     "([d_input, d_output]), {} in PyTorch's; check that the file belongs to this "
                                     "module",
                                     where, listed(burn_shaped), listed(torch_shaped)));
  if (!square.empty())
    throw Error(kLoadOp, fmt::format("{}the file declares no layout (no \"{}\" or \"{}\" metadata) and its "
                                     "transposable weights are all square ({}), which load in either layout, one of "
                                     "them transposed; load a file saved by PyTorch with "
                                     "LoadOptions{{}}.with_adapter(Adapter::PyTorch), one saved by burn-cpp with "
                                     "Adapter::Burn",
                                     where, kLayoutKey, kFormatKey, listed(square)));
  return Adapter::Burn;  // nothing to transpose either way
}

}  // namespace

LoadReport load_slots(std::span<const Slot> slots, const std::filesystem::path& path, const LoadOptions& options) {
  const std::string where = path.string() + ": ";
  SafetensorsFile file = read_record_file(path, kLoadOp);
  std::vector<std::string> file_keys;
  file_keys.reserve(file.tensors.size());
  for (const auto& [key, _] : file.tensors) file_keys.push_back(key);
  // The file's tensors under their names after key_remap.
  std::map<std::string, NamedTensor> tensors;
  for (auto& [name, file_key] : remap_keys(file_keys, options.key_remap, where))
    tensors.emplace(name, NamedTensor{file_key, file_key, std::move(file.tensors.at(file_key))});
  file.tensors.clear();

  std::set<std::string> wanted;
  for (const auto& slot : slots)
    if (!wanted.insert(slot.path).second)
      throw Error(kLoadOp,
                  fmt::format("{}two module tensors share the path '{}'; rename one of the fields", where, slot.path));
  const Adapter adapter = options.adapter ? *options.adapter : detect_adapter(slots, file, tensors, where);
  check_layout(file.metadata, adapter, where);
  if (adapter == Adapter::PyTorch) from_pytorch_names(tensors, wanted, where);

  std::vector<std::string> missing;
  for (const auto& slot : slots)
    if (!tensors.contains(slot.path)) missing.push_back(slot.path);
  std::vector<std::string> unexpected;
  for (const auto& [name, tensor] : tensors) {
    if (wanted.contains(name)) continue;
    // torch's BatchNorm counter has no counterpart here (PyTorch adapter only).
    if (adapter == Adapter::PyTorch && is_num_batches_tracked(tensor.file_key)) continue;
    unexpected.push_back(name);
  }
  if (!missing.empty() && !options.partial) {
    std::string msg = fmt::format("{}missing keys (in the module, not in the file): {}", where, listed(missing));
    if (!unexpected.empty())
      msg += fmt::format(
          "; the file has these keys the module lacks: {} (rename them with "
          "LoadOptions::with_key_remap)",
          listed(unexpected));
    throw Error(kLoadOp, msg + "; LoadOptions{}.with_partial() keeps missing tensors as they are");
  }
  if (options.strict && !unexpected.empty())
    throw Error(kLoadOp, fmt::format("{}unexpected keys (in the file, not in the module): {}; load with "
                                     "LoadOptions{{}}.with_strict(false) to ignore them",
                                     where, listed(unexpected)));

  std::vector<std::string> problems;
  std::vector<Update> updates;
  for (const auto& slot : slots) {
    const auto found = tensors.find(slot.path);
    if (found == tensors.end()) continue;  // missing, allowed by options.partial
    const NamedTensor& entry = found->second;
    const TensorData& stored = entry.data;
    const burn::detail::TensorImpl& current = *slot.tensor->ref();
    const DType dtype = current.spec.dtype;
    const bool transposed = stored_transposed(*slot.tensor, adapter);
    if (transposed && current.spec.shape.rank() != 2) {
      problems.push_back(
          fmt::format("'{}' is flagged PyTorch-transposed but has shape {} (only 2-D parameters can "
                      "be)",
                      slot.path, current.spec.shape.to_string()));
      continue;
    }
    const Shape expected = transposed ? transposed_shape(current.spec.shape) : current.spec.shape;
    if (stored.shape() != expected) {
      problems.push_back(fmt::format("shape mismatch for '{}': expected {}{}, found {}", slot.path,
                                     expected.to_string(), transposed ? " (PyTorch layout)" : "",
                                     stored.shape().to_string()));
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
    auto value =
        burn::detail::from_data(std::move(data), TensorCreationOptions(current.device, dtype), kind_of_dtype(dtype));
    std::optional<module::ParamId> id;
    if (options.fresh_ids) id = module::ParamId();
    else if (const auto stored = stored_id(file.metadata, entry.id_key, where)) id = module::ParamId(*stored);
    updates.push_back({slot.tensor, std::move(value), id});
  }
  if (!problems.empty()) throw Error(kLoadOp, where + listed(problems, "; "));

  for (auto& u : updates) {
    u.tensor->set_ref(std::move(u.value));
    if (u.id) u.tensor->set_id(*u.id);
  }
  std::sort(missing.begin(), missing.end());
  std::sort(unexpected.begin(), unexpected.end());
  return LoadReport{std::move(missing), std::move(unexpected)};
}

}  // namespace burn::record::detail
