// The state-dict names PyTorch's modules give the tensors of burn's layers,
// where the two differ. burn's layers take Burn's field names; a
// torch.nn.MultiheadAttention stores its query, key and value projections as
// one fused tensor, and nn.TransformerEncoderLayer names its parts otherwise:
//
//   torch (nn.TransformerEncoderLayer)      burn (TransformerEncoderLayer)
//   self_attn.in_proj_weight [3d, d]        mha.query.weight, mha.key.weight, mha.value.weight
//   self_attn.in_proj_bias   [3d]           mha.query.bias, mha.key.bias, mha.value.bias
//   self_attn.out_proj.*                    mha.output.*
//   linear1.*, linear2.*                    pwff.linear_inner.*, pwff.linear_outer.*
//   norm1.*, norm2.*                        norm_1.*, norm_2.*
//
// The PyTorch adapter applies these on load (after the user's key_remap) and
// in reverse on save. On load a name changes only where the module lacks the
// file's name and has the translated one, so a module whose own fields are
// called "norm1" or "linear1" loads as before.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include <burn/tensor_data.hpp>

namespace burn::record::detail {

/// A file tensor under the name the module knows it by.
struct NamedTensor {
  std::string file_key;  ///< as the file spells it, for messages
  std::string id_key;    ///< the key its parameter id is stored under ("burn.id.<id_key>")
  TensorData data;
};

/// Load: renames and splits the entries of `tensors` (keyed by name after
/// key_remap) whose names the module lacks into names it has. Throws
/// burn::Error("[load_module] <where>...") for a fused tensor that cannot be
/// split in three or a translated name that another file key already has.
void from_pytorch_names(std::map<std::string, NamedTensor>& tensors, const std::set<std::string>& module_paths,
                        const std::string& where);

/// Save: the module's tensors (keyed by module path, already in PyTorch's
/// layout) under the names PyTorch's modules give them, with attention
/// projections fused. Throws burn::Error("[save_module] <where>...") when
/// the parts of a fused projection disagree in shape or dtype.
std::map<std::string, TensorData> to_pytorch_names(std::map<std::string, TensorData> tensors, const std::string& where);

/// Whether a key ends in a name only PyTorch's modules write (a fused
/// attention projection): evidence of a PyTorch file when it declares none.
bool is_pytorch_only_name(std::string_view key) noexcept;

}  // namespace burn::record::detail
