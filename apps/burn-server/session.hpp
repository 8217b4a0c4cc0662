// One client's session: its connection, its tensors (the handle table) and
// the worker thread that runs its messages in order.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <burn/backend/backend.hpp>
#include <burn/burn.hpp>

#include "backends/remote/channel.hpp"
#include "backends/remote/protocol.hpp"

namespace burn_server {

/// A device the server hosts, with the description clients receive.
struct HostedDevice {
  burn::Device device;
  burn::remote::DeviceInfo info;
};

struct SessionLimits {
  std::string token;                    ///< empty: none required
  std::uint64_t max_session_bytes = 0;  ///< tensor bytes one session may hold; 0: no limit
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::uint64_t id, std::shared_ptr<burn::remote::Channel> channel, const std::vector<HostedDevice>& devices,
          const SessionLimits& limits);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Starts receiving and the worker thread.
  void start();
  /// True once the connection is over and the worker has freed everything.
  bool finished() const noexcept { return finished_; }
  /// Joins the worker (after finished(), or after the connection was closed).
  void join();

 private:
  struct Tensor {
    burn::backend::PrimitivePtr primitive;
    burn::ir::TensorSpec spec;
    std::uint64_t bytes = 0;
  };
  struct PendingUpload {
    std::uint64_t id = 0;
    burn::ir::TensorSpec spec;
    /// Where the chunks go: straight into the new tensor on a device in host
    /// memory (HostAccess), else into `bytes`, handed to from_data at the end.
    burn::backend::PrimitivePtr primitive;
    std::span<std::byte> destination;
    std::vector<std::byte> bytes;
    std::uint64_t expected = 0;  ///< bytes still to come
    bool discard = false;        ///< refused (memory limit, dtype): the chunks are dropped
  };
  struct PendingError {
    std::string op;
    std::string message;
  };
  /// A recorded program the client defined (burn::trace), checked op by op
  /// when defined and compiled by the device's backend where it compiles
  /// programs (the fusion layer does).
  struct Program {
    burn::detail::Program program;
    std::vector<std::optional<burn::ir::TensorSpec>> caller_specs;
    std::vector<burn::ir::TensorSpec> result_specs;
    std::unique_ptr<burn::detail::CompiledProgram> compiled;  ///< null: step by step
  };

  void on_message(burn::remote::Message message);
  void on_close(const std::string& reason);
  void run();
  /// Handles one message; throws ProtocolError to end the connection.
  void handle(const burn::remote::Message& message);
  void hello(burn::remote::Reader& r);
  void batch(burn::remote::Reader& r);
  void execute(burn::remote::Reader& r);
  /// Throws burn::Error unless `op` on `inputs` gives the `claimed` outputs
  /// and the device supports it and their dtypes.
  void check_op(const burn::ir::Op& op, std::span<const burn::ir::TensorSpec> inputs,
                std::span<const burn::ir::TensorSpec> claimed);
  /// The device's backend runs `op`; a wrong number of results is a burn::Error.
  std::vector<burn::backend::PrimitivePtr> run_op(const burn::ir::Op& op, std::span<const burn::backend::Input> inputs,
                                                  std::span<const burn::ir::TensorSpec> outputs);
  void define_program(burn::remote::Reader& r);
  void run_program(burn::remote::Reader& r);
  void upload_begin(burn::remote::Reader& r);
  void upload_chunk(burn::remote::Reader& r);
  void finish_upload();
  void sync();
  void read(burn::remote::Reader& r);
  void memory_query();
  void profile_open(std::uint64_t window);
  void profile_close(std::uint64_t window);
  void profile_query(burn::remote::Reader& r);

  void send(burn::remote::Writer&& w) { channel_->send(std::move(w).take()); }
  void send_status();
  void fail(std::string op, std::string message);
  void store(std::uint64_t id, burn::backend::PrimitivePtr primitive, const burn::ir::TensorSpec& spec);
  void check_memory(std::string_view op, std::uint64_t more) const;
  burn::backend::Backend& backend();

  const std::uint64_t id_;
  std::shared_ptr<burn::remote::Channel> channel_;
  const std::vector<HostedDevice>& devices_;
  const SessionLimits& limits_;
  std::string peer_;

  // The worker's queue (filled on the network thread).
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<burn::remote::Message> queue_;
  std::size_t queued_bytes_ = 0;
  bool paused_ = false;
  std::optional<std::string> closed_;
  std::thread worker_;
  std::atomic<bool> finished_{false};

  // The worker's state.
  const HostedDevice* device_ = nullptr;  // set by Hello
  std::unordered_map<std::uint64_t, Tensor> tensors_;
  std::unordered_set<std::uint64_t> failed_;  // outputs of ops that failed
  // Held by pointer: a compiled program refers to its Program's steps.
  std::unordered_map<std::uint64_t, std::unique_ptr<Program>> programs_;
  std::unordered_set<std::uint64_t> failed_programs_;  // defined, refused (reported); runs poison their results
  std::uint64_t held_bytes_ = 0;
  std::optional<PendingUpload> upload_;
  std::optional<PendingError> error_;
  std::uint64_t ops_run_ = 0;
  // Profile windows by the client's ids: open ones (null when opening failed,
  // reported), and closed ones not yet queried, oldest first.
  std::unordered_map<std::uint64_t, std::unique_ptr<burn::backend::DeviceClockWindow>> open_windows_;
  std::map<std::uint64_t, std::shared_future<std::optional<burn::ProfileTicks>>> closed_windows_;
};

}  // namespace burn_server
