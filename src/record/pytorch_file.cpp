// torch.save archives: the zip (through libzip, which checks the directory
// and every entry's CRC), the pickle (pytorch_pickle.cpp) and the storages,
// cut into the tensors that view them.
#include <burn/record/pytorch.hpp>

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <zip.h>

#include <burn/error.hpp>

#include "module_record_detail.hpp"
#include "pytorch_pickle.hpp"
#include "record_file.hpp"
#include "safetensors_internal.hpp"

namespace burn::record {

namespace {

using detail::TorchTensorView;

/// data.pkl of a state dict is a few bytes per tensor; a larger one is not a
/// state dict (and is not read into memory).
constexpr zip_uint64_t kMaxPickleBytes = zip_uint64_t(1) << 30;

std::string zip_error_text(zip_error_t* error) { return zip_error_strerror(error); }

// An open archive and the messages its failures carry.
class Archive {
 public:
  Archive(zip_t* archive, std::uint64_t archive_bytes, std::string_view op, std::string prefix)
      : archive_(archive, &zip_discard), archive_bytes_(archive_bytes), op_(op), prefix_(std::move(prefix)) {}

  Error fail(const std::string& what) const { return Error(op_, prefix_ + what); }
  std::string_view op() const noexcept { return op_; }
  const std::string& prefix() const noexcept { return prefix_; }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    const zip_int64_t n = zip_get_num_entries(archive_.get(), 0);
    for (zip_int64_t i = 0; i < n; ++i)
      if (const char* name = zip_get_name(archive_.get(), static_cast<zip_uint64_t>(i), 0)) out.emplace_back(name);
    return out;
  }

  std::optional<zip_uint64_t> locate(const std::string& name) const {
    const zip_int64_t i = zip_name_locate(archive_.get(), name.c_str(), 0);
    if (i < 0) return std::nullopt;
    return static_cast<zip_uint64_t>(i);
  }

  zip_uint64_t size(zip_uint64_t index, const std::string& name) const {
    zip_stat_t st;
    zip_stat_init(&st);
    constexpr zip_uint64_t needed = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    if (zip_stat_index(archive_.get(), index, 0, &st) != 0 || (st.valid & needed) != needed)
      throw fail(fmt::format("the archive's entry '{}' cannot be read: {}", name,
                             zip_error_text(zip_get_error(archive_.get()))));
    // torch.save stores every entry uncompressed; refusing compressed ones
    // also means no entry can inflate to more memory than the file holds.
    if (st.comp_method != ZIP_CM_STORE)
      throw fail(
          fmt::format("the archive's entry '{}' is compressed, which torch.save never does; load the file in "
                      "PyTorch and save it again with torch.save",
                      name));
    if (st.comp_size != st.size || st.size > archive_bytes_)
      throw fail(
          fmt::format("the archive's entry '{}' declares {} bytes, more than the {}-byte file holds (the file "
                      "is truncated or corrupt)",
                      name, st.size, archive_bytes_));
    return st.size;
  }

  /// The whole entry; libzip checks its CRC once the last byte is read.
  std::vector<std::byte> read(zip_uint64_t index, zip_uint64_t size, const std::string& name) const {
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> file(zip_fopen_index(archive_.get(), index, 0), &zip_fclose);
    if (!file)
      throw fail(fmt::format("the archive's entry '{}' cannot be opened: {}", name,
                             zip_error_text(zip_get_error(archive_.get()))));
    std::vector<std::byte> out(size);
    zip_uint64_t done = 0;
    while (done < size) {
      const zip_int64_t got = zip_fread(file.get(), out.data() + done, size - done);
      if (got < 0)
        throw fail(fmt::format("reading the archive's entry '{}' failed: {} (is the file truncated or corrupt?)", name,
                               zip_error_text(zip_file_get_error(file.get()))));
      if (got == 0) break;
      done += static_cast<zip_uint64_t>(got);
    }
    // A read past the end makes libzip verify the CRC of what it returned.
    std::byte extra{};
    if (done != size || zip_fread(file.get(), &extra, 1) != 0)
      throw fail(
          fmt::format("the archive's entry '{}' is not the {} bytes its directory declares, or fails its "
                      "CRC check (the file is truncated or corrupt)",
                      name, size));
    return out;
  }

 private:
  std::unique_ptr<zip_t, decltype(&zip_discard)> archive_;
  std::uint64_t archive_bytes_;
  std::string_view op_;
  std::string prefix_;
};

Archive open_archive(zip_source_t* source, std::uint64_t archive_bytes, std::string_view op,
                     const std::string& prefix) {
  zip_error_t error;
  zip_error_init(&error);
  zip_t* archive = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (!archive) {
    zip_source_free(source);
    const std::string text = zip_error_text(&error);
    zip_error_fini(&error);
    throw Error(op, fmt::format("{}not a readable zip archive ({}), as torch.save writes; a truncated or corrupt "
                                "file, or not a PyTorch file",
                                prefix, text));
  }
  zip_error_fini(&error);
  return Archive(archive, archive_bytes, op, prefix);
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const Archive& archive, const std::string& what) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) throw archive.fail(what + " overflows 64 bits");
  return out;
}

/// How many bytes the tensors of one file may take beyond their storages'
/// own: views that repeat storage elements (stride 0, as torch's expand()
/// makes) and one storage viewed under many keys could otherwise describe
/// far more memory than the file holds.
constexpr std::uint64_t kMaxExpandedBytes = std::uint64_t(1) << 30;

/// The contiguous row-major copy of a strided view into `storage`. `budget`
/// is what the file's tensors may still take: the bytes of the storages read
/// so far plus kMaxExpandedBytes, less the tensors already built.
TensorData gather(const TorchTensorView& view, std::span<const std::byte> storage, bool swap_bytes,
                  const std::string& key, const Archive& archive, std::uint64_t& budget) {
  const std::size_t elem = dtype_size(view.dtype);
  std::uint64_t count = 1, last = view.offset;
  for (std::size_t d = 0; d < view.sizes.size(); ++d) {
    count = checked_mul(count, view.sizes[d], archive, fmt::format("the element count of '{}'", key));
    if (view.sizes[d] > 0) {
      const std::uint64_t reach =
          checked_mul(view.sizes[d] - 1, view.strides[d], archive, fmt::format("the extent of '{}'", key));
      if (__builtin_add_overflow(last, reach, &last))
        throw archive.fail(fmt::format("the extent of '{}' overflows 64 bits", key));
    }
  }
  std::vector<std::size_t> dims(view.sizes.begin(), view.sizes.end());
  if (count > 0 && last >= view.storage_numel)
    throw archive.fail(
        fmt::format("tensor '{}' (size [{}], stride [{}], offset {}) reaches element {} of its "
                    "storage '{}', which holds {}; the file is corrupt",
                    key, fmt::join(view.sizes, ", "), fmt::join(view.strides, ", "), view.offset, last,
                    view.storage_key, view.storage_numel));
  if (count > budget / elem)
    throw archive.fail(
        fmt::format("tensor '{}' ({} elements) would take the file's tensors more than {} bytes beyond their "
                    "storages: its views repeat storage elements (a stride of 0, as expand() makes) or one "
                    "storage appears under many keys; save such tensors with .contiguous() or .clone()",
                    key, count, kMaxExpandedBytes));
  budget -= count * elem;
  std::vector<std::byte> out(count * elem);
  if (count > 0) {
    // Walk the view in row-major order with an index counter per dim.
    const std::size_t rank = dims.size();
    std::vector<std::uint64_t> index(rank, 0);
    std::uint64_t source = view.offset;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::memcpy(out.data() + i * elem, storage.data() + source * elem, elem);
      for (std::size_t d = rank; d-- > 0;) {
        if (++index[d] < view.sizes[d]) {
          source += view.strides[d];
          break;
        }
        source -= (view.sizes[d] - 1) * view.strides[d];
        index[d] = 0;
      }
    }
  }
  if (swap_bytes && elem > 1)
    for (std::size_t i = 0; i < out.size(); i += elem)
      for (std::size_t a = i, b = i + elem - 1; a < b; ++a, --b) std::swap(out[a], out[b]);
  return TensorData(std::move(out), Shape(dims), view.dtype);
}

PyTorchFile read_archive(const Archive& archive) {
  const auto names = archive.names();
  std::vector<std::string> pickles;
  bool torchscript = false;
  for (const auto& name : names) {
    const auto slash = name.find('/');
    if (slash != std::string::npos && name.substr(slash + 1) == "data.pkl") pickles.push_back(name);
    torchscript = torchscript || (slash != std::string::npos && name.substr(slash + 1) == "constants.pkl");
  }
  if (torchscript)
    throw archive.fail(
        "this is a TorchScript archive (torch.jit.save), which holds code, not a state dict; save the weights with "
        "torch.save(model.state_dict(), path)");
  if (pickles.size() != 1)
    throw archive.fail(
        fmt::format("a zip archive with {} top-level data.pkl entries, where torch.save writes one; "
                    "not a file written by torch.save",
                    pickles.size()));
  const std::string root = pickles.front().substr(0, pickles.front().find('/') + 1);

  bool swap_bytes = false;
  if (const auto order = archive.locate(root + "byteorder")) {
    const auto size = archive.size(*order, root + "byteorder");
    if (size > 16) throw archive.fail("the archive's byteorder entry is not 'little' or 'big'");
    const auto bytes = archive.read(*order, size, root + "byteorder");
    const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (text != "little" && text != "big")
      throw archive.fail(fmt::format("the archive's byteorder entry says '{}', not 'little' or 'big'", text));
    swap_bytes = (text == "big") != (std::endian::native == std::endian::big);
  }

  const auto pickle_index = archive.locate(pickles.front());
  const auto pickle_size = archive.size(*pickle_index, pickles.front());
  if (pickle_size > kMaxPickleBytes)
    throw archive.fail(fmt::format("data.pkl holds {} bytes, more than a state dict's pickle ever needs", pickle_size));
  const auto pickle = archive.read(*pickle_index, pickle_size, pickles.front());
  const auto views = detail::read_torch_pickle(pickle, archive.op(), archive.prefix());

  // Storages are read once each: tensors may share one.
  std::map<std::string, std::vector<std::byte>> storages;
  std::uint64_t budget = kMaxExpandedBytes;
  PyTorchFile out;
  for (const auto& [key, view] : views) {
    auto storage = storages.find(view.storage_key);
    if (storage == storages.end()) {
      const std::string entry = root + "data/" + view.storage_key;
      const auto index = archive.locate(entry);
      if (!index)
        throw archive.fail(
            fmt::format("the storage of '{}' ({}) is missing from the archive; the file is truncated or "
                        "corrupt",
                        key, entry));
      const auto size = archive.size(*index, entry);
      const std::uint64_t declared = checked_mul(view.storage_numel, dtype_size(view.dtype), archive,
                                                 fmt::format("the storage size of '{}'", key));
      if (size != declared)
        throw archive.fail(
            fmt::format("the storage of '{}' ({}) holds {} bytes, but the pickle declares {} elements "
                        "of {} ({} bytes); the file is corrupt",
                        key, entry, size, view.storage_numel, dtype_name(view.dtype), declared));
      storage = storages.emplace(view.storage_key, archive.read(*index, size, entry)).first;
      budget += size;
    } else if (storage->second.size() != view.storage_numel * dtype_size(view.dtype)) {
      throw archive.fail(
          fmt::format("storage '{}' is declared with two different sizes or types (by '{}'); the file "
                      "is corrupt",
                      view.storage_key, key));
    }
    if (!out.tensors.emplace(key, gather(view, storage->second, swap_bytes, key, archive, budget)).second)
      throw archive.fail(fmt::format("the key '{}' appears twice", key));
  }
  return out;
}

}  // namespace

const TensorData& PyTorchFile::tensor(std::string_view name) const {
  return detail::named_tensor(tensors, name, "PyTorchFile::tensor");
}

bool looks_like_pytorch_archive(std::span<const std::byte> first) noexcept {
  return first.size() >= 4 && first[0] == std::byte{'P'} && first[1] == std::byte{'K'} && first[2] == std::byte{3} &&
         first[3] == std::byte{4};
}

namespace {

// The pre-1.6 format starts with a pickled magic number, not a zip header.
void refuse_legacy(std::span<const std::byte> first, std::string_view op, const std::string& prefix) {
  if (!first.empty() && first[0] == std::byte{0x80})
    throw Error(op, prefix +
                        "this is PyTorch's legacy (pre-1.6, not zip) torch.save format, which is not read; load it "
                        "in PyTorch and save it again with torch.save(state_dict, path)");
  if (!looks_like_pytorch_archive(first))
    throw Error(op, prefix +
                        "not a PyTorch file: torch.save writes a zip archive (starting 'PK'), this file starts "
                        "otherwise");
}

}  // namespace

PyTorchFile deserialize_pytorch(std::span<const std::byte> bytes) {
  constexpr std::string_view op = "deserialize_pytorch";
  refuse_legacy(bytes.first(std::min<std::size_t>(bytes.size(), 4)), op, "");
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (!source) {
    const std::string text = zip_error_text(&error);
    zip_error_fini(&error);
    throw Error(op, "cannot read the buffer as a zip archive: " + text);
  }
  zip_error_fini(&error);
  return read_archive(open_archive(source, bytes.size(), op, ""));
}

PyTorchFile load_pytorch(const std::filesystem::path& path) { return detail::read_pytorch_file(path, "load_pytorch"); }

namespace detail {

PyTorchFile read_pytorch_file(const std::filesystem::path& path, std::string_view op) {
  const std::string prefix = path.string() + ": ";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(op, prefix + (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  std::array<std::byte, 4> first{};
  std::size_t got = 0;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(op, prefix + "cannot be opened for reading: " + std::strerror(errno));
    in.read(reinterpret_cast<char*>(first.data()), first.size());
    got = static_cast<std::size_t>(in.gcount());
  }
  refuse_legacy(std::span<const std::byte>(first).first(got), op, prefix);
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_file_create(path.c_str(), 0, -1, &error);  // length -1: to the end
  if (!source) {
    const std::string text = zip_error_text(&error);
    zip_error_fini(&error);
    throw Error(op, prefix + "cannot be opened: " + text);
  }
  zip_error_fini(&error);
  return read_archive(open_archive(source, std::filesystem::file_size(path, ec), op, prefix));
}

SafetensorsFile read_record_file(const std::filesystem::path& path, std::string_view op) {
  std::array<std::byte, 4> first{};
  std::size_t got = 0;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      in.read(reinterpret_cast<char*>(first.data()), first.size());
      got = static_cast<std::size_t>(in.gcount());
    }
  }
  if (!looks_like_pytorch_archive(std::span<const std::byte>(first).first(got))) return read_safetensors_file(path, op);
  SafetensorsFile out;
  out.tensors = read_pytorch_file(path, op).tensors;
  out.metadata.emplace(kFormatKey, kTorchFormat);
  return out;
}

}  // namespace detail

}  // namespace burn::record
