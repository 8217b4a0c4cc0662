// save_safetensors never leaves a half-written file or a temporary behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include <burn/record/safetensors.hpp>

#include "record_test_util.hpp"

namespace burn::record {
namespace {

using test::expect_error;
using test::read_bytes;
using test::TempDir;

std::map<std::string, TensorData> small() { return {{"w", TensorData(std::vector<float>{1, 2, 3})}}; }
std::map<std::string, TensorData> big() { return {{"w", TensorData(std::vector<float>(1 << 18, 0.5f))}}; }

TEST(SafetensorsAtomicWrite, SuccessLeavesOnlyTheTarget) {
  TempDir dir;
  save_safetensors(dir / "m.safetensors", small());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.safetensors"});
  save_safetensors(dir / "m.safetensors", big());  // overwrite
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.safetensors"});
  EXPECT_EQ(load_safetensors(dir / "m.safetensors").tensors, big());
}

TEST(SafetensorsAtomicWrite, RelativePathInTheWorkingDirectory) {
  TempDir dir;
  const auto old_cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  save_safetensors("rel.safetensors", small());
  std::filesystem::current_path(old_cwd);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"rel.safetensors"});
}

TEST(SafetensorsAtomicWrite, FailureMidWriteKeepsTheOriginalFile) {
  // A file-size limit makes write() fail part-way through the temporary
  // file (this works for root too, unlike permission bits).
  TempDir dir;
  const auto path = dir / "m.safetensors";
  save_safetensors(path, small());
  const auto original = read_bytes(path);

  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit = old_limit;
  limit.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  bool threw = false;
  std::string message;
  try {
    save_safetensors(path, big());
  } catch (const burn::Error& e) {
    threw = true;
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  ASSERT_TRUE(threw);
  EXPECT_NE(message.find("[save_safetensors] " + path.string() + ": writing the temporary file"), std::string::npos)
      << message;
  EXPECT_EQ(read_bytes(path), original);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.safetensors"});
}

TEST(SafetensorsAtomicWrite, UnwritableDirectoryKeepsTheOriginalFile) {
  TempDir dir;
  const auto sub = dir / "ro";
  std::filesystem::create_directory(sub);
  const auto path = sub / "m.safetensors";
  save_safetensors(path, small());
  const auto original = read_bytes(path);
  std::filesystem::permissions(sub, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  if (::access(sub.c_str(), W_OK) == 0) {
    // Root ignores permission bits; the mid-write failure test above covers
    // the same guarantee for root.
    std::cout << "[   NOTE   ] running as root: a read-only directory is still writable; "
                 "FailureMidWriteKeepsTheOriginalFile covers this case\n";
  } else {
    expect_error([&] { save_safetensors(path, big()); },
                 {"[save_safetensors] " + path.string() + ": ", "cannot create a temporary file", "Permission denied"});
    EXPECT_EQ(read_bytes(path), original);
  }
  std::filesystem::permissions(sub, std::filesystem::perms::owner_all);
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(sub)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"m.safetensors"});
}

TEST(SafetensorsAtomicWrite, MissingDirectoryIsAnError) {
  TempDir dir;
  const auto path = dir / "no" / "such" / "m.safetensors";
  expect_error([&] { save_safetensors(path, small()); },
               {"[save_safetensors] " + path.string() + ": ", "cannot create a temporary file", "No such file"});
  EXPECT_TRUE(dir.entries().empty());
}

TEST(SafetensorsAtomicWrite, DestinationThatIsADirectory) {
  TempDir dir;
  std::filesystem::create_directory(dir / "taken");
  std::filesystem::create_directory(dir / "taken" / "child");  // a non-empty dir cannot be replaced
  expect_error([&] { save_safetensors(dir / "taken", small()); }, {"cannot rename the temporary file"});
  EXPECT_TRUE(std::filesystem::is_directory(dir / "taken" / "child"));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken"});
  expect_error([&] { save_safetensors(dir.path() / "", small()); }, {"names a directory"});
}

TEST(SafetensorsAtomicWrite, BadInputNeverTouchesTheFile) {
  TempDir dir;
  const auto path = dir / "m.safetensors";
  save_safetensors(path, small());
  const auto original = read_bytes(path);
  expect_error(
      [&] {
        save_safetensors(path, {{"__metadata__", TensorData(std::vector<float>{1})}});
      },
      {"[save_safetensors] " + path.string() + ": ", "__metadata__"});
  EXPECT_EQ(read_bytes(path), original);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.safetensors"});
}

TEST(SafetensorsAtomicWrite, ConcurrentWritersNeverInterleave) {
  // Each writer has its own temporary file, so the result is one whole file.
  TempDir dir;
  const auto path = dir / "m.safetensors";
  std::vector<std::map<std::string, TensorData>> versions;
  for (int i = 0; i < 4; ++i) versions.push_back({{"w", TensorData(std::vector<float>(1000 + i, float(i)))}});
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 5; ++k) save_safetensors(path, versions[i]);
    });
  for (auto& t : threads) t.join();
  const auto loaded = load_safetensors(path).tensors;
  EXPECT_NE(std::find(versions.begin(), versions.end(), loaded), versions.end());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.safetensors"});
}

}  // namespace
}  // namespace burn::record
