// The public safetensors entry points: in-memory and file front ends.
#include <burn/record/safetensors.hpp>

#include "safetensors_internal.hpp"

namespace burn::record {

const TensorData& SafetensorsFile::tensor(std::string_view name) const {
  return detail::named_tensor(tensors, name, "SafetensorsFile::tensor");
}

TensorData SafetensorsFile::tensor(std::string_view name, DType dtype) const {
  const TensorData& t = tensor(name);
  return t.dtype() == dtype ? t : t.convert(dtype);
}

std::vector<std::byte> serialize_safetensors(const std::map<std::string, TensorData>& tensors,
                                             const std::map<std::string, std::string>& metadata) {
  return detail::build_safetensors(tensors, metadata, "serialize_safetensors", "");
}

SafetensorsFile deserialize_safetensors(std::span<const std::byte> bytes) {
  return detail::parse_safetensors(bytes, "deserialize_safetensors", "");
}

void save_safetensors(const std::filesystem::path& path, const std::map<std::string, TensorData>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  constexpr std::string_view op = "save_safetensors";
  // Serialise fully first so bad input never touches the filesystem.
  const auto bytes = detail::build_safetensors(tensors, metadata, op, path.string() + ": ");
  detail::write_file_atomically(path, bytes, op);
}

SafetensorsFile load_safetensors(const std::filesystem::path& path) {
  return detail::read_safetensors_file(path, "load_safetensors");
}

}  // namespace burn::record
