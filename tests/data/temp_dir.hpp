// Helpers for the data tests: a scratch directory and error-message capture.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <burn/error.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace burn::testing {

/// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("burn_data_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::filesystem::path& p, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "could not write " << p;
}

inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The message of the burn::Error that `f` throws ("" and a test failure if none).
template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const burn::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected burn::Error, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected burn::Error, nothing was thrown";
  return {};
}

/// For EXPECT_CONTAINS: passes when `part` occurs in `text`.
inline ::testing::AssertionResult contains_substring(const char* text_expr, const char* part_expr,
                                                     const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text_expr << " does not contain " << part_expr << "\n  text: " << text
                                       << "\n  part: " << part;
}

}  // namespace burn::testing

#define EXPECT_CONTAINS(text, part) EXPECT_PRED_FORMAT2(::burn::testing::contains_substring, text, part)
