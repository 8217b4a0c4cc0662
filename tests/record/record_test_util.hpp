// Helpers for the record tests: a scratch directory and raw file builders.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <burn/error.hpp>

namespace burn::record::test {

/// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("burn_record_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }
  /// File names in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

inline std::vector<std::byte> to_bytes(std::string_view s) {
  std::vector<std::byte> out(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) out[i] = std::byte(static_cast<unsigned char>(s[i]));
  return out;
}

/// A safetensors file from a raw header text and data buffer (no padding).
inline std::vector<std::byte> raw_file(std::string_view header, std::vector<std::byte> data = {}) {
  std::vector<std::byte> out;
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(std::byte((n >> (8 * i)) & 0xff));
  const auto h = to_bytes(header);
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

inline void write_bytes(const std::filesystem::path& p, const std::vector<std::byte>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "could not write " << p;
}

inline std::vector<std::byte> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) out[i] = std::byte(static_cast<unsigned char>(chars[i]));
  return out;
}

/// Runs f, expecting a burn::Error whose message contains every fragment.
template <class F>
void expect_error(F&& f, std::initializer_list<std::string_view> fragments) {
  try {
    f();
  } catch (const burn::Error& e) {
    const std::string msg = e.what();
    for (auto frag : fragments)
      EXPECT_NE(msg.find(frag), std::string::npos) << "message: " << msg << "\nmissing: " << frag;
    return;
  }
  ADD_FAILURE() << "expected a burn::Error mentioning " << *fragments.begin();
}

}  // namespace burn::record::test
