// The restricted unpickler behind load_pytorch: reads the data.pkl of a
// torch.save archive without running anything it names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <burn/dtype.hpp>

namespace burn::record::detail {

/// A tensor as the pickle describes it: a strided view into a storage, which
/// the archive holds as the entry "<archive>/data/<storage_key>".
struct TorchTensorView {
  std::string storage_key;
  DType dtype = DType::F32;
  std::uint64_t storage_numel = 0;  ///< elements the storage declares
  std::uint64_t offset = 0;         ///< in elements
  std::vector<std::uint64_t> sizes;
  std::vector<std::uint64_t> strides;  ///< in elements
};

/// The deepest nesting of dicts read into tensor paths (a state dict inside a
/// checkpoint dict is 2 deep); deeper pickles are refused, so hostile input
/// cannot exhaust the stack.
inline constexpr std::size_t kMaxTorchDictDepth = 32;

/// Runs the pickle in `bytes` (protocols 2 to 5) and returns every tensor
/// reachable from the root dict through dicts, keyed by the dotted path of
/// dict keys ("fc.weight", or "model.fc.weight" in a checkpoint dict), in the
/// pickle's order. Values that are not tensors or dicts (an epoch counter, a
/// list) are skipped. Only the objects a state dict is built from may be
/// named: collections.OrderedDict, torch._utils._rebuild_tensor_v2 and
/// _rebuild_parameter, and torch's typed storages (f64, f32, f16, bf16, i64,
/// i32, i16, i8, u8, bool); any other global is refused before anything is
/// built from it. Throws burn::Error(op, prefix + what is wrong).
std::vector<std::pair<std::string, TorchTensorView>> read_torch_pickle(std::span<const std::byte> bytes,
                                                                       std::string_view op, std::string_view prefix);

}  // namespace burn::record::detail
