// The client end of one session with a burn-server: queues ops into
// batches, streams tensor data in chunks, and waits only where an answer is
// needed (sync, reads, memory queries).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <burn/backend/backend.hpp>
#include <burn/tensor_data.hpp>

#include "backends/remote/channel.hpp"
#include "backends/remote/protocol.hpp"

namespace burn::remote {

struct ConnectOptions {
  std::string address;  ///< "host:port"
  std::string token;
  std::chrono::milliseconds timeout{10'000};
  std::optional<ClientTls> tls;  ///< set: connect over TLS
  DeviceSelection selection = DeviceSelection::Default;
  std::string device_name;         ///< ByName
  std::uint32_t device_index = 0;  ///< ByIndex
};

/// What the server said in its Welcome.
struct ServerWelcome {
  std::string server;  ///< the server's own description
  std::vector<DeviceInfo> devices;
  std::optional<std::size_t> chosen;
};

class ClientSession {
 public:
  /// Connects, says Hello and reads the Welcome. Throws DeviceError
  /// (NotAvailable) naming the address when the server cannot be reached or
  /// refuses (wrong token, protocol version, unknown device).
  static std::shared_ptr<ClientSession> open(const ConnectOptions& options, ServerWelcome& welcome);
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  const std::string& address() const noexcept { return address_; }
  /// Whether the connection has ended (the server died, stopped answering
  /// or closed it); every call then throws.
  bool lost() const;
  std::uint64_t new_id() noexcept { return next_id_.fetch_add(1, std::memory_order_relaxed); }

  /// Queues an op. Throws ExecutionError when the connection is already lost.
  void execute(const ir::Op& op, std::span<const std::uint64_t> inputs, std::span<const std::uint64_t> output_ids,
               std::span<const ir::TensorSpec> outputs);
  /// The client no longer holds `id` (any thread, never throws or blocks on the network).
  void drop(std::uint64_t id) noexcept;
  /// Sends a DefineProgram: the program `encoded` by write_program, kept
  /// by the server under `id`. Throws ExecutionError when the connection is
  /// already lost.
  void define_program(std::uint64_t id, std::span<const std::byte> encoded);
  /// Queues a RunProgram: the server runs program `id` on the tensors
  /// `inputs` (one per caller slot) and keeps its computed results under
  /// `result_ids`.
  void run_program(std::uint64_t id, std::span<const std::uint64_t> inputs, std::span<const std::uint64_t> result_ids);
  /// The client no longer runs program `id` (as drop()).
  void drop_program(std::uint64_t id) noexcept;
  void seed(std::uint64_t seed);
  void set_persistent(bool on);
  void cleanup();
  /// Sends the tensor's bytes in chunks after the ops queued before it,
  /// written from `data` itself (kept alive until sent).
  void upload(std::uint64_t id, const std::shared_ptr<const TensorData>& data);

  /// Sends the queued ops.
  void flush();
  /// Waits until the server has run everything sent; throws the first error
  /// the server hit since the last answer (ExecutionError "[op] message").
  void sync();
  TensorData read(std::uint64_t id, const ir::TensorSpec& spec);
  /// Opens (queued, like an op) and closes (sent at once) a profile window
  /// on the server device's clock; profile_result asks for its measurement,
  /// waiting for the server to have run the window's work.
  void profile_open(std::uint64_t window);
  void profile_close(std::uint64_t window);
  std::optional<ProfileTicks> profile_result(std::uint64_t window);
  struct Memory {
    std::optional<MemoryPoolUsage> usage;
    std::optional<std::vector<SlicedPoolReport>> reports;
  };
  Memory memory();

 private:
  ClientSession(std::string address, std::shared_ptr<Channel> channel);

  // Callers hold mutex_.
  void flush_locked();
  void maybe_flush_locked();
  void check_alive_locked(std::string_view op);
  Message receive(std::string_view op);
  void throw_status(Reader& status);

  std::string address_;
  std::shared_ptr<Channel> channel_;
  std::atomic<std::uint64_t> next_id_{1};

  std::mutex mutex_;  // the batch, and one question at a time
  Writer batch_;
  std::uint32_t batch_count_ = 0;

  /// One chunk of a large upload, copied there on the caller's thread (see
  /// upload()); busy until the network thread has written it.
  struct StagingBuffer {
    std::vector<std::byte> bytes;
    std::atomic<bool> in_flight{false};
  };
  /// A staging buffer not in flight (reused where there is one); callers hold mutex_.
  std::shared_ptr<StagingBuffer> staging_buffer_locked();
  std::vector<std::shared_ptr<StagingBuffer>> staging_;  // guarded by mutex_

  std::mutex drops_mutex_;
  /// Drop (a tensor) or DropProgram, with the id.
  std::vector<std::pair<CommandKind, std::uint64_t>> drops_;

  /// What the server sent, filled on the network thread. Shared with the
  /// channel's handlers so that they never hold the session itself (its
  /// destructor must not run on the thread it joins).
  struct Inbox {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<Message> messages;
    std::optional<std::string> lost;
  };
  std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
};

}  // namespace burn::remote
