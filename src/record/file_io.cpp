// Safetensors file reads (header first) and crash-safe writes (temporary
// file, fsync, rename).
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <random>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safetensors_internal.hpp"

namespace burn::record::detail {

namespace {

namespace fs = std::filesystem;

std::string errno_text(int err) { return std::strerror(err); }

// Closes the descriptor and removes the temporary file unless the write
// committed, so every failure path (including exceptions) cleans up.
struct TempFile {
  fs::path path;
  int fd = -1;
  bool committed = false;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!committed && !path.empty()) ::unlink(path.c_str());
  }
};

// A name no other writer (thread or process) picks: pid, a process-wide
// counter and a random word; O_EXCL guards against the rest.
fs::path temp_name(const fs::path& dir, const std::string& base) {
  static std::atomic<unsigned long> counter{0};
  static const unsigned long salt = std::random_device{}();
  const std::string name = "." + base + ".tmp-" + std::to_string(::getpid()) + "-" +
                           std::to_string(counter.fetch_add(1)) + "-" + std::to_string(salt);
  return dir / name;
}

}  // namespace

void write_file_atomically(const fs::path& path, std::span<const std::byte> bytes, std::string_view op) {
  const std::string where = path.string() + ": ";
  const auto fail = [&](const std::string& what) { return Error(op, where + what); };
  const std::string base = path.filename().string();
  if (base.empty() || base == "." || base == "..") throw fail("the path names a directory, not a file");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");

  TempFile tmp;
  for (int attempt = 0; tmp.fd < 0; ++attempt) {
    tmp.path = temp_name(dir, base);
    tmp.fd = ::open(tmp.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (tmp.fd < 0) {
      const int err = errno;
      tmp.path.clear();  // not ours: never unlink it
      if (err != EEXIST || attempt >= 100)
        throw fail("cannot create a temporary file in directory " + dir.string() + ": " + errno_text(err) +
                   " (is the directory there and writable?)");
    }
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(tmp.fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw fail("writing the temporary file " + tmp.path.string() + " failed after " + std::to_string(done) + " of " +
                 std::to_string(bytes.size()) + " bytes: " + errno_text(errno));
    }
    done += static_cast<std::size_t>(w);
  }
  // The data must be on disk before the rename makes it visible, or a crash
  // could leave the new name pointing at an empty or partial file.
  if (::fsync(tmp.fd) != 0) throw fail("fsync of the temporary file failed: " + errno_text(errno));
  const int fd = tmp.fd;
  tmp.fd = -1;
  if (::close(fd) != 0) throw fail("closing the temporary file failed: " + errno_text(errno));
  if (::rename(tmp.path.c_str(), path.c_str()) != 0)
    throw fail("cannot rename the temporary file over the destination: " + errno_text(errno));
  tmp.committed = true;
  // Persist the rename itself. Some filesystems cannot fsync a directory; the
  // file is complete either way, so that is not an error.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    ::close(dir_fd);
  }
}

SafetensorsFile read_safetensors_file(const fs::path& path, std::string_view op) {
  const std::string prefix = path.string() + ": ";
  const auto fail = [&](const std::string& what) { return Error(op, prefix + what); };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) throw fail("no such file");
    throw fail("cannot open the file for reading: " + errno_text(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw fail("cannot stat the file: " + errno_text(errno));
  if (S_ISDIR(st.st_mode)) throw fail("is a directory, not a safetensors file");
  // A regular file's size is known up front; a pipe or a device (which may
  // never end) is read only as far as its header says.
  const std::optional<std::uint64_t> file_size =
      S_ISREG(st.st_mode) ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(st.st_size)) : std::nullopt;

  // Up to `n` more bytes appended to `out`, fewer only at the end of the file.
  const auto read_up_to = [&](std::vector<std::byte>& out, std::uint64_t n) {
    std::byte chunk[1 << 16];
    while (n > 0) {
      const ssize_t r = ::read(fd, chunk, static_cast<std::size_t>(std::min<std::uint64_t>(n, sizeof chunk)));
      if (r < 0) {
        if (errno == EINTR) continue;
        throw fail("reading the file failed: " + errno_text(errno));
      }
      if (r == 0) break;
      out.insert(out.end(), chunk, chunk + r);
      n -= static_cast<std::uint64_t>(r);
    }
  };

  std::vector<std::byte> head;
  read_up_to(head, 8);
  if (head.size() < 8) return parse_safetensors(head, op, prefix);  // names the problem: too short
  const std::uint64_t n = header_length(std::span<const std::byte, 8>(head.data(), 8), file_size, op, prefix);
  std::vector<std::byte> text;
  text.reserve(static_cast<std::size_t>(n));
  read_up_to(text, n);
  if (text.size() < n) (void)header_length(std::span<const std::byte, 8>(head.data(), 8), 8 + text.size(), op, prefix);
  const SafetensorsHeader header =
      parse_safetensors_header({reinterpret_cast<const char*>(text.data()), text.size()}, op, prefix);
  text = {};
  if (file_size) check_data_size(header, *file_size - 8 - n, op, prefix);

  std::vector<std::byte> data;
  if (file_size) data.reserve(static_cast<std::size_t>(header.data_size));
  // One byte more than the header describes tells a stream that goes on.
  read_up_to(data, header.data_size + 1);
  if (data.size() > header.data_size)
    throw fail("trailing garbage: the file holds more than the " + std::to_string(header.data_size) +
               " data bytes its header describes");
  return decode_safetensors(header, data, op, prefix);
}

}  // namespace burn::record::detail
