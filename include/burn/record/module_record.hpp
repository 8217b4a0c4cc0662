// Module records: save a module's parameters and running state to a
// safetensors file and load them back into a module of the same structure.
//
//   burn::record::save_module(model, "ckpt/model.safetensors");
//   auto restored = burn::record::load_module(MlpConfig{...}.init(device), "ckpt/model.safetensors");
//
//   // A PyTorch state_dict saved with safetensors.torch.save_file:
//   auto from_torch = burn::record::load_module(model, "torch.safetensors",
//                                               burn::record::LoadOptions{}.with_adapter(burn::record::Adapter::PyTorch));
//
// File layout. Keys are the dotted field paths ("blocks.0.fc.weight"). The
// metadata holds
//   "format"            "burn-cpp" (Burn layout) or "pt" (PyTorch export, what
//                       PyTorch tooling expects),
//   "burn.layout"       "burn" or "pytorch" (which adapter wrote the file, so
//                       loading with the other one is an error instead of a
//                       silently transposed square weight),
//   "burn.record_version" "1",
//   "burn.id.<path>"    each tensor's ParamId (16 hex digits), restored on load
//                       so optimiser state keyed by id still matches,
// plus the caller's own entries (keys "format" and "burn.*" are reserved).
//
// Loading converts each value to the dtype of the parameter it replaces and
// creates it on that parameter's device (with its autodiff context); trainable
// parameters on an autodiff device come back as fresh trainable leaves.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <burn/module/module.hpp>

namespace burn::record {

/// How a file's keys and layouts relate to the module.
///  - Burn: the layout burn-cpp writes (Linear weights [d_input, d_output]).
///  - PyTorch: a torch state_dict's layout: parameters flagged
///    is_pytorch_transposed() (Linear weights) are stored transposed, and
///    BatchNorm's "num_batches_tracked" counters are ignored on load.
enum class Adapter { Burn, PyTorch };

struct SaveOptions {
  Adapter adapter = Adapter::Burn;
  SaveOptions with_adapter(Adapter a) const {
    auto o = *this;
    o.adapter = a;
    return o;
  }
};

struct LoadOptions {
  /// Whether keys in the file that match no module tensor are an error.
  bool strict = true;
  /// Whether module tensors the file lacks are allowed: they keep their
  /// current values (PyTorch's load_state_dict(strict=False) half for
  /// missing keys). load_module_with_report lists them.
  bool partial = false;
  /// The file's layout. Unset: the layout the file declares ("burn.layout"
  /// metadata, or PyTorch's "format": "pt"); for a file that declares none
  /// (safetensors.torch.save_file writes no metadata), the one its
  /// transposable weights' shapes and BatchNorm counters show. When they
  /// cannot tell (every such weight square), loading is refused rather than
  /// guessed: square weights load in either layout, one of them transposed.
  std::optional<Adapter> adapter;
  /// Give the loaded parameters new ids instead of the file's: for loading
  /// one file into two parts of a model, whose parameters must not share ids
  /// (an optimiser keeps its state per id).
  bool fresh_ids = false;
  /// (regex, replacement) pairs applied in order to every file key before
  /// matching, e.g. {"^layers\\.", "blocks."} for a torch model whose
  /// attributes are named differently. Patterns use RE2 syntax
  /// (https://github.com/google/re2/wiki/Syntax: Perl-like, without
  /// backreferences or lookaround), matched in time linear in the key, and
  /// every match in a key is replaced. In a replacement, $1 .. $9 insert a
  /// group, $& the whole match and $$ a "$"; everything else is literal.
  std::vector<std::pair<std::string, std::string>> key_remap;

  LoadOptions with_strict(bool s) const {
    auto o = *this;
    o.strict = s;
    return o;
  }
  LoadOptions with_partial(bool p = true) const {
    auto o = *this;
    o.partial = p;
    return o;
  }
  LoadOptions with_adapter(Adapter a) const {
    auto o = *this;
    o.adapter = a;
    return o;
  }
  LoadOptions with_fresh_ids(bool fresh = true) const {
    auto o = *this;
    o.fresh_ids = fresh;
    return o;
  }
  LoadOptions with_key_remap(std::string pattern, std::string replacement) const {
    auto o = *this;
    o.key_remap.emplace_back(std::move(pattern), std::move(replacement));
    return o;
  }
};

/// What a load left out: module tensors the file lacks (kept as they were,
/// with LoadOptions::with_partial) and file keys no module tensor took
/// (ignored, with with_strict(false)), each sorted.
struct LoadReport {
  std::vector<std::string> missing;
  std::vector<std::string> unexpected;
  bool complete() const noexcept { return missing.empty() && unexpected.empty(); }
};

namespace detail {

/// One module tensor (Param or RunningState) and its dotted path.
struct ConstSlot {
  std::string path;
  const module::ParamBase* tensor;
};
struct Slot {
  std::string path;
  module::ParamBase* tensor;
};

/// The non-template cores behind save_module / load_module.
void save_slots(std::span<const ConstSlot> slots, const std::filesystem::path& path,
                const std::map<std::string, std::string>& metadata, const SaveOptions& options);
/// Validates everything first (so a bad file changes nothing), then replaces
/// each slot's value and id; returns what was left out.
LoadReport load_slots(std::span<const Slot> slots, const std::filesystem::path& path, const LoadOptions& options);

}  // namespace detail

/// Writes every Param and RunningState of `model` to `path` (atomically: an
/// existing file is replaced only once the new one is complete on disk).
/// Throws burn::Error("[save_module] ...") on failure, e.g. for a reserved
/// metadata key or a directory that does not exist.
template <module::Module M>
void save_module(const M& model, const std::filesystem::path& path,
                 const std::map<std::string, std::string>& metadata = {}, const SaveOptions& options = {}) {
  std::vector<detail::ConstSlot> slots;
  module::for_each_tensor(model, [&](const std::string& p, const module::ParamBase& t) { slots.push_back({p, &t}); });
  detail::save_slots(slots, path, metadata, options);
}

/// Returns `model` with every Param and RunningState replaced by the file's
/// values (converted to the tensor's dtype, on its device) and ids restored.
/// Throws burn::Error("[load_module] ...") for an unreadable or corrupt file,
/// missing keys (unless partial), unexpected keys (strict), shape or kind mismatches, or a file
/// written with the other adapter; `model` is never partially updated.
template <module::Module M>
M load_module(M model, const std::filesystem::path& path, const LoadOptions& options = {}) {
  return load_module_with_report(std::move(model), path, options).first;
}

/// load_module, also returning what the load left out: with
/// LoadOptions{}.with_partial().with_strict(false), as PyTorch's
/// load_state_dict(strict=False) returns its missing and unexpected keys.
template <module::Module M>
std::pair<M, LoadReport> load_module_with_report(M model, const std::filesystem::path& path,
                                                 const LoadOptions& options = {}) {
  std::vector<detail::Slot> slots;
  module::detail::FunctionVisitor collect(
      [&](const std::string& p, module::ParamBase& t) {
        slots.push_back({p, &t});
      },
      [&](const std::string& p, module::ParamBase& t) {
        slots.push_back({p, &t});
      });
  module::visit(model, collect);
  LoadReport report = detail::load_slots(slots, path, options);
  return {std::move(model), std::move(report)};
}

}  // namespace burn::record
