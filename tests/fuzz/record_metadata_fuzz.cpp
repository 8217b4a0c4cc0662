// Fuzzes what load_module reads from a file's metadata and keys, and the
// user's key_remap rules: check_layout (record version, layout, format),
// stored_id ("burn.id.*") and remap_keys (RE2 patterns and replacements).
// Any input passes or is rejected with burn::Error.
//
// Input layout (FuzzedDataProvider): a pattern and a replacement, then
// metadata pairs (their count from the last byte), then file keys; each
// string ends at a backslash followed by another character ("\\" is one
// backslash).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "record/module_record_metadata.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace burn::record;
  FuzzedDataProvider in(data, size);
  const std::string pattern = in.ConsumeRandomLengthString(256);
  const std::string replacement = in.ConsumeRandomLengthString(64);
  std::map<std::string, std::string> metadata;
  for (int n = in.ConsumeIntegralInRange(0, 8); n > 0; --n) {
    std::string key = in.ConsumeRandomLengthString(64);
    metadata[std::move(key)] = in.ConsumeRandomLengthString(64);
  }
  std::vector<std::string> keys;
  while (in.remaining_bytes() > 0 && keys.size() < 64) keys.push_back(in.ConsumeRandomLengthString(256));

  for (Adapter adapter : {Adapter::Burn, Adapter::PyTorch}) {
    try {
      detail::check_layout(metadata, adapter, "fuzz: ");
    } catch (const burn::Error&) {
    }
  }
  for (const auto& key : keys) {
    try {
      (void)detail::stored_id(metadata, key, "fuzz: ");
    } catch (const burn::Error&) {
    }
  }
  try {
    const auto remapped = detail::remap_keys(keys, {{pattern, replacement}}, "fuzz: ");
    // Distinct keys in, distinct module keys out, one each.
    if (remapped.size() > keys.size()) std::abort();
  } catch (const burn::Error&) {
  }
  return 0;
}
