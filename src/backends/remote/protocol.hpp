// The remote protocol: what a burn client and burn-server say to each other
// over one websocket connection, as binary messages (docs/remote.md has the
// table of messages).
//
// Every message starts with its MessageKind byte; integers are little-endian
// and fixed-width, strings and lists carry a u32 length. The client speaks
// first (Hello); after the server's Welcome, the client sends ops in batches
// and only waits where it needs an answer (Sync, Read, MemoryQuery,
// ProfileQuery). The
// server answers in the order it was asked, so the client matches answers to
// questions by order alone.
//
// Tensors are named by ids the client chooses; the server keeps one table
// per session, so a client can only name its own session's tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <burn/backend/types.hpp>
#include <burn/ir/op.hpp>

#include "dispatch/program.hpp"

namespace burn::remote {

/// Bumped on any change to the messages below; a client and server of
/// different versions refuse each other with both numbers in the message.
inline constexpr std::uint32_t kProtocolVersion = 6;
/// The Hello message's first field, so that a stray connection (an HTTP
/// client, a port scanner) is told apart from an old burn client.
inline constexpr std::string_view kMagic = "burn-remote";
/// Tensor data travels in chunks of this size: no single message grows with
/// the tensor, so no message limit is ever reached by a large one. Chunks of
/// 256 KiB to 4 MiB moved 64 MiB about equally fast on loopback (within this
/// machine's noise); 512 KiB keeps each chunk, and the client's masked copy
/// of it, within a core's L2 cache.
inline constexpr std::size_t kChunkBytes = std::size_t{512} << 10;
/// How far a client's thread may copy an upload's chunks ahead of the
/// network thread writing them: little enough that they are still in the
/// caches when written.
inline constexpr std::size_t kStagingLookahead = std::size_t{2} << 20;
/// The largest message either side accepts. An op batch is flushed well
/// before this (kBatchBytes).
inline constexpr std::size_t kMaxMessageBytes = std::size_t{16} << 20;
/// A client sends its queued ops once they reach this size or kBatchOps.
inline constexpr std::size_t kBatchBytes = std::size_t{1} << 20;
inline constexpr std::size_t kBatchOps = 16;

enum class MessageKind : std::uint8_t {
  // Client -> server.
  Hello = 1,     ///< magic, version, token, DeviceSelection, name, index
  Batch,         ///< u32 count, then that many commands (CommandKind)
  Upload,        ///< id, spec, byte count; the bytes follow in UploadChunk messages
  UploadChunk,   ///< raw bytes
  Sync,          ///< -> Status
  Read,          ///< id -> Status, then (if ok) DataHeader and DataChunk messages
  MemoryQuery,   ///< -> MemoryReply
  ProfileQuery,  ///< window id (closed by a ProfileClose) -> Status, then (if ok) ProfileReply
  // Server -> client.
  Welcome = 64,  ///< version, server name, devices, chosen device (u32, kNoDevice for none)
  Refused,       ///< reason (the server closes the connection after it)
  Status,        ///< ok, or the first error since the last Status: op, message
  DataHeader,    ///< spec, byte count
  DataChunk,     ///< raw bytes
  MemoryReply,   ///< optional usage, optional pool reports
  ProfileReply,  ///< u8 measured, u64 nanoseconds of the server device's time in the window
};

/// How Hello names the device a session computes on.
enum class DeviceSelection : std::uint8_t {
  None = 0,  ///< no device: the client only lists the server's devices
  Default,   ///< the server's first device
  ByName,    ///< "flex:0"
  ByIndex,   ///< the position in the server's device list
};
inline constexpr std::uint32_t kNoDevice = 0xffffffffu;

/// The commands of a Batch. None has an answer: an error is kept by the
/// server and reported by the next Status.
enum class CommandKind : std::uint8_t {
  Execute = 1,    ///< op, input ids, output ids with their specs
  Drop,           ///< id: the client no longer holds this tensor
  Seed,           ///< u64
  SetPersistent,  ///< u8
  Cleanup,        ///< memory cleanup
  ProfileOpen,    ///< window id: opens a profile window on the server device's clock, where its stream is now
  ProfileClose,   ///< window id: closes it there; ProfileQuery reads the measurement
  DefineProgram,  ///< program id, then a recorded program (write_program): kept for RunProgram
  RunProgram,     ///< program id, input ids (one per caller slot), result ids (one per computed result)
  DropProgram,    ///< program id: the client no longer runs it
};
/// Profile windows a session may hold open or closed and not yet queried.
inline constexpr std::size_t kMaxProfileWindows = 1024;

/// Programs (DefineProgram) a session may hold at once.
inline constexpr std::size_t kMaxPrograms = 1024;
/// A DefineProgram's largest encoded program: it travels in one Batch
/// message, which must stay under kMaxMessageBytes. A longer recording runs
/// op by op.
inline constexpr std::size_t kMaxProgramBytes = kMaxMessageBytes / 2;
/// A DefineProgram's most value slots and steps, so that what the server
/// allocates for one stays bounded whatever a message claims (a recorded
/// training step of a large network is a few thousand ops).
inline constexpr std::size_t kMaxProgramSlots = std::size_t{1} << 18;
inline constexpr std::size_t kMaxProgramSteps = std::size_t{1} << 16;

/// A message that does not follow the protocol (truncated, unknown kind,
/// out-of-range field). The receiver drops the connection.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Builds one message (or, default-constructed, a piece of one).
class Writer {
 public:
  Writer() = default;
  explicit Writer(MessageKind kind) { u8(static_cast<std::uint8_t>(kind)); }
  void u8(std::uint8_t v) { buf_.push_back(static_cast<std::byte>(v)); }
  void u32(std::uint32_t v) { put(v); }
  void u64(std::uint64_t v) { put(v); }
  void i64(std::int64_t v) { put(v); }
  void f64(double v) { put(v); }
  void str(std::string_view s);
  void bytes(std::span<const std::byte> b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
  std::size_t size() const noexcept { return buf_.size(); }
  std::span<const std::byte> view() const noexcept { return buf_; }
  void clear() noexcept { buf_.clear(); }
  std::vector<std::byte> take() && { return std::move(buf_); }

 private:
  template <class T>
  void put(T v) {
    const std::size_t at = buf_.size();
    buf_.resize(at + sizeof(T));
    std::memcpy(buf_.data() + at, &v, sizeof(T));
  }
  std::vector<std::byte> buf_;
};

/// Reads one message; every read checks the bounds and throws ProtocolError.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> message);
  MessageKind kind() const noexcept { return kind_; }
  std::uint8_t u8();
  std::uint32_t u32();
  std::uint64_t u64();
  std::int64_t i64();
  double f64();
  std::string str();
  std::span<const std::byte> bytes(std::size_t n);
  std::span<const std::byte> rest();
  /// A list length, checked against what is left (each item takes at least
  /// `min_item_bytes`), so a forged length cannot make the reader allocate.
  std::size_t count(std::size_t min_item_bytes);
  std::size_t remaining() const noexcept { return data_.size() - pos_; }
  /// Throws unless the whole message was read.
  void expect_end() const;

 private:
  template <class T>
  T get();
  std::span<const std::byte> data_;
  std::size_t pos_ = 0;
  MessageKind kind_;
};

/// The kind byte of a message (ProtocolError when empty).
MessageKind message_kind(std::span<const std::byte> message);

void write_dtype(Writer& w, DType d);
DType read_dtype(Reader& r);
void write_spec(Writer& w, const ir::TensorSpec& spec);
ir::TensorSpec read_spec(Reader& r);

/// Every op of the IR, field by field.
void write_op(Writer& w, const ir::Op& op);
ir::Op read_op(Reader& r);

/// A recorded program (burn::trace's, src/dispatch/program.hpp): slot
/// counts, the specs of the caller's slots (`caller_specs`, unset for slots
/// no step reads), each step's op, input slots and output slots with their
/// specs, and the result slots a step computes (the caller has the others).
/// Not its reads (`takes`), which the reader derives (detail::mark_reads).
void write_program(Writer& w, const detail::Program& program,
                   const std::vector<std::optional<ir::TensorSpec>>& caller_specs);
/// Reads what write_program wrote, checking its structure: every slot in
/// range, every input read after it is written (or a caller's slot with its
/// spec), every computed slot written once, every step's input specs those
/// of its slots, every result computed. A malformed program is a
/// ProtocolError; whether its ops infer the outputs it claims is the
/// reader's to check.
detail::Program read_program(Reader& r, std::vector<std::optional<ir::TensorSpec>>& caller_specs);

/// What the client needs to know about one device of the server.
struct DeviceInfo {
  std::string name;  ///< "flex:0"
  std::string description;
  std::string physical_name;
  PhysicalIdentity identity;
  std::uint32_t dtypes = 0;  ///< bit d set: supports_dtype(DType(d))
  DeviceSettings settings;
  bool has_memory_manager = false;
  /// op_support_key of every op the device supports.
  std::vector<std::uint16_t> supported_ops;
};
void write_device_info(Writer& w, const DeviceInfo& info);
DeviceInfo read_device_info(Reader& r);

/// A key for "does the backend support this op": the op's alternative in
/// ir::Op and, for the ops that carry an enum member `op` saying which
/// operation they are, that value. Backends decide support at this granularity.
std::uint16_t op_support_key(const ir::Op& op);
/// One op per key, to ask a backend's supports_op.
std::vector<ir::Op> op_support_probes();

}  // namespace burn::remote
