#include "onnx/external_data.hpp"

#include <charconv>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>

#include <burn/error.hpp>
#include <fmt/format.h>

#include "onnx/proto.hpp"

namespace burn::onnx {

using ::onnx::TensorProto;

namespace {

/// Calls `fn` on every tensor a graph holds: its initializers and the tensor
/// attributes of its nodes, subgraphs included.
void for_each_graph_tensor(::onnx::GraphProto& graph, const std::function<void(TensorProto&)>& fn) {
  for (auto& t : *graph.mutable_initializer()) fn(t);
  for (auto& node : *graph.mutable_node()) {
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_t()) fn(*a.mutable_t());
      for (auto& t : *a.mutable_tensors()) fn(t);
      if (a.has_g()) for_each_graph_tensor(*a.mutable_g(), fn);
      for (auto& g : *a.mutable_graphs()) for_each_graph_tensor(g, fn);
    }
  }
}

/// An external tensor's entries: where its bytes are.
struct ExternalRange {
  std::string location;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> length;
};

ExternalRange external_range(const TensorProto& t, std::string_view op, const std::string& source) {
  ExternalRange range;
  auto number = [&](const std::string& key, const std::string& value) {
    std::uint64_t v = 0;
    const auto* end = value.data() + value.size();
    const auto [ptr, ec] = std::from_chars(value.data(), end, v);
    if (ec != std::errc() || ptr != end || value.empty())
      throw Error(op, fmt::format("{}: tensor '{}' has external data {} '{}', which is not a byte count", source,
                                  t.name(), key, value));
    return v;
  };
  for (const auto& entry : t.external_data()) {
    if (entry.key() == "location") {
      range.location = entry.value();
    } else if (entry.key() == "offset") {
      range.offset = number(entry.key(), entry.value());
    } else if (entry.key() == "length") {
      range.length = number(entry.key(), entry.value());
    }
    // "checksum" (an optional SHA-1) and unknown keys are not needed to read the bytes.
  }
  if (range.location.empty())
    throw Error(op, fmt::format("{}: tensor '{}' is marked as external data but names no location", source, t.name()));
  return range;
}

/// The bytes a tensor of `t`'s element type and dims takes, or nullopt
/// where burn has no dtype for it (read_tensor reports that).
std::optional<std::uint64_t> payload_bytes(const TensorProto& t) {
  const auto dtype = storage_dtype(t.data_type());
  if (!dtype) return std::nullopt;
  const bool four_bit = is_four_bit(t.data_type());  // two values a byte
  std::uint64_t n = four_bit ? 1 : dtype_size(*dtype);
  for (const std::int64_t d : t.dims()) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / 2 / static_cast<std::uint64_t>(d))
      return std::nullopt;
    n *= static_cast<std::uint64_t>(d);
  }
  return four_bit ? (n + 1) / 2 : n;
}

/// The external files of one model, each opened once.
class ExternalFiles {
 public:
  ExternalFiles(std::filesystem::path dir, std::string_view op, const std::string& source)
      : dir_(std::move(dir)), op_(op), source_(source) {}

  /// Fills `t`'s raw_data from its file and marks its data as held inside.
  void load(TensorProto& t) {
    const ExternalRange range = external_range(t, op_, source_);
    const std::filesystem::path relative(range.location);
    bool escapes = relative.is_absolute() || relative.has_root_name() || relative.has_root_directory();
    for (const auto& part : relative) escapes = escapes || part == "..";
    if (escapes)
      throw Error(op_, fmt::format("{}: tensor '{}' names the external file '{}', which is not a path inside the "
                                   "model's directory: ONNX locations are relative and stay beside the model",
                                   source_, t.name(), range.location));
    auto& file = open(range.location, t.name());
    const auto expected = payload_bytes(t);
    const std::uint64_t length =
        range.length.value_or(expected.value_or(file.size - std::min(range.offset, file.size)));
    if (expected && *expected != length)
      throw Error(op_, fmt::format("{}: tensor '{}' needs {} bytes but its external data in '{}' has length {}",
                                   source_, t.name(), *expected, range.location, length));
    if (range.offset > file.size || length > file.size - range.offset)
      throw Error(op_, fmt::format("{}: tensor '{}' needs bytes {} to {} of '{}', which has {} bytes: the file is "
                                   "truncated or belongs to another model",
                                   source_, t.name(), range.offset, range.offset + length, range.location, file.size));
    std::string bytes(static_cast<std::size_t>(length), '\0');
    file.stream.seekg(static_cast<std::streamoff>(range.offset));
    if (length > 0) file.stream.read(bytes.data(), static_cast<std::streamsize>(length));
    if (!file.stream)
      throw Error(op_, fmt::format("{}: reading tensor '{}' from '{}' failed", source_, t.name(), range.location));
    t.set_raw_data(std::move(bytes));
    t.clear_external_data();
    t.set_data_location(TensorProto::DEFAULT);
  }

 private:
  struct File {
    std::ifstream stream;
    std::uint64_t size = 0;
  };

  File& open(const std::string& location, const std::string& tensor) {
    auto it = files_.find(location);
    if (it != files_.end()) return it->second;
    const std::filesystem::path path = dir_ / location;
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    File file;
    if (!ec) file.stream.open(path, std::ios::binary);
    if (ec || !file.stream)
      throw Error(op_, fmt::format("{}: tensor '{}' keeps its data in '{}', which cannot be read ({}): keep the "
                                   "data file beside the model, under the name it was saved with",
                                   source_, tensor, path.string(), ec ? ec.message() : "cannot open it"));
    file.size = size;
    return files_.emplace(location, std::move(file)).first->second;
  }

  std::filesystem::path dir_;
  std::string_view op_;
  const std::string& source_;
  std::map<std::string, File> files_;
};

}  // namespace

void load_external_data(::onnx::ModelProto& model, const std::optional<std::filesystem::path>& dir, std::string_view op,
                        const std::string& source) {
  std::optional<ExternalFiles> files;
  for_each_graph_tensor(*model.mutable_graph(), [&](TensorProto& t) {
    if (t.data_location() != TensorProto::EXTERNAL) return;
    if (!dir)
      throw Error(op, fmt::format("{} keeps tensor '{}' in an external data file, which a model given as bytes "
                                  "cannot reach: load it with onnx::Model::load(path), which reads the files beside "
                                  "the model",
                                  source, t.name()));
    if (!files) files.emplace(*dir, op, source);
    files->load(t);
  });
}

std::vector<std::byte> move_to_external_data(::onnx::ModelProto& model, const std::string& location,
                                             std::size_t threshold) {
  // Page-aligned offsets let a runtime map a tensor straight from the file.
  constexpr std::size_t kAlignment = 4096;
  std::vector<std::byte> data;
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    if (!t.has_raw_data() || t.raw_data().size() < threshold) continue;
    const std::size_t offset = (data.size() + kAlignment - 1) / kAlignment * kAlignment;
    const std::string& raw = t.raw_data();
    data.resize(offset + raw.size());
    std::memcpy(data.data() + offset, raw.data(), raw.size());
    auto entry = [&](const char* key, std::size_t value) {
      auto* e = t.add_external_data();
      e->set_key(key);
      e->set_value(std::to_string(value));
    };
    auto* where = t.add_external_data();
    where->set_key("location");
    where->set_value(location);
    entry("offset", offset);
    entry("length", raw.size());
    std::string().swap(*t.mutable_raw_data());  // the model keeps no second copy
    t.clear_raw_data();
    t.set_data_location(TensorProto::EXTERNAL);
  }
  return data;
}

}  // namespace burn::onnx
