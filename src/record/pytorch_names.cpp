// PyTorch's state-dict names for burn's attention and encoder layers (see
// pytorch_names.hpp for the table).
#include "pytorch_names.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "module_record_detail.hpp"

namespace burn::record::detail {

namespace {

// torch's path component -> burn's (one or more components).
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kComponents{{
    {"self_attn", "mha"},
    {"out_proj", "output"},
    {"linear1", "pwff.linear_inner"},
    {"linear2", "pwff.linear_outer"},
    {"norm1", "norm_1"},
    {"norm2", "norm_2"},
}};

// The parts of an encoder layer, torch -> burn, relative to the layer.
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kEncoderParts{{
    {"self_attn", "mha"},
    {"linear1", "pwff.linear_inner"},
    {"linear2", "pwff.linear_outer"},
    {"norm1", "norm_1"},
    {"norm2", "norm_2"},
}};

constexpr std::array<std::string_view, 3> kProjections{"query", "key", "value"};
constexpr std::string_view kInProjWeight = "in_proj_weight";
constexpr std::string_view kInProjBias = "in_proj_bias";

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    out.emplace_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

std::string join(const std::vector<std::string>& parts, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += (i ? "." : "") + parts[i];
  return out;
}

std::string with_prefix(const std::string& prefix, std::string_view rest) {
  return prefix.empty() ? std::string(rest) : prefix + "." + std::string(rest);
}

/// Rows [part * n / parts, (part + 1) * n / parts) of `data` (its first dim n).
TensorData rows(const TensorData& data, std::size_t part, std::size_t parts) {
  const auto dims = data.shape().dims();
  std::vector<std::size_t> out_dims(dims.begin(), dims.end());
  out_dims[0] /= parts;
  const std::size_t bytes = data.bytes().size() / parts;
  const auto begin = data.bytes().begin() + static_cast<std::ptrdiff_t>(part * bytes);
  return TensorData(std::vector<std::byte>(begin, begin + static_cast<std::ptrdiff_t>(bytes)), Shape(out_dims),
                    data.dtype());
}

/// The parts stacked along their first dim.
TensorData stack_rows(const std::vector<const TensorData*>& parts) {
  const auto dims = parts.front()->shape().dims();
  std::vector<std::size_t> out_dims(dims.begin(), dims.end());
  out_dims[0] *= parts.size();
  std::vector<std::byte> bytes;
  for (const auto* p : parts) bytes.insert(bytes.end(), p->bytes().begin(), p->bytes().end());
  return TensorData(std::move(bytes), Shape(out_dims), parts.front()->dtype());
}

void insert_new(std::map<std::string, NamedTensor>& tensors, std::string name, NamedTensor value,
                const std::string& where) {
  if (const auto it = tensors.find(name); it != tensors.end())
    throw Error(kLoadOp, fmt::format("{}the file has both '{}' and '{}', which are the same tensor in PyTorch's naming "
                                     "(the module's '{}'); remove one",
                                     where, it->second.file_key, value.file_key, name));
  tensors.emplace(std::move(name), std::move(value));
}

}  // namespace

bool is_pytorch_only_name(std::string_view key) noexcept {
  for (const std::string_view name : {kInProjWeight, kInProjBias})
    if (key == name || (key.size() > name.size() && key.ends_with(name) && key[key.size() - name.size() - 1] == '.'))
      return true;
  return false;
}

void from_pytorch_names(std::map<std::string, NamedTensor>& tensors, const std::set<std::string>& module_paths,
                        const std::string& where) {
  std::vector<std::string> names;
  for (const auto& [name, _] : tensors)
    if (!module_paths.contains(name)) names.push_back(name);
  for (const std::string& name : names) {
    auto parts = split_path(name);
    const std::string last = parts.back();
    for (auto& part : parts)
      for (const auto& [torch, burn] : kComponents)
        if (part == torch) part = burn;
    const std::string prefix = join(parts, parts.size() - 1);

    if (last == kInProjWeight || last == kInProjBias) {
      const std::string_view field = last == kInProjWeight ? "weight" : "bias";
      std::array<std::string, 3> targets;
      bool all = true;
      for (std::size_t k = 0; k < 3; ++k) {
        targets[k] = with_prefix(prefix, fmt::format("{}.{}", kProjections[k], field));
        all = all && module_paths.contains(targets[k]);
      }
      if (!all) continue;  // reported as unexpected, with the module's missing keys
      NamedTensor fused = std::move(tensors.at(name));
      tensors.erase(name);
      const Shape& shape = fused.data.shape();
      if (shape.rank() == 0 || shape.dims()[0] % 3 != 0)
        throw Error(kLoadOp, fmt::format("{}'{}' has shape {}, but a fused query/key/value projection has a first "
                                         "dim divisible by 3 ([3 d_model, d_model] or [3 d_model])",
                                         where, fused.file_key, shape.to_string()));
      for (std::size_t k = 0; k < 3; ++k)
        insert_new(tensors, targets[k], NamedTensor{fused.file_key, targets[k], rows(fused.data, k, 3)}, where);
      continue;
    }
    const std::string target = join(parts, parts.size());
    if (target == name || !module_paths.contains(target)) continue;
    NamedTensor moved = std::move(tensors.at(name));
    tensors.erase(name);
    moved.id_key = target;
    insert_new(tensors, target, std::move(moved), where);
  }
}

std::map<std::string, TensorData> to_pytorch_names(std::map<std::string, TensorData> tensors,
                                                   const std::string& where) {
  // Attention layers: a prefix with query, key, value and output weights.
  std::vector<std::string> attention;
  for (const auto& [name, _] : tensors) {
    constexpr std::string_view marker = "query.weight";
    if (name != marker && !name.ends_with(".query.weight")) continue;
    const std::string prefix = name.substr(0, name.size() - marker.size());  // "" or ending in '.'
    bool complete = true;
    for (const std::string_view part : {"key.weight", "value.weight", "output.weight"})
      complete = complete && tensors.contains(prefix + std::string(part));
    if (complete) attention.push_back(prefix);
  }
  for (const std::string& prefix : attention) {
    for (const std::string_view field : {"weight", "bias"}) {
      std::vector<const TensorData*> parts;
      for (const auto projection : kProjections) {
        const auto it = tensors.find(fmt::format("{}{}.{}", prefix, projection, field));
        if (it != tensors.end()) parts.push_back(&it->second);
      }
      if (parts.empty()) continue;  // projections without bias
      if (parts.size() != 3)
        throw Error(kSaveOp, fmt::format("{}the attention layer '{}' has a {} on some of its query/key/value "
                                         "projections only, which PyTorch's fused in_proj_{} cannot hold",
                                         where, prefix, field, field));
      for (const auto* p : parts)
        if (p->shape() != parts.front()->shape() || p->dtype() != parts.front()->dtype())
          throw Error(kSaveOp, fmt::format("{}the query/key/value {}s of '{}' differ in shape or dtype, so they "
                                           "cannot be fused into PyTorch's in_proj_{}",
                                           where, field, prefix, field));
      TensorData fused = stack_rows(parts);
      for (const auto projection : kProjections) tensors.erase(fmt::format("{}{}.{}", prefix, projection, field));
      tensors.emplace(fmt::format("{}in_proj_{}", prefix, field), std::move(fused));
    }
  }
  // An encoder layer: an attention layer called "mha" beside the
  // feed-forward block and both norms.
  std::vector<std::string> encoder_layers;
  for (const std::string& prefix : attention) {
    if (prefix != "mha." && !prefix.ends_with(".mha.")) continue;
    const std::string layer = prefix.substr(0, prefix.size() - 4);
    bool complete = true;
    for (const std::string_view part :
         {"pwff.linear_inner.weight", "pwff.linear_outer.weight", "norm_1.weight", "norm_2.weight"})
      complete = complete && tensors.contains(layer + std::string(part));
    if (complete) encoder_layers.push_back(layer);
  }
  std::map<std::string, TensorData> out;
  for (auto& [name, data] : tensors) {
    std::string renamed = name;
    for (const std::string& prefix : attention)
      if (renamed.starts_with(prefix + "output."))
        renamed =
            fmt::format("{}out_proj.{}", prefix, renamed.substr(prefix.size() + std::string_view("output.").size()));
    for (const std::string& layer : encoder_layers) {
      if (!renamed.starts_with(layer)) continue;
      const std::string_view rest = std::string_view(renamed).substr(layer.size());
      for (const auto& [torch, burn] : kEncoderParts)
        if (rest.starts_with(burn) && rest.size() > burn.size() && rest[burn.size()] == '.') {
          renamed = layer + std::string(torch) + std::string(rest.substr(burn.size()));
          break;
        }
    }
    out.emplace(std::move(renamed), std::move(data));
  }
  return out;
}

}  // namespace burn::record::detail
