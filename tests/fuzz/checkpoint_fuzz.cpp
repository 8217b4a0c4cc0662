// Fuzzes burn-train's checkpoint index reader (read_checkpoint): the input
// is checkpoint.json in a scratch directory that also holds the two epoch
// files the seed corpus names. Any input is read or rejected with
// burn::Error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <burn/error.hpp>

#include "checkpoint.hpp"

namespace {

const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("burn_fuzz_checkpoint_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    for (const char* name : {"model-epoch-1.safetensors", "optimizer-epoch-1.safetensors"}) std::ofstream(d / name);
    return d;
  }();
  // Registered after `dir` exists, so it runs before `dir` is destroyed.
  [[maybe_unused]] static const bool cleanup = std::atexit([] {
                                                 std::error_code ec;
                                                 std::filesystem::remove_all(scratch(), ec);
                                               }) == 0;
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(scratch() / "checkpoint.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    (void)burn_train::read_checkpoint(scratch());
  } catch (const burn::Error&) {
  }
  return 0;
}
