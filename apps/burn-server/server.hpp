// burn-server: hosts this machine's devices for remote clients.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/remote/channel.hpp"
#include "session.hpp"

namespace burn_server {

struct ServerOptions {
  std::string listen = "127.0.0.1:7878";
  std::string token;                    ///< read from --token-file; empty: none
  std::vector<std::string> devices;     ///< --device (repeatable); empty: every device of the build
  std::uint64_t max_session_bytes = 0;  ///< 0: no limit
  std::chrono::milliseconds idle_timeout{30'000};
  std::optional<burn::remote::ServerTls> tls;  ///< --tls-cert and --tls-key
};

class Server {
 public:
  /// Finds the devices and binds the address; throws std::runtime_error
  /// (unknown device, address in use).
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::uint16_t port() const { return listener_->port(); }
  const std::vector<HostedDevice>& devices() const noexcept { return devices_; }
  /// Serves until stop(); then waits for every session to free its tensors.
  void run();
  /// Thread-safe.
  void stop() { listener_->stop(); }

 private:
  void accept(std::shared_ptr<burn::remote::Channel> channel);

  ServerOptions options_;
  SessionLimits limits_;
  std::vector<HostedDevice> devices_;
  std::mutex mutex_;
  std::list<std::shared_ptr<Session>> sessions_;
  std::uint64_t next_session_ = 1;
  std::unique_ptr<burn::remote::Listener> listener_;
};

/// Whether a listen address reaches only this machine.
bool is_loopback(const std::string& host);

}  // namespace burn_server
