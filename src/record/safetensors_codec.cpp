// The safetensors byte layout: building and validating the header and the
// data buffer. File access lives in file_io.cpp.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "safetensors_internal.hpp"

namespace burn::record {

namespace {

using nlohmann::json;

constexpr std::array<std::pair<DType, std::string_view>, 13> kDTypeNames{{
    {DType::F64, "F64"}, {DType::F32, "F32"}, {DType::F16, "F16"}, {DType::BF16, "BF16"}, {DType::I64, "I64"},
    {DType::I32, "I32"}, {DType::I16, "I16"}, {DType::I8, "I8"}, {DType::U64, "U64"}, {DType::U32, "U32"},
    {DType::U16, "U16"}, {DType::U8, "U8"}, {DType::Bool, "BOOL"},
}};

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& [d, n] : kDTypeNames)
    if (n == name) return d;
  return std::nullopt;
}

// The file stores elements little-endian; TensorData holds them in host order.
void swap_to_or_from_little_endian(std::span<std::byte> bytes, std::size_t element_size) {
  if constexpr (std::endian::native == std::endian::big) {
    if (element_size > 1)
      for (std::size_t i = 0; i + element_size <= bytes.size(); i += element_size)
        std::reverse(bytes.begin() + i, bytes.begin() + i + element_size);
  } else {
    (void)bytes;
    (void)element_size;
  }
}

std::string shape_text(const std::vector<std::uint64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// One tensor entry of a parsed header.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<std::uint64_t> dims;
  std::uint64_t begin, end;
};

}  // namespace

std::string_view safetensors_dtype_name(DType d) noexcept {
  for (const auto& [dt, n] : kDTypeNames)
    if (dt == d) return n;
  return "?";
}

namespace detail {

std::vector<std::byte> build_safetensors(const std::map<std::string, TensorData>& tensors,
                                         const std::map<std::string, std::string>& metadata, std::string_view op,
                                         std::string_view prefix) {
  const auto fail = [&](const std::string& what) { return Error(op, std::string(prefix) + what); };
  // nlohmann escapes JSON strings and rejects invalid UTF-8 (which Python
  // could not decode).
  const auto quote = [&](const std::string& s, const std::string& what) {
    try {
      return json(s).dump();
    } catch (const json::exception&) {
      throw fail(what + " is not valid UTF-8");
    }
  };

  // Compact JSON in the layout the Python writer uses: metadata first.
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) header += ',';
      first = false;
      header += quote(k, "metadata key " + json(k).dump(-1, ' ', true, json::error_handler_t::replace));
      header += ':';
      header += quote(v, "metadata value of key " + json(k).dump(-1, ' ', true, json::error_handler_t::replace));
    }
    header += '}';
  }
  std::uint64_t offset = 0;
  for (const auto& [name, data] : tensors) {
    const std::string shown = json(name).dump(-1, ' ', true, json::error_handler_t::replace);
    if (name == "__metadata__")
      throw fail("a tensor cannot be named \"__metadata__\": that key holds the file's metadata; rename the tensor");
    const std::size_t needed = data.num_elements() * dtype_size(data.dtype());
    if (data.bytes().size() != needed)
      throw fail("tensor " + shown + " holds " + std::to_string(data.bytes().size()) + " bytes but its shape " +
                 data.shape().to_string() + " of dtype " + std::string(dtype_name(data.dtype())) + " needs " +
                 std::to_string(needed) + " (a default-constructed TensorData has no values)");
    if (header.size() > 1) header += ',';
    header += quote(name, "tensor name " + shown);
    header += ":{\"dtype\":\"";
    header += safetensors_dtype_name(data.dtype());
    header += "\",\"shape\":[";
    for (std::size_t i = 0; i < data.shape().rank(); ++i) {
      if (i) header += ',';
      header += std::to_string(data.shape()[i]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + ',' + std::to_string(offset + needed) + "]}";
    offset += needed;
  }
  header += '}';
  // Pad with spaces, as the Python writer does, so the data starts 8-aligned.
  header.append((8 - header.size() % 8) % 8, ' ');

  std::vector<std::byte> out(8 + header.size() + offset);
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = std::byte((n >> (8 * i)) & 0xff);
  std::memcpy(out.data() + 8, header.data(), header.size());
  std::byte* dst = out.data() + 8 + header.size();
  for (const auto& [name, data] : tensors) {
    const auto src = data.bytes();
    if (src.empty()) continue;
    std::memcpy(dst, src.data(), src.size());
    if (data.dtype() == DType::Bool)  // Python reads a bool byte as 0 or 1 only
      for (std::size_t i = 0; i < src.size(); ++i) dst[i] = std::byte(src[i] != std::byte(0) ? 1 : 0);
    swap_to_or_from_little_endian({dst, src.size()}, dtype_size(data.dtype()));
    dst += src.size();
  }
  return out;
}

SafetensorsFile parse_safetensors(std::span<const std::byte> bytes, std::string_view op, std::string_view prefix) {
  const auto fail = [&](const std::string& what) { return Error(op, std::string(prefix) + what); };
  if (bytes.size() < 8)
    throw fail("too short to be a safetensors file: " + std::to_string(bytes.size()) +
               " bytes, but the header length alone takes 8");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(bytes[i]);
  if (n > bytes.size() - 8)
    throw fail("the header length " + std::to_string(n) + " runs past the end of the data (" +
               std::to_string(bytes.size()) + " bytes in all); the file is truncated or not safetensors");
  const char* header_begin = reinterpret_cast<const char*>(bytes.data() + 8);

  // nlohmann keeps the last of duplicate keys silently; record the first
  // duplicate instead (one key set per open object).
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  int duplicate_depth = 0;
  const json::parser_callback_t track_keys = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty() && duplicate.empty()) {
      if (!open_objects.back().insert(parsed.get<std::string>()).second) {
        duplicate = parsed.get<std::string>();
        duplicate_depth = depth;
      }
    }
    return true;
  };
  json header;
  try {
    header = json::parse(header_begin, header_begin + n, track_keys);
  } catch (const json::exception& e) {
    throw fail(std::string("the header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty())
    throw fail((duplicate_depth == 1 ? "duplicate tensor name " : "duplicate key ") + json(duplicate).dump() +
               " in the header");
  if (!header.is_object()) throw fail("the header must be a JSON object, found " + std::string(header.type_name()));

  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    const std::string shown = json(name).dump();
    if (name == "__metadata__") {
      if (!value.is_object()) throw fail("\"__metadata__\" must be an object of strings");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string())
          throw fail("metadata value of key " + json(k).dump() + " must be a string, found " + v.dump());
        file.metadata.emplace(k, v.get<std::string>());
      }
      continue;
    }
    if (!value.is_object()) throw fail("tensor " + shown + " must be described by an object, found " + value.dump());
    const auto field = [&](const char* key) -> const json& {
      const auto it = value.find(key);
      if (it == value.end()) throw fail("tensor " + shown + " has no \"" + key + "\" field");
      return *it;
    };
    const json& dtype_json = field("dtype");
    const json& shape_json = field("shape");
    const json& offsets_json = field("data_offsets");
    if (!dtype_json.is_string()) throw fail("tensor " + shown + ": \"dtype\" must be a string");
    const auto dtype = dtype_from_name(dtype_json.get<std::string>());
    if (!dtype)
      throw fail("tensor " + shown + " has unknown dtype " + dtype_json.dump() +
                 " (supported: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL)");
    Entry e{name, *dtype, {}, 0, 0};
    if (!shape_json.is_array()) throw fail("tensor " + shown + ": \"shape\" must be an array");
    for (const auto& d : shape_json) {
      if (!d.is_number_unsigned())
        throw fail("tensor " + shown + ": shape " + shape_json.dump() + " must hold non-negative integers");
      e.dims.push_back(d.get<std::uint64_t>());
    }
    if (!offsets_json.is_array() || offsets_json.size() != 2 || !offsets_json[0].is_number_unsigned() ||
        !offsets_json[1].is_number_unsigned())
      throw fail("tensor " + shown + ": \"data_offsets\" must be [begin, end], found " + offsets_json.dump());
    e.begin = offsets_json[0].get<std::uint64_t>();
    e.end = offsets_json[1].get<std::uint64_t>();
    entries.push_back(std::move(e));
  }

  const std::uint64_t data_size = bytes.size() - 8 - n;
  const std::byte* data = bytes.data() + 8 + n;
  for (const Entry& e : entries) {
    const std::string where = "tensor " + json(e.name).dump() + " (" + std::string(safetensors_dtype_name(e.dtype)) +
                              " " + shape_text(e.dims) + ")";
    // Overflow-checked element count: a hostile header must not wrap around.
    std::uint64_t needed = dtype_size(e.dtype);
    bool overflow = false;
    for (std::uint64_t d : e.dims) overflow = overflow || __builtin_mul_overflow(needed, d, &needed);
    if (overflow || needed > std::numeric_limits<std::size_t>::max())
      throw fail(where + ": the shape's byte size overflows 64 bits");
    if (e.begin > e.end)
      throw fail(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                 "] end before they begin");
    if (e.end > data_size)
      throw fail(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                 "] run past the data buffer of " + std::to_string(data_size) + " bytes (truncated file?)");
    if (e.end - e.begin != needed)
      throw fail(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] span " +
                 std::to_string(e.end - e.begin) + " bytes but the shape and dtype need " + std::to_string(needed));
  }

  // The tensors must tile the data buffer exactly, as the Python reader
  // demands: no overlap, no gap, nothing after the last tensor.
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Entry* a, const Entry* b) { return std::tie(a->begin, a->end) < std::tie(b->begin, b->end); });
  std::uint64_t covered = 0;
  const Entry* last = nullptr;
  for (const Entry* e : by_offset) {
    if (e->begin < covered)
      throw fail("tensors " + json(last->name).dump() + " and " + json(e->name).dump() +
                 " overlap in the data buffer (at byte " + std::to_string(e->begin) + ")");
    if (e->begin > covered)
      throw fail("bytes [" + std::to_string(covered) + ", " + std::to_string(e->begin) +
                 ") of the data buffer belong to no tensor");
    last = e;
    covered = e->end;
  }
  if (covered != data_size)
    throw fail("trailing garbage: " + std::to_string(data_size - covered) +
               " bytes after the last tensor's data");

  for (const Entry& e : entries) {
    std::vector<std::byte> values(data + e.begin, data + e.end);
    swap_to_or_from_little_endian(values, dtype_size(e.dtype));
    if (e.dtype == DType::Bool) {
      const auto bad = std::find_if(values.begin(), values.end(), [](std::byte b) { return b > std::byte(1); });
      if (bad != values.end())
        throw fail("BOOL tensor " + json(e.name).dump() + " holds the byte " +
                   std::to_string(std::to_integer<int>(*bad)) + " at element " +
                   std::to_string(bad - values.begin()) + " (a bool must be 0 or 1)");
    }
    std::vector<std::size_t> dims(e.dims.begin(), e.dims.end());
    file.tensors.emplace(e.name, TensorData(std::move(values), Shape(std::move(dims)), e.dtype));
  }
  return file;
}

}  // namespace detail

}  // namespace burn::record
