// save_module's core: module tensors -> a safetensors file, written atomically.
#include <fmt/format.h>

#include "module_record_detail.hpp"
#include "pytorch_names.hpp"
#include "safetensors_internal.hpp"

namespace burn::record::detail {

void save_slots(std::span<const ConstSlot> slots, const std::filesystem::path& path,
                const std::map<std::string, std::string>& user_metadata, const SaveOptions& options) {
  const std::string where = path.string() + ": ";
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : user_metadata) {
    if (key == kFormatKey || key.starts_with(kReservedPrefix))
      throw Error(kSaveOp,
                  fmt::format("{}metadata key '{}' is reserved for the record format (\"format\" and \"burn.*\" "
                              "keys are written by save_module); choose another name",
                              where, key));
    metadata.emplace(key, value);
  }
  // PyTorch tooling (e.g. transformers) expects "pt"; our own layout says so.
  // (User keys were checked above, so these are new entries.)
  metadata.emplace(kFormatKey, options.adapter == Adapter::PyTorch ? kTorchFormat : kBurnFormat);
  metadata.emplace(kLayoutKey, layout_name(options.adapter));
  metadata.emplace(kVersionKey, kRecordVersion);

  std::map<std::string, TensorData> tensors;
  for (const auto& slot : slots) {
    const module::ParamBase& t = *slot.tensor;
    // Reading values never records autodiff nodes: to_data copies to the host.
    TensorData data = burn::detail::to_data(t.ref());
    if (stored_transposed(t, options.adapter)) {
      if (data.shape().rank() != 2)
        throw Error(kSaveOp, fmt::format("{}'{}' is flagged PyTorch-transposed but has shape {}; only 2-D parameters "
                                         "can be",
                                         where, slot.path, data.shape().to_string()));
      data = transpose_2d(data);
    }
    if (!tensors.emplace(slot.path, std::move(data)).second)
      throw Error(kSaveOp,
                  fmt::format("{}two module tensors share the path '{}'; rename one of the fields", where, slot.path));
    metadata.emplace(std::string(kIdPrefix) + slot.path, t.id().to_string());
  }
  // PyTorch's modules name some parts otherwise and fuse attention's
  // projections (pytorch_names.hpp); ids stay keyed by module path.
  if (options.adapter == Adapter::PyTorch) tensors = to_pytorch_names(std::move(tensors), where);
  // Serialise fully before touching the filesystem, so bad input leaves any
  // existing checkpoint alone; the write itself is atomic.
  const auto bytes = burn::record::detail::build_safetensors(tensors, metadata, kSaveOp, where);
  burn::record::detail::write_file_atomically(path, bytes, kSaveOp);
}

}  // namespace burn::record::detail
