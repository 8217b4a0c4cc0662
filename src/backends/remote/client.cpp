#include "backends/remote/client.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "core/huge_pages.hpp"

namespace burn::remote {

ClientSession::ClientSession(std::string address, std::shared_ptr<Channel> channel)
    : address_(std::move(address)), channel_(std::move(channel)) {}

ClientSession::~ClientSession() {
  // Whatever was queued still runs (the server frees the session's tensors
  // when the connection closes, so pending drops need not be sent).
  try {
    std::lock_guard lock(mutex_);
    flush_locked();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a lost connection has nothing left to flush
  }
  channel_->close();
}

std::shared_ptr<ClientSession> ClientSession::open(const ConnectOptions& options, ServerWelcome& welcome) {
  auto refuse = [&](const std::string& why) {
    return DeviceError(DeviceErrorKind::NotAvailable, "Device::remote",
                       fmt::format("burn-server at {}: {}", options.address, why));
  };
  std::shared_ptr<Channel> channel;
  try {
    channel = Channel::connect(options.address, options.timeout, kMaxMessageBytes, options.tls);
  } catch (const std::exception& e) {
    const std::string_view why = e.what();
    // Nothing answered: the likely cause is a server not started.
    if (why.starts_with("cannot connect") || why.starts_with("no answer"))
      throw refuse(fmt::format("{} (is burn-server running there? start it with: burn-server --listen {})", why,
                               options.address));
    throw refuse(std::string(why));
  }
  auto session = std::shared_ptr<ClientSession>(new ClientSession(options.address, channel));
  channel->start(
      [inbox = session->inbox_](Message message) {
        {
          std::lock_guard lock(inbox->mutex);
          inbox->messages.push_back(std::move(message));
        }
        inbox->cv.notify_all();
      },
      [inbox = session->inbox_](const std::string& reason) {
        {
          std::lock_guard lock(inbox->mutex);
          inbox->lost = reason;
        }
        inbox->cv.notify_all();
      });

  Writer hello(MessageKind::Hello);
  hello.str(kMagic);
  hello.u32(kProtocolVersion);
  hello.str(options.token);
  hello.u8(static_cast<std::uint8_t>(options.selection));
  hello.str(options.device_name);
  hello.u32(options.device_index);
  channel->send(std::move(hello).take());

  Message answer;
  try {
    answer = session->receive("Device::remote");
  } catch (const Error& e) {
    throw refuse(e.what());
  }
  try {
    Reader r(answer);
    if (r.kind() == MessageKind::Refused) throw refuse(fmt::format("refused the connection: {}", r.str()));
    if (r.kind() != MessageKind::Welcome) throw ProtocolError("the server's first answer is not a Welcome");
    const auto version = r.u32();
    if (version != kProtocolVersion)
      throw refuse(fmt::format("speaks remote protocol version {}, this client version {}; use matching builds",
                               version, kProtocolVersion));
    welcome.server = r.str();
    welcome.devices.resize(r.count(16));
    for (auto& d : welcome.devices) d = read_device_info(r);
    const auto chosen = r.u32();
    if (chosen != kNoDevice) {
      if (chosen >= welcome.devices.size()) throw ProtocolError("the Welcome names a device it does not list");
      welcome.chosen = chosen;
    }
    r.expect_end();
  } catch (const ProtocolError& e) {
    throw refuse(fmt::format("answered outside the protocol ({}); is that a burn-server?", e.what()));
  }
  return session;
}

// ---- the connection -------------------------------------------------------------------------------

Message ClientSession::receive(std::string_view op) {
  auto& inbox = *inbox_;
  std::unique_lock lock(inbox.mutex);
  // No deadline of its own: the channel pings the server while waiting, and
  // ends the connection when the server stops answering (options.timeout).
  inbox.cv.wait(lock, [&] { return !inbox.messages.empty() || inbox.lost; });
  if (inbox.messages.empty())
    throw ExecutionError(op, fmt::format("the connection to burn-server at {} was lost: {}", address_, *inbox.lost));
  auto message = std::move(inbox.messages.front());
  inbox.messages.pop_front();
  return message;
}

bool ClientSession::lost() const {
  std::lock_guard lock(inbox_->mutex);
  return inbox_->lost.has_value();
}

void ClientSession::check_alive_locked(std::string_view op) {
  std::lock_guard lock(inbox_->mutex);
  if (inbox_->lost)
    throw ExecutionError(op, fmt::format("the connection to burn-server at {} was lost: {}", address_, *inbox_->lost));
}

void ClientSession::throw_status(Reader& status) {
  if (status.kind() != MessageKind::Status) throw ProtocolError("expected a Status answer");
  if (status.u8() == 1) return;
  const std::string op = status.str();
  const std::string message = status.str();
  // The server's own error, with its op name: "[matmul] ..." as on a local device.
  throw ExecutionError(op, message);
}

// ---- the batch ------------------------------------------------------------------------------------

void ClientSession::flush_locked() {
  {
    std::lock_guard lock(drops_mutex_);
    for (const auto& [kind, id] : drops_) {
      batch_.u8(static_cast<std::uint8_t>(kind));
      batch_.u64(id);
      ++batch_count_;
    }
    drops_.clear();
  }
  if (batch_count_ == 0) return;
  Writer message(MessageKind::Batch);
  message.u32(batch_count_);
  message.bytes(batch_.view());
  batch_.clear();
  batch_count_ = 0;
  channel_->send(std::move(message).take());
}

void ClientSession::maybe_flush_locked() {
  if (batch_count_ >= kBatchOps || batch_.size() >= kBatchBytes) flush_locked();
}

void ClientSession::execute(const ir::Op& op, std::span<const std::uint64_t> inputs,
                            std::span<const std::uint64_t> output_ids, std::span<const ir::TensorSpec> outputs) {
  std::lock_guard lock(mutex_);
  check_alive_locked(ir::op_name(op));
  batch_.u8(static_cast<std::uint8_t>(CommandKind::Execute));
  write_op(batch_, op);
  batch_.u32(static_cast<std::uint32_t>(inputs.size()));
  for (auto id : inputs) batch_.u64(id);
  batch_.u32(static_cast<std::uint32_t>(outputs.size()));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    batch_.u64(output_ids[i]);
    write_spec(batch_, outputs[i]);
  }
  ++batch_count_;
  maybe_flush_locked();
}

void ClientSession::drop(std::uint64_t id) noexcept {
  try {
    std::lock_guard lock(drops_mutex_);
    drops_.emplace_back(CommandKind::Drop, id);
  } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: the server frees it with the session
  }
}

void ClientSession::drop_program(std::uint64_t id) noexcept {
  try {
    std::lock_guard lock(drops_mutex_);
    drops_.emplace_back(CommandKind::DropProgram, id);
  } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: the server frees it with the session
  }
}

void ClientSession::define_program(std::uint64_t id, std::span<const std::byte> encoded) {
  std::lock_guard lock(mutex_);
  check_alive_locked("trace");
  batch_.u8(static_cast<std::uint8_t>(CommandKind::DefineProgram));
  batch_.u64(id);
  batch_.bytes(encoded);
  ++batch_count_;
  flush_locked();  // a program is a message's worth of commands on its own
}

void ClientSession::run_program(std::uint64_t id, std::span<const std::uint64_t> inputs,
                                std::span<const std::uint64_t> result_ids) {
  std::lock_guard lock(mutex_);
  check_alive_locked("trace");
  batch_.u8(static_cast<std::uint8_t>(CommandKind::RunProgram));
  batch_.u64(id);
  batch_.u32(static_cast<std::uint32_t>(inputs.size()));
  for (auto in : inputs) batch_.u64(in);
  batch_.u32(static_cast<std::uint32_t>(result_ids.size()));
  for (auto r : result_ids) batch_.u64(r);
  ++batch_count_;
  maybe_flush_locked();
}

void ClientSession::seed(std::uint64_t seed) {
  std::lock_guard lock(mutex_);
  check_alive_locked("Device::seed");
  batch_.u8(static_cast<std::uint8_t>(CommandKind::Seed));
  batch_.u64(seed);
  ++batch_count_;
  maybe_flush_locked();
}

void ClientSession::set_persistent(bool on) {
  std::lock_guard lock(mutex_);
  check_alive_locked("Device::memory_persistent_allocations");
  batch_.u8(static_cast<std::uint8_t>(CommandKind::SetPersistent));
  batch_.u8(on ? 1 : 0);
  ++batch_count_;
  maybe_flush_locked();
}

void ClientSession::cleanup() {
  std::lock_guard lock(mutex_);
  check_alive_locked("Device::memory_cleanup");
  batch_.u8(static_cast<std::uint8_t>(CommandKind::Cleanup));
  ++batch_count_;
  flush_locked();
}

void ClientSession::upload(std::uint64_t id, const std::shared_ptr<const TensorData>& data) {
  std::lock_guard lock(mutex_);
  check_alive_locked("from_data");
  flush_locked();  // the upload follows the ops queued before it
  const auto bytes = data->bytes();
  Writer header(MessageKind::Upload);
  header.u64(id);
  write_spec(header, {data->shape(), data->dtype()});
  header.u64(bytes.size());
  channel_->send(std::move(header).take());
  if (bytes.size() <= kChunkBytes) {
    // One chunk, nothing to overlap: written from the caller's bytes.
    if (!bytes.empty()) channel_->send(Writer(MessageKind::UploadChunk).take(), data, bytes);
    return;
  }
  // Several chunks: this thread copies each into a staging buffer, at most
  // kStagingLookahead ahead of the network thread, which then masks and
  // writes it from memory still in the caches. Written straight from the
  // caller's bytes, the network thread read every byte from main memory
  // itself and alone set the pace, while this thread waited (uploads at
  // 0.55-0.69 of a socket copy's bandwidth, staged 0.77-0.98; bench/README.md).
  for (std::size_t at = 0; at < bytes.size(); at += kChunkBytes) {
    const auto part = bytes.subspan(at, std::min(kChunkBytes, bytes.size() - at));
    auto staging = staging_buffer_locked();
    std::memcpy(staging->bytes.data(), part.data(), part.size());
    const std::span<const std::byte> body(staging->bytes.data(), part.size());
    // The owner the channel drops once the chunk is written frees the buffer.
    std::shared_ptr<const void> owner(
        staging->bytes.data(), [staging](const void*) { staging->in_flight.store(false, std::memory_order_release); });
    channel_->send_within(kStagingLookahead, Writer(MessageKind::UploadChunk).take(), std::move(owner), body);
  }
}

std::shared_ptr<ClientSession::StagingBuffer> ClientSession::staging_buffer_locked() {
  // The lookahead's chunks, the one being written and one being filled.
  constexpr std::size_t kKept = kStagingLookahead / kChunkBytes + 2;
  for (auto& staging : staging_) {
    if (!staging->in_flight.load(std::memory_order_acquire)) {
      staging->in_flight.store(true, std::memory_order_relaxed);
      return staging;
    }
  }
  auto staging = std::make_shared<StagingBuffer>();
  staging->bytes.resize(kChunkBytes);
  staging->in_flight.store(true, std::memory_order_relaxed);
  if (staging_.size() < kKept) staging_.push_back(staging);
  return staging;
}

void ClientSession::flush() {
  std::lock_guard lock(mutex_);
  check_alive_locked("Device::flush");
  flush_locked();
}

// ---- questions -------------------------------------------------------------------------------------

void ClientSession::sync() {
  std::lock_guard lock(mutex_);
  check_alive_locked("Device::sync");
  flush_locked();
  channel_->send(Writer(MessageKind::Sync).take());
  const auto answer = receive("Device::sync");
  try {
    Reader r(answer);
    throw_status(r);
  } catch (const ProtocolError& e) {
    throw ExecutionError("Device::sync",
                         fmt::format("burn-server at {} answered outside the protocol: {}", address_, e.what()));
  }
}

TensorData ClientSession::read(std::uint64_t id, const ir::TensorSpec& spec) {
  std::lock_guard lock(mutex_);
  check_alive_locked("to_data");
  flush_locked();
  Writer question(MessageKind::Read);
  question.u64(id);
  channel_->send(std::move(question).take());
  try {
    const auto status = receive("to_data");
    Reader s(status);
    throw_status(s);
    const auto header = receive("to_data");
    Reader h(header);
    if (h.kind() != MessageKind::DataHeader) throw ProtocolError("expected a DataHeader");
    const ir::TensorSpec got = read_spec(h);
    const std::uint64_t total = h.u64();
    const std::size_t expected = spec.shape.num_elements() * dtype_size(spec.dtype);
    if (!(got == spec) || total != expected)
      throw ProtocolError(fmt::format("the tensor sent back is {} {} ({} bytes), {} {} was asked for",
                                      got.shape.to_string(), dtype_name(got.dtype), total, spec.shape.to_string(),
                                      dtype_name(spec.dtype)));
    std::vector<std::byte> bytes;
    detail::reserve_with_huge_pages(bytes, total);
    while (bytes.size() < total) {
      auto chunk = receive("to_data");
      Reader c(chunk);
      if (c.kind() != MessageKind::DataChunk) throw ProtocolError("expected a DataChunk");
      const auto part = c.rest();
      if (part.size() > total - bytes.size()) throw ProtocolError("more data than announced");
      bytes.insert(bytes.end(), part.begin(), part.end());
      channel_->recycle(std::move(chunk));
    }
    return TensorData(std::move(bytes), spec.shape, spec.dtype);
  } catch (const ProtocolError& e) {
    throw ExecutionError("to_data",
                         fmt::format("burn-server at {} answered outside the protocol: {}", address_, e.what()));
  }
}

// ---- profiling -------------------------------------------------------------------------------------

void ClientSession::profile_open(std::uint64_t window) {
  std::lock_guard lock(mutex_);
  check_alive_locked("Device::profile");
  batch_.u8(static_cast<std::uint8_t>(CommandKind::ProfileOpen));
  batch_.u64(window);
  ++batch_count_;
  maybe_flush_locked();
}

void ClientSession::profile_close(std::uint64_t window) {
  std::lock_guard lock(mutex_);
  check_alive_locked("Device::profile");
  batch_.u8(static_cast<std::uint8_t>(CommandKind::ProfileClose));
  batch_.u64(window);
  ++batch_count_;
  flush_locked();  // the window's work starts now, not at the next batch
}

std::optional<ProfileTicks> ClientSession::profile_result(std::uint64_t window) {
  std::lock_guard lock(mutex_);
  check_alive_locked("Device::profile");
  flush_locked();
  Writer question(MessageKind::ProfileQuery);
  question.u64(window);
  channel_->send(std::move(question).take());
  try {
    const auto status = receive("Device::profile");
    Reader s(status);
    throw_status(s);
    const auto answer = receive("Device::profile");
    Reader r(answer);
    if (r.kind() != MessageKind::ProfileReply) throw ProtocolError("expected a ProfileReply");
    const bool measured = r.u8() != 0;
    const std::uint64_t nanoseconds = r.u64();
    r.expect_end();
    if (!measured) return std::nullopt;
    return ProfileTicks(std::chrono::nanoseconds(static_cast<std::int64_t>(nanoseconds)));
  } catch (const ProtocolError& e) {
    throw ExecutionError("Device::profile",
                         fmt::format("burn-server at {} answered outside the protocol: {}", address_, e.what()));
  }
}

ClientSession::Memory ClientSession::memory() {
  std::lock_guard lock(mutex_);
  check_alive_locked("Device::memory_pool_usage");
  flush_locked();
  channel_->send(Writer(MessageKind::MemoryQuery).take());
  const auto answer = receive("Device::memory_pool_usage");
  try {
    Reader r(answer);
    if (r.kind() != MessageKind::MemoryReply) throw ProtocolError("expected a MemoryReply");
    Memory m;
    if (r.u8()) {
      MemoryPoolUsage u;
      u.number_allocs = r.u64();
      u.bytes_in_use = r.u64();
      u.bytes_padding = r.u64();
      u.bytes_reserved = r.u64();
      m.usage = u;
    }
    if (r.u8()) {
      std::vector<SlicedPoolReport> reports(r.count(32));
      for (auto& p : reports) {
        p.page_size = r.u64();
        p.pages = r.u64();
        p.pages_peak = r.u64();
        p.largest_alloc = r.u64();
      }
      m.reports = std::move(reports);
    }
    r.expect_end();
    return m;
  } catch (const ProtocolError& e) {
    throw ExecutionError("Device::memory_pool_usage",
                         fmt::format("burn-server at {} answered outside the protocol: {}", address_, e.what()));
  }
}

}  // namespace burn::remote
