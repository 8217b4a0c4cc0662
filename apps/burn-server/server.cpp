#include "server.hpp"

#include <stdexcept>

#include <burn/backend/backend.hpp>

#include "device/runtime.hpp"
#include "log.hpp"

namespace burn_server {
namespace {

burn::remote::DeviceInfo describe(const burn::Device& device) {
  auto& be = device.runtime().backend();
  burn::remote::DeviceInfo info;
  info.name = device.to_string();
  info.description = be.description();
  info.physical_name = be.physical_name();
  info.identity = be.identity();
  for (unsigned d = 0; d <= static_cast<unsigned>(burn::DType::Bool); ++d)
    if (be.supports_dtype(static_cast<burn::DType>(d))) info.dtypes |= 1u << d;
  info.settings = device.settings();
  info.has_memory_manager = be.memory() != nullptr;
  for (const auto& probe : burn::remote::op_support_probes())
    if (be.supports_op(probe)) info.supported_ops.push_back(burn::remote::op_support_key(probe));
  return info;
}

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

Server::Server(ServerOptions options) : options_(std::move(options)) {
  limits_.token = options_.token;
  limits_.max_session_bytes = options_.max_session_bytes;
  if (options_.devices.empty()) {
    for (const auto& d : burn::Device::enumerate(burn::DeviceFilter{}))
      if (d.type().kind() != burn::DeviceType::Kind::Remote) devices_.push_back({d, describe(d)});
  } else {
    for (const auto& name : options_.devices) {
      burn::Device d = burn::Device::parse(name);  // throws burn::DeviceError with the reason
      if (d.type().kind() == burn::DeviceType::Kind::Remote)
        throw std::runtime_error(fmt::format("--device {}: a server cannot host another server's device", name));
      devices_.push_back({d, describe(d)});
    }
  }
  if (devices_.empty()) throw std::runtime_error("this build has no device to host");
  burn::remote::Listener::Options lo;
  lo.max_message_bytes = burn::remote::kMaxMessageBytes;
  lo.idle_timeout = options_.idle_timeout;
  lo.tls = options_.tls;
  listener_ = std::make_unique<burn::remote::Listener>(
      options_.listen, lo, [this](std::shared_ptr<burn::remote::Channel> c) { accept(std::move(c)); },
      [](const std::string& peer, const std::string& reason) {
        log("connection from {}: {}", peer.empty() ? "?" : peer, reason);
      });
}

Server::~Server() {
  stop();
  std::lock_guard lock(mutex_);
  for (auto& s : sessions_) s->join();
}

void Server::accept(std::shared_ptr<burn::remote::Channel> channel) {
  std::lock_guard lock(mutex_);
  // Reap the sessions that have ended.
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if ((*it)->finished()) {
      (*it)->join();
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
  const std::uint64_t id = next_session_++;
  log("session {} ({}): connected", id, channel->peer());
  auto session = std::make_shared<Session>(id, std::move(channel), devices_, limits_);
  session->start();
  sessions_.push_back(std::move(session));
}

void Server::run() {
  listener_->run();
  // The listener closed every connection; each session's worker frees its
  // tensors and ends.
  std::lock_guard lock(mutex_);
  for (auto& s : sessions_) s->join();
  sessions_.clear();
}

}  // namespace burn_server
