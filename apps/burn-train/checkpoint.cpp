#include "checkpoint.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <burn/error.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string_view>
#include <system_error>
#include <vector>
#include <zlib.h>

namespace burn_train {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kIndexName = "checkpoint.json";
// Version 2 added the files' checksums.
constexpr int kFormatVersion = 2;
// A real index is a few kilobytes, nested four levels deep (the history's
// entries). The limits keep a damaged or hostile file from exhausting memory,
// or the stack in nlohmann's recursive dump() and destructor.
constexpr std::size_t kMaxIndexBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxIndexDepth = 32;

[[noreturn]] void fail(const std::string& what) { throw burn::Error("checkpoint", what); }

std::string errno_text() { return std::strerror(errno); }

/// CRC-32 (zlib's) of a file's bytes, as 8 hex digits.
std::string file_crc32(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(fmt::format("cannot open '{}' to check it", path.string()));
  uLong crc = crc32(0L, Z_NULL, 0);
  std::vector<char> chunk(std::size_t{1} << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0)
    crc = crc32(crc, reinterpret_cast<const Bytef*>(chunk.data()), static_cast<uInt>(in.gcount()));
  if (in.bad()) fail(fmt::format("cannot read '{}'", path.string()));
  return fmt::format("{:08x}", crc);
}

}  // namespace

// tmp file in the same directory, fsync, rename, fsync the directory: the
// file is either the old one or the new one, never a torn write.
void write_text_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + fmt::format(".tmp.{}", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(fmt::format("cannot create '{}': {}", tmp.string(), errno_text()));
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string err = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());
      fail(fmt::format("cannot write '{}': {}", tmp.string(), err));
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string err = errno_text();
    ::unlink(tmp.c_str());
    fail(fmt::format("cannot flush '{}' to disk: {}", tmp.string(), err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = errno_text();
    ::unlink(tmp.c_str());
    fail(fmt::format("cannot rename '{}' to '{}': {}", tmp.string(), path.string(), err));
  }
  // Persist the rename; filesystems that cannot fsync a directory still keep the file.
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (const int dfd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

namespace {

// The deepest nesting of arrays and objects in `text`, strings skipped.
std::size_t json_depth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// A JSON value for an error message, cut short.
std::string shown(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  return text;
}

std::map<std::string, std::string> string_map(const json& j, const char* key) {
  std::map<std::string, std::string> out;
  if (!j.contains(key)) return out;
  for (const auto& [k, v] : j.at(key).items()) out[k] = v.get<std::string>();
  return out;
}

}  // namespace

fs::path model_checkpoint_path(const fs::path& dir, std::size_t epochs_done) {
  return dir / fmt::format("model-epoch-{}.safetensors", epochs_done);
}

fs::path optimizer_checkpoint_path(const fs::path& dir, std::size_t epochs_done) {
  return dir / fmt::format("optimizer-epoch-{}.safetensors", epochs_done);
}

void ensure_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(fmt::format("cannot create the checkpoint directory '{}': {}", dir.string(), ec.message()));
  if (!fs::is_directory(dir, ec)) fail(fmt::format("'{}' exists but is not a directory", dir.string()));
}

void commit_checkpoint(const fs::path& dir, const CheckpointInfo& info) {
  json j;
  j["format"] = "burn-train-checkpoint";
  j["version"] = kFormatVersion;
  j["epochs_done"] = info.epochs_done;
  // Relative names keep a checkpoint directory movable.
  j["model"] = info.model_file.filename().string();
  j["optimizer"] = info.optimizer_file.filename().string();
  // Checked on resume: a damaged file is refused, not trained on.
  j["model_crc32"] = file_crc32(info.model_file);
  j["optimizer_crc32"] = file_crc32(info.optimizer_file);
  j["model_config"] = info.model_config;
  j["settings"] = info.settings;
  j["history"] = json::parse(info.history_json);
  write_text_atomically(dir / kIndexName, j.dump(2) + "\n");

  // The new index is durable: epoch files it does not name are garbage now.
  static const std::regex epoch_file(R"((model|optimizer)-epoch-\d+\.safetensors)");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, epoch_file)) continue;
    if (name == info.model_file.filename().string() || name == info.optimizer_file.filename().string()) continue;
    fs::remove(entry.path(), ec);  // best effort: a leftover file is harmless
  }
}

CheckpointInfo read_checkpoint(const fs::path& dir) {
  const fs::path index = dir / kIndexName;
  std::error_code ec;
  if (!fs::exists(index, ec))
    fail(
        fmt::format("no checkpoint to resume from: '{}' does not exist (run once with --checkpoint-dir {} "
                    "without --resume to create one)",
                    index.string(), dir.string()));
  std::ifstream in(index, std::ios::binary);
  if (!in) fail(fmt::format("cannot open '{}'", index.string()));
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= kMaxIndexBytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  if (in.bad()) fail(fmt::format("cannot read '{}'", index.string()));
  if (text.size() > kMaxIndexBytes)
    fail(
        fmt::format("'{}' is larger than {} bytes, far more than a checkpoint index holds; delete the directory "
                    "to start over",
                    index.string(), kMaxIndexBytes));
  if (json_depth(text) > kMaxIndexDepth)
    fail(
        fmt::format("'{}' nests JSON values more than {} levels deep, which no checkpoint index does; delete the "
                    "directory to start over",
                    index.string(), kMaxIndexDepth));
  CheckpointInfo info;
  std::string model_crc, optimizer_crc;
  try {
    const json j = json::parse(text);
    if (!j.is_object() || j.value("format", "") != "burn-train-checkpoint")
      fail(fmt::format("'{}' is not a burn-train checkpoint index", index.string()));
    // Compared as an integer: value("version", 0) would convert any number
    // to int, which for a huge float is undefined behaviour.
    const auto version = j.find("version");
    if (version == j.end() || !version->is_number_integer() || version->get<std::int64_t>() != kFormatVersion)
      fail(fmt::format("'{}' has version {}, this burn-train reads version {}", index.string(),
                       version == j.end() ? "(none)" : shown(*version), kFormatVersion));
    const json& epochs_done = j.at("epochs_done");
    if (!epochs_done.is_number_unsigned() || epochs_done.get<std::uint64_t>() < 1 ||
        epochs_done.get<std::uint64_t>() > kMaxEpochs)
      fail(
          fmt::format("'{}': \"epochs_done\" must be a whole number from 1 to {}, found {}; delete the directory "
                      "to start over",
                      index.string(), kMaxEpochs, shown(epochs_done)));
    info.epochs_done = epochs_done.get<std::size_t>();
    // The files are the ones burn-train names after the epoch, in this
    // directory: a name pointing elsewhere, or at another epoch, is damage.
    info.model_file = model_checkpoint_path(dir, info.epochs_done);
    info.optimizer_file = optimizer_checkpoint_path(dir, info.epochs_done);
    for (const auto& [key, file] : {std::pair{"model", info.model_file}, std::pair{"optimizer", info.optimizer_file}})
      if (j.at(key).get<std::string>() != file.filename().string())
        fail(
            fmt::format("'{}' names {} file '{}' for epoch {}, which burn-train calls '{}'; delete the directory "
                        "to start over",
                        index.string(), key, shown(j.at(key)), info.epochs_done, file.filename().string()));
    model_crc = j.at("model_crc32").get<std::string>();
    optimizer_crc = j.at("optimizer_crc32").get<std::string>();
    info.model_config = string_map(j, "model_config");
    info.settings = string_map(j, "settings");
    info.history_json = j.contains("history") ? j.at("history").dump() : "[]";
  } catch (const json::exception& e) {
    fail(fmt::format("'{}' is malformed ({}); delete the directory to start over", index.string(), e.what()));
  }
  for (const auto& [file, expected] :
       {std::pair{info.model_file, model_crc}, std::pair{info.optimizer_file, optimizer_crc}}) {
    if (!fs::exists(file, ec))
      fail(fmt::format("'{}' names '{}', which does not exist", index.string(), file.string()));
    if (const std::string found = file_crc32(file); found != expected)
      fail(
          fmt::format("'{}' is damaged: its CRC-32 is {}, the checkpoint recorded {}; delete the directory to "
                      "start over",
                      file.string(), found, expected));
  }
  return info;
}

}  // namespace burn_train
