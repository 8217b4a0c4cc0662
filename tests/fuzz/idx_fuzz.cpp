// Fuzzes the IDX reader on bytes (plain or gzip): any input is read or
// rejected with burn::Error, and what is read matches its own dimensions.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include <burn/data/idx.hpp>
#include <burn/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const burn::data::IdxArray a = burn::data::detail::parse_idx(std::span<const std::uint8_t>(data, size), "fuzz");
    if (a.dims.empty() || a.num_elements() != a.data.size()) std::abort();
  } catch (const burn::Error&) {
  }
  return 0;
}
