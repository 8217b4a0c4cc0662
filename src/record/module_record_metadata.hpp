// The parts of load_module that read untrusted strings but no tensors: the
// record metadata (version, layout, parameter ids) and the key_remap rules.
// Kept apart from the module machinery so a fuzz target can link them alone.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <burn/record/module_record.hpp>

namespace burn::record::detail {

/// Throws burn::Error("[load_module] <where>...") unless the metadata's record
/// version is this build's and the layout it declares ("burn.layout", or a
/// PyTorch "format") is the one `adapter` reads.
void check_layout(const std::map<std::string, std::string>& metadata, Adapter adapter, const std::string& where);

/// The parameter id stored for `file_key` ("burn.id.<file_key>", 16 hex
/// digits), if any; throws burn::Error("[load_module] ...") for a corrupt one.
std::optional<std::uint64_t> stored_id(const std::map<std::string, std::string>& metadata, const std::string& file_key,
                                       const std::string& where);

/// Module key -> file key: each file key with the key_remap rules (RE2
/// patterns, see LoadOptions::key_remap) applied in order. Throws
/// burn::Error("[load_module] ...") for an invalid pattern or replacement, or
/// when two file keys become the same module key.
std::map<std::string, std::string> remap_keys(const std::vector<std::string>& file_keys,
                                              const std::vector<std::pair<std::string, std::string>>& rules,
                                              const std::string& where);

}  // namespace burn::record::detail
