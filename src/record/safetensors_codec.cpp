// The safetensors byte layout: building and validating the header and the
// data buffer. File access lives in file_io.cpp.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "safetensors_internal.hpp"

namespace burn::record {

namespace {

using nlohmann::json;

// The 8-bit floats of current model files (OCP FP8). Burn has no such dtype,
// so they are decoded to F32 on load; every value is exact there.
//  - E4M3 is the "FN" variant (torch.float8_e4m3fn): bias 7, no infinities,
//    S.1111.111 is NaN, so the largest finite value is 448.
//  - E5M2 (torch.float8_e5m2) is IEEE-like: bias 15, S.11111.00 is infinity,
//    S.11111.xx with xx != 0 is NaN; the largest finite value is 57344.
enum class Fp8 { None, E4M3, E5M2 };

struct FileDType {
  std::string_view name;
  DType dtype;  // what the loaded TensorData holds
  Fp8 fp8;
};

// What the reader accepts: the writer's dtypes (the first 13) and the FP8 formats.
constexpr std::array<FileDType, 15> kFileDTypes{{
    {"F64", DType::F64, Fp8::None},
    {"F32", DType::F32, Fp8::None},
    {"F16", DType::F16, Fp8::None},
    {"BF16", DType::BF16, Fp8::None},
    {"I64", DType::I64, Fp8::None},
    {"I32", DType::I32, Fp8::None},
    {"I16", DType::I16, Fp8::None},
    {"I8", DType::I8, Fp8::None},
    {"U64", DType::U64, Fp8::None},
    {"U32", DType::U32, Fp8::None},
    {"U16", DType::U16, Fp8::None},
    {"U8", DType::U8, Fp8::None},
    {"BOOL", DType::Bool, Fp8::None},
    {"F8_E4M3", DType::F32, Fp8::E4M3},
    {"F8_E5M2", DType::F32, Fp8::E5M2},
}};

const FileDType* file_dtype(std::string_view name) {
  for (const auto& d : kFileDTypes)
    if (d.name == name) return &d;
  return nullptr;
}

float fp8_e4m3_to_float(std::uint8_t b) {
  const int exponent = (b >> 3) & 0xf, mantissa = b & 0x7;
  float v;
  if (exponent == 0xf && mantissa == 0x7) v = std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0) v = std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m/8 * 2^-6
  else v = std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);      // (1 + m/8) * 2^(e-7)
  return (b & 0x80) ? -v : v;
}

float fp8_e5m2_to_float(std::uint8_t b) {
  const int exponent = (b >> 2) & 0x1f, mantissa = b & 0x3;
  float v;
  if (exponent == 0x1f)
    v = mantissa == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0) v = std::ldexp(static_cast<float>(mantissa), -16);  // subnormal: m/4 * 2^-14
  else v = std::ldexp(static_cast<float>(4 + mantissa), exponent - 17);       // (1 + m/4) * 2^(e-15)
  return (b & 0x80) ? -v : v;
}

// All 256 values of one format.
std::array<float, 256> fp8_table(Fp8 format) {
  std::array<float, 256> t{};
  for (int i = 0; i < 256; ++i) {
    const auto b = static_cast<std::uint8_t>(i);
    t[i] = format == Fp8::E4M3 ? fp8_e4m3_to_float(b) : fp8_e5m2_to_float(b);
  }
  return t;
}

std::vector<std::byte> decode_fp8(std::span<const std::byte> in, Fp8 format) {
  static const std::array<float, 256> e4m3 = fp8_table(Fp8::E4M3), e5m2 = fp8_table(Fp8::E5M2);
  const auto& table = format == Fp8::E4M3 ? e4m3 : e5m2;
  std::vector<std::byte> out(in.size() * sizeof(float));
  for (std::size_t i = 0; i < in.size(); ++i)
    std::memcpy(out.data() + i * sizeof(float), &table[std::to_integer<std::uint8_t>(in[i])], sizeof(float));
  return out;
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

// Text for an error message, cut short: a hostile header may hold megabytes
// in one value or token.
std::string cut(std::string s) {
  constexpr std::size_t kMaxShown = 200;
  if (s.size() > kMaxShown) s.replace(kMaxShown, std::string::npos, "...");
  return s;
}

std::string shown(const json& value) { return cut(value.dump(-1, ' ', false, json::error_handler_t::replace)); }

// A name or key as JSON text ("x"), cut short like any other value.
std::string quote_json(const std::string& s) {
  return cut(json(s).dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace

std::string_view safetensors_dtype_name(DType d) noexcept {
  // The writer's names: each dtype's own entry, never an FP8 format (those
  // only load, as F32).
  for (const auto& f : kFileDTypes)
    if (f.fp8 == Fp8::None && f.dtype == d) return f.name;
  return "?";
}

namespace detail {

const TensorData& named_tensor(const std::map<std::string, TensorData>& tensors, std::string_view name,
                               std::string_view op) {
  const auto it = tensors.find(std::string(name));
  if (it != tensors.end()) return it->second;
  std::string names;
  for (const auto& [n, _] : tensors) names += (names.empty() ? "" : ", ") + n;
  throw Error(op, "no tensor named '" + std::string(name) +
                      "'; the file holds: " + (names.empty() ? std::string("no tensors") : names));
}

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

namespace {

// Receives nlohmann's SAX events; nlohmann's parser itself keeps its state in
// a vector, not on the call stack. The top-level object is never built as a
// whole: each of its values (a tensor entry or "__metadata__") is built on
// its own, handed to `on_entry` once complete and dropped, so memory and time
// stay linear in the header's size. Nesting deeper than kMaxHeaderDepth and
// duplicate keys (nlohmann's DOM would silently keep the last) stop the parse.
class HeaderReader {
 public:
  using Fail = std::function<Error(const std::string&)>;
  using OnEntry = std::function<void(const std::string& name, const json& value)>;
  HeaderReader(Fail fail, OnEntry on_entry) : fail_(std::move(fail)), on_entry_(std::move(on_entry)) {}

  bool null() { return value(json(nullptr)); }
  bool boolean(bool b) { return value(json(b)); }
  bool number_integer(json::number_integer_t v) { return value(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return value(json(v)); }
  bool number_float(json::number_float_t v, const std::string&) { return value(json(v)); }
  bool string(std::string& s) { return value(json(std::move(s))); }
  bool binary(json::binary_t& b) { return value(json(std::move(b))); }
  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    if (open_.empty()) {  // a key of the top-level object: a tensor name or "__metadata__"
      if (!names_.insert(k).second) throw fail_("duplicate tensor name " + quote_json(k) + " in the header");
      name_ = std::move(k);
    } else {
      if (open_.back()->contains(k)) throw fail_("duplicate key " + quote_json(k) + " in the header");
      key_ = std::move(k);
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    throw fail_("the header is not valid JSON: " + cut(e.what()));
  }
  bool complete() const noexcept { return complete_; }

 private:
  bool open(json::value_t type) {
    if (depth_ >= kMaxHeaderDepth)
      throw fail_("the header nests JSON values more than " + std::to_string(kMaxHeaderDepth) +
                  " levels deep (a safetensors header needs 3); the file is corrupt or hostile");
    if (depth_ == 0 && type != json::value_t::object) not_an_object(json(type));
    if (depth_++ > 0) open_.push_back(place(json(type)));
    return true;
  }
  bool close() {
    if (--depth_ == 0) {
      complete_ = true;
      return true;
    }
    open_.pop_back();
    if (open_.empty()) finish_entry();
    return true;
  }
  bool value(json v) {
    if (depth_ == 0) not_an_object(v);
    place(std::move(v));
    if (open_.empty()) finish_entry();
    return true;
  }
  // Where a new value goes: the entry being built, or the innermost open
  // array or object. Only the innermost container grows, so the pointers to
  // the enclosing ones stay valid.
  json* place(json v) {
    if (open_.empty()) {
      entry_ = std::move(v);
      return &entry_;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    return &parent.emplace(std::move(key_), std::move(v)).first.value();
  }
  void finish_entry() {
    on_entry_(name_, entry_);
    entry_ = json();
  }
  [[noreturn]] void not_an_object(const json& v) {
    throw fail_("the header must be a JSON object, found " + std::string(v.type_name()));
  }

  Fail fail_;
  OnEntry on_entry_;
  std::size_t depth_ = 0;    // open containers, the top-level object included
  std::vector<json*> open_;  // open containers inside the current entry
  std::unordered_set<std::string> names_;
  std::string name_, key_;
  json entry_;
  bool complete_ = false;
};

}  // namespace

std::uint64_t header_length(std::span<const std::byte, 8> first, std::optional<std::uint64_t> total_size,
                            std::string_view op, std::string_view prefix) {
  const auto fail = [&](const std::string& what) { return Error(op, std::string(prefix) + what); };
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(first[i]);
  if (n > kMaxHeaderSize)
    throw fail("the header length " + std::to_string(n) + " exceeds the limit of " + std::to_string(kMaxHeaderSize) +
               " bytes (the reference safetensors readers refuse it too); the file is corrupt or not safetensors");
  if (total_size && n > *total_size - std::min<std::uint64_t>(*total_size, 8))
    throw fail("the header length " + std::to_string(n) + " runs past the end of the data (" +
               std::to_string(*total_size) + " bytes in all); the file is truncated or not safetensors");
  return n;
}

SafetensorsHeader parse_safetensors_header(std::string_view text, std::string_view op, std::string_view prefix) {
  const auto fail = [&](const std::string& what) { return Error(op, std::string(prefix) + what); };
  SafetensorsHeader header;

  const auto on_entry = [&](const std::string& name, const json& value) {
    const std::string shown_name = quote_json(name);
    if (name == "__metadata__") {
      if (!value.is_object()) throw fail("\"__metadata__\" must be an object of strings");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string())
          throw fail("metadata value of key " + quote_json(k) + " must be a string, found " + shown(v));
        header.metadata.emplace(k, v.get<std::string>());
      }
      return;
    }
    if (!value.is_object())
      throw fail("tensor " + shown_name + " must be described by an object, found " + shown(value));
    const auto field = [&](const char* key) -> const json& {
      const auto it = value.find(key);
      if (it == value.end()) throw fail("tensor " + shown_name + " has no \"" + key + "\" field");
      return *it;
    };
    const json& dtype_json = field("dtype");
    const json& shape_json = field("shape");
    const json& offsets_json = field("data_offsets");
    if (!dtype_json.is_string()) throw fail("tensor " + shown_name + ": \"dtype\" must be a string");
    const FileDType* dtype = file_dtype(dtype_json.get_ref<const std::string&>());
    if (!dtype)
      throw fail("tensor " + shown_name + " has unknown dtype " + shown(dtype_json) +
                 " (supported: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL F8_E4M3 F8_E5M2)");
    HeaderEntry e{name, dtype->name, dtype->dtype, dtype->fp8 == Fp8::None ? dtype_size(dtype->dtype) : 1, {}, 0, 0};
    if (!shape_json.is_array()) throw fail("tensor " + shown_name + ": \"shape\" must be an array");
    e.dims.reserve(shape_json.size());
    for (const auto& d : shape_json) {
      if (!d.is_number_unsigned())
        throw fail("tensor " + shown_name + ": shape " + shown(shape_json) + " must hold non-negative integers");
      e.dims.push_back(d.get<std::uint64_t>());
    }
    if (!offsets_json.is_array() || offsets_json.size() != 2 || !offsets_json[0].is_number_unsigned() ||
        !offsets_json[1].is_number_unsigned())
      throw fail("tensor " + shown_name + ": \"data_offsets\" must be [begin, end], found " + shown(offsets_json));
    e.begin = offsets_json[0].get<std::uint64_t>();
    e.end = offsets_json[1].get<std::uint64_t>();

    const std::string where =
        "tensor " + shown_name + " (" + std::string(e.dtype_name) + " " + shape_text(e.dims) + ")";
    // Overflow-checked byte count: a hostile header must not wrap around.
    std::uint64_t needed = e.element_size;
    bool overflow = false;
    for (std::uint64_t d : e.dims) overflow = overflow || __builtin_mul_overflow(needed, d, &needed);
    if (overflow || needed > std::numeric_limits<std::size_t>::max())
      throw fail(where + ": the shape's byte size overflows 64 bits");
    if (e.begin > e.end)
      throw fail(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                 "] end before they begin");
    if (e.end - e.begin != needed)
      throw fail(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] span " +
                 std::to_string(e.end - e.begin) + " bytes but the shape and dtype need " + std::to_string(needed));
    header.entries.push_back(std::move(e));
  };

  HeaderReader reader(fail, on_entry);
  bool parsed = false;
  try {
    parsed = json::sax_parse(text.begin(), text.end(), &reader);
  } catch (const json::exception& e) {
    throw fail("the header is not valid JSON: " + cut(e.what()));
  }
  if (!parsed || !reader.complete()) throw fail("the header is not valid JSON");

  // The tensors must tile the data buffer exactly, as the Python reader
  // demands: no overlap, no gap (nothing after the last tensor is checked
  // against the data, check_data_size).
  std::vector<const HeaderEntry*> by_offset;
  by_offset.reserve(header.entries.size());
  for (const HeaderEntry& e : header.entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const HeaderEntry* a, const HeaderEntry* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  std::uint64_t covered = 0;
  const HeaderEntry* last = nullptr;
  for (const HeaderEntry* e : by_offset) {
    if (e->begin < covered)
      throw fail("tensors " + quote_json(last->name) + " and " + quote_json(e->name) +
                 " overlap in the data buffer (at byte " + std::to_string(e->begin) + ")");
    if (e->begin > covered)
      throw fail("bytes [" + std::to_string(covered) + ", " + std::to_string(e->begin) +
                 ") of the data buffer belong to no tensor");
    last = e;
    covered = e->end;
  }
  header.data_size = covered;
  return header;
}

void check_data_size(const SafetensorsHeader& header, std::uint64_t available, std::string_view op,
                     std::string_view prefix) {
  const auto fail = [&](const std::string& what) { return Error(op, std::string(prefix) + what); };
  if (available < header.data_size) {
    for (const HeaderEntry& e : header.entries) {
      if (e.end <= available) continue;
      throw fail("tensor " + quote_json(e.name) + " (" + std::string(e.dtype_name) + " " + shape_text(e.dims) +
                 "): data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                 "] run past the data buffer of " + std::to_string(available) + " bytes (truncated file?)");
    }
  }
  if (available > header.data_size)
    throw fail("trailing garbage: " + std::to_string(available - header.data_size) +
               " bytes after the last tensor's data");
}

SafetensorsFile decode_safetensors(const SafetensorsHeader& header, std::span<const std::byte> data,
                                   std::string_view op, std::string_view prefix) {
  const auto fail = [&](const std::string& what) { return Error(op, std::string(prefix) + what); };
  check_data_size(header, data.size(), op, prefix);
  SafetensorsFile file;
  file.metadata = header.metadata;
  for (const HeaderEntry& e : header.entries) {
    const auto stored = data.subspan(e.begin, e.end - e.begin);
    std::vector<std::byte> values;
    if (const Fp8 fp8 = file_dtype(e.dtype_name)->fp8; fp8 != Fp8::None) {
      values = decode_fp8(stored, fp8);
    } else {
      values.assign(stored.begin(), stored.end());
      swap_to_or_from_little_endian(values, e.element_size);
    }
    if (e.dtype == DType::Bool) {
      const auto bad = std::find_if(values.begin(), values.end(), [](std::byte b) { return b > std::byte(1); });
      if (bad != values.end())
        throw fail("BOOL tensor " + quote_json(e.name) + " holds the byte " +
                   std::to_string(std::to_integer<int>(*bad)) + " at element " + std::to_string(bad - values.begin()) +
                   " (a bool must be 0 or 1)");
    }
    std::vector<std::size_t> dims(e.dims.begin(), e.dims.end());
    file.tensors.emplace(e.name, TensorData(std::move(values), Shape(dims), e.dtype));
  }
  return file;
}

SafetensorsFile parse_safetensors(std::span<const std::byte> bytes, std::string_view op, std::string_view prefix) {
  if (bytes.size() < 8)
    throw Error(op, std::string(prefix) + "too short to be a safetensors file: " + std::to_string(bytes.size()) +
                        " bytes, but the header length alone takes 8");
  const std::uint64_t n = header_length(bytes.first<8>(), bytes.size(), op, prefix);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8), n);
  const SafetensorsHeader header = parse_safetensors_header(text, op, prefix);
  return decode_safetensors(header, bytes.subspan(8 + n), op, prefix);
}

}  // namespace detail

}  // namespace burn::record
