// Quantized records: a safetensors file holding each quantized layer's
// integer values and scales, its scheme and calibrated input range in the
// metadata, and every other tensor of the model as it is.
//
//   "<path>"                          I8 values (int4: U8, two per byte, low nibble first)
//   "<path>.scales"                   F32 scales
//   "burn.quant.<path>.scheme"        "int8-channel1", "int4-block32", ...
//   "burn.quant.<path>.layer"         "linear" or "conv2d"
//   "burn.quant.<path>.input_amax"    the calibrated max |input| (absent: dynamic)
//   "burn.quant.<path>.shape"         the weight's shape, "784x128"
#include <burn/quant/ptq.hpp>

#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include <burn/detail/ops.hpp>
#include <burn/record/safetensors.hpp>

#include "quant/layer.hpp"

namespace burn::quant::detail {

using burn::detail::TensorRef;

namespace {

constexpr std::string_view kPrefix = "burn.quant.";
constexpr std::string_view kSchemeSuffix = ".scheme";
constexpr const char* kSave = "save_quantized";
constexpr const char* kLoad = "load_quantized";

std::string shape_text(const Shape& s) {
  std::string out;
  for (std::size_t d = 0; d < s.rank(); ++d) {
    if (d != 0) out += 'x';
    out += std::to_string(s[d]);
  }
  return out;
}

std::vector<std::byte> pack_int4(const std::vector<std::int8_t>& values) {
  std::vector<std::byte> packed((values.size() + 1) / 2);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto nibble = static_cast<unsigned>(values[i]) & 0xFu;
    packed[i / 2] |= static_cast<std::byte>(i % 2 == 0 ? nibble : nibble << 4);
  }
  return packed;
}

std::vector<std::int8_t> unpack_int4(const std::vector<std::uint8_t>& packed, std::size_t count) {
  std::vector<std::int8_t> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned nibble = (i % 2 == 0 ? packed[i / 2] : packed[i / 2] >> 4) & 0xFu;
    values[i] = static_cast<std::int8_t>(nibble >= 8 ? static_cast<int>(nibble) - 16 : static_cast<int>(nibble));
  }
  return values;
}

}  // namespace

QuantizedRecordWriter::QuantizedRecordWriter(const QuantPlan& plan)
    : plan_(plan), metadata_{{"format", "burn-cpp-quantized"}, {"burn.record_version", "1"}} {}

void QuantizedRecordWriter::add(const std::string& path, const TensorRef& value) {
  if (tensors_.contains(path))
    throw Error(kSave, fmt::format("two tensors are named '{}' (a tensor path clashes with a layer's scales)", path));
  if (plan_.find(value.get()) != nullptr) return;  // written by save() from the plan
  tensors_[path] = burn::detail::to_data(value);
}

void QuantizedRecordWriter::save(const std::filesystem::path& path) {
  auto& tensors = tensors_;
  auto& metadata = metadata_;
  for (const auto& entry : plan_.entries()) {
    const QuantizedLayer& layer = *entry.layer;
    const std::string scales_key = entry.path + ".scales";
    if (tensors.contains(entry.path) || tensors.contains(scales_key))
      throw Error(kSave, fmt::format("'{}' or '{}' is already a tensor of the model", entry.path, scales_key));
    TensorData values = burn::detail::to_data(layer.values());
    const Shape shape = values.shape();
    if (layer.scheme.bits == QuantBits::Int4) {
      auto packed = pack_int4(values.to_vec<std::int8_t>());
      const std::size_t bytes = packed.size();
      values = TensorData(std::move(packed), Shape{bytes}, DType::U8);
    }
    tensors[entry.path] = std::move(values);
    tensors[scales_key] = burn::detail::to_data(layer.q.scales);
    const std::string key = std::string(kPrefix) + entry.path;
    metadata[key + ".scheme"] = layer.scheme.to_string();
    metadata[key + ".layer"] = layer.kind == LayerKind::Linear ? "linear" : "conv2d";
    metadata[key + ".shape"] = shape_text(shape);
    if (auto amax = layer.input_amax) metadata[key + ".input_amax"] = fmt::format("{:.9g}", *amax);
  }
  try {
    record::save_safetensors(path, tensors, metadata);
  } catch (const Error& e) {
    throw Error(kSave, e.what());
  }
}

QuantizedRecordReader::QuantizedRecordReader(const std::filesystem::path& path) : path_(path) {
  record::SafetensorsFile file;
  try {
    file = record::load_safetensors(path);
  } catch (const Error& e) {
    throw Error(kLoad, e.what());
  }
  const std::string where = path.string() + ": ";
  auto format = file.metadata.find("format");
  if (format == file.metadata.end() || format->second != "burn-cpp-quantized")
    throw Error(kLoad, where +
                           "not a quantized record (metadata \"format\" is not \"burn-cpp-quantized\"); "
                           "plain records load with record::load_module");
  for (const auto& [key, scheme_text] : file.metadata) {
    if (!key.starts_with(kPrefix) || !key.ends_with(kSchemeSuffix)) continue;
    const std::string layer_path = key.substr(kPrefix.size(), key.size() - kPrefix.size() - kSchemeSuffix.size());
    const std::string meta = std::string(kPrefix) + layer_path;
    auto get = [&](const std::string& suffix) -> const std::string* {
      auto it = file.metadata.find(meta + suffix);
      return it == file.metadata.end() ? nullptr : &it->second;
    };
    // Every problem with this layer: the file, the layer and what is wrong.
    auto fail = [&](const std::string& what) {
      throw Error(kLoad, fmt::format("{}layer '{}': {}", where, layer_path, what));
    };
    Layer layer;
    try {
      layer.scheme = QuantScheme::parse(scheme_text);
    } catch (const Error& e) {
      fail(e.what());
    }
    const std::string* kind = get(".layer");
    const std::string* shape = get(".shape");
    if (kind == nullptr || (*kind != "linear" && *kind != "conv2d") || shape == nullptr)
      fail("its layer kind or shape is missing from the metadata");
    layer.kind = *kind == "linear" ? LayerKind::Linear : LayerKind::Conv2d;
    if (const std::string* amax = get(".input_amax")) {
      float v = 0;
      auto [end, ec] = std::from_chars(amax->data(), amax->data() + amax->size(), v);
      if (ec != std::errc() || end != amax->data() + amax->size() || !(v >= 0.0f))
        fail(fmt::format("invalid input_amax '{}'", *amax));
      layer.input_amax = v;
    }
    std::vector<std::size_t> dims;
    for (std::size_t pos = 0; pos <= shape->size();) {
      const std::size_t next = std::min(shape->find('x', pos), shape->size());
      std::size_t d = 0;
      auto [end, ec] = std::from_chars(shape->data() + pos, shape->data() + next, d);
      if (ec != std::errc() || end != shape->data() + next) fail(fmt::format("invalid shape '{}'", *shape));
      dims.push_back(d);
      pos = next + 1;
    }
    const Shape weight_shape(dims);
    auto values = file.tensors.find(layer_path);
    auto scales = file.tensors.find(layer_path + ".scales");
    if (values == file.tensors.end() || scales == file.tensors.end()) fail("its values or scales tensor is missing");
    const std::size_t n = weight_shape.num_elements();
    if (layer.scheme.bits == QuantBits::Int4) {
      if (values->second.dtype() != DType::U8 || values->second.shape() != Shape{(n + 1) / 2})
        fail(fmt::format("packed int4 values must be U8 [{}]", (n + 1) / 2));
      layer.values = TensorData(unpack_int4(values->second.to_vec<std::uint8_t>(), n), weight_shape);
    } else {
      if (values->second.dtype() != DType::I8 || values->second.shape() != weight_shape)
        fail(fmt::format("values must be I8 of shape {}", weight_shape.to_string()));
      layer.values = values->second;
    }
    std::size_t groups = 0;
    try {
      groups = scale_count(weight_shape, layer.scheme, kLoad);
    } catch (const Error& e) {
      fail(e.what());
    }
    if (scales->second.dtype() != DType::F32 || scales->second.shape() != Shape{groups})
      fail(fmt::format("scales must be F32 [{}]", groups));
    if (layer.scheme != layer_scheme(layer.scheme, layer.kind))
      fail(fmt::format("scheme {} is not per output channel of a {} weight", layer.scheme.to_string(), *kind));
    layer.scales = scales->second;
    used_[layer_path] = false;
    used_[layer_path + ".scales"] = false;
    layers_.emplace(layer_path, std::move(layer));
  }
  for (auto& [name, data] : file.tensors) {
    if (used_.contains(name)) continue;
    used_[name] = false;
    tensors_.emplace(name, std::move(data));
  }
}

TensorRef QuantizedRecordReader::value(const std::string& path, const module::ParamBase& p) {
  const TensorRef current = p.ref();
  const Device& device = current->device;
  const DType dtype = current->spec.dtype;
  const std::string where = path_.string() + ": ";
  if (auto it = layers_.find(path); it != layers_.end()) {
    Layer& layer = it->second;
    if (layer.values.shape() != current->spec.shape)
      throw Error(kLoad, where + fmt::format("shape mismatch for '{}': the model has {}, the file {}", path,
                                             current->spec.shape.to_string(), layer.values.shape().to_string()));
    QuantizedRefs q{
        burn::detail::from_data(layer.values, TensorCreationOptions(device, DType::I8), TensorKind::Int),
        burn::detail::from_data(layer.scales, TensorCreationOptions(device, DType::F32), TensorKind::Float)};
    TensorRef held = held_weight(q, layer.scheme, current);
    layer.placed = PlanBuilder::Pending{layer.kind, layer.scheme, std::move(q), layer.input_amax};
    used_[path] = used_[path + ".scales"] = true;
    return held;
  }
  auto it = tensors_.find(path);
  if (it == tensors_.end()) throw Error(kLoad, where + fmt::format("the file has no tensor '{}'", path));
  const TensorData& stored = it->second;
  if (stored.shape() != current->spec.shape)
    throw Error(kLoad, where + fmt::format("shape mismatch for '{}': the model has {}, the file {}", path,
                                           current->spec.shape.to_string(), stored.shape().to_string()));
  if (is_float(stored.dtype()) != is_float(dtype) || is_int(stored.dtype()) != is_int(dtype))
    throw Error(kLoad, where + fmt::format("'{}' holds {} values but the model tensor is {}", path,
                                           dtype_name(stored.dtype()), dtype_name(dtype)));
  used_[path] = true;
  TensorData data = stored.dtype() == dtype ? stored : stored.convert(dtype);
  return burn::detail::from_data(std::move(data), TensorCreationOptions(device, dtype), kind_of_dtype(dtype));
}

void QuantizedRecordReader::add_layers(PlanBuilder& builder) {
  for (auto& [path, layer] : layers_)
    if (layer.placed) builder.add_pending(path, std::move(*layer.placed));
}

void QuantizedRecordReader::check_all_used() const {
  std::string unused;
  for (const auto& [name, used] : used_)
    if (!used) {
      if (!unused.empty()) unused += ", ";
      unused += name;
    }
  if (!unused.empty()) throw Error(kLoad, path_.string() + ": entries " + unused + " match no tensor of the model");
}

}  // namespace burn::quant::detail
