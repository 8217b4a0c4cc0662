// Fuzzes the safetensors parser (burn::record::detail::parse_safetensors):
// any input is parsed or rejected with burn::Error, and whatever parses
// survives a write and a second parse unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "record/safetensors_internal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace burn::record;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  SafetensorsFile file;
  try {
    file = detail::parse_safetensors(bytes, "fuzz", "");
  } catch (const burn::Error&) {
    return 0;
  }
  // The writer refuses nothing the reader accepted, and the reader reads
  // back the same tensors (FP8 comes back as the F32 it decoded to).
  const auto written = detail::build_safetensors(file.tensors, file.metadata, "fuzz", "");
  const SafetensorsFile again = detail::parse_safetensors(written, "fuzz", "");
  if (again.tensors != file.tensors || again.metadata != file.metadata) std::abort();
  return 0;
}
