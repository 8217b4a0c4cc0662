// The transport under the remote protocol: one websocket connection
// (Boost.Beast), plain or over TLS (OpenSSL through Boost.Asio), carrying
// binary messages; used by the client backend and by burn-server alike.
//
// Beast stays inside channel.cpp (its headers cost most of a translation
// unit's compile time); everything else sees these two classes.
//
// Each side always has a read outstanding, which is also where Beast answers
// the other side's pings: a server busy running a long batch still answers,
// so the client tells "slow" from "gone" by the ping timeout alone.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace burn::remote {

/// Splits "host:port" (the port last, so "[::1]:7878" works too); throws
/// std::invalid_argument with a readable reason.
std::pair<std::string, std::string> split_address(const std::string& address);

/// std::allocator, except that growing a vector leaves the new elements
/// uninitialised: a received message's bytes are written by the socket right
/// after they are allocated, and zero-filling them first was one more pass
/// over every byte of an upload.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  UninitializedAllocator() = default;
  template <class U>
  // NOLINTNEXTLINE(google-explicit-constructor): allocators of one family convert implicitly
  UninitializedAllocator(const UninitializedAllocator<U>& /*unused*/) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// One binary message as received.
using Message = std::vector<std::byte, UninitializedAllocator<std::byte>>;

/// A client's TLS settings: the server's certificate must chain to one of
/// these authorities and name the host connected to (DNS name or IP address).
struct ClientTls {
  /// PEM file of trusted certificate authorities; empty: the system's.
  std::string ca_file;
};

/// A server's TLS identity (PEM files).
struct ServerTls {
  std::string cert_file;  ///< the certificate chain, the server's own first
  std::string key_file;   ///< its private key (unencrypted)
};

/// One connection. Handlers run on the connection's network thread, one at a
/// time; they must not block.
class Channel {
 public:
  using MessageHandler = std::function<void(Message)>;
  /// Called once, when the connection ends for any reason (a readable reason).
  using CloseHandler = std::function<void(const std::string& reason)>;

  /// Client side: connects to "host:port" and completes the websocket
  /// handshake within `timeout`; afterwards the connection counts as lost
  /// when the server has not been heard from (not even a pong) for `timeout`.
  /// With `tls`, the TLS handshake (and the server's certificate check) comes
  /// first. Throws std::runtime_error with the reason. The channel runs its
  /// own network thread.
  static std::shared_ptr<Channel> connect(const std::string& address, std::chrono::milliseconds timeout,
                                          std::size_t max_message_bytes, const std::optional<ClientTls>& tls);

  ~Channel();  // NOLINT(bugprone-exception-escape): only allocation or join failures; terminating is right then
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  /// Starts delivering messages. Call once, before any message can be lost
  /// (messages that arrive earlier wait).
  void start(MessageHandler on_message, CloseHandler on_close);
  /// Queues a message; thread-safe. Blocks while more than a bounded number
  /// of bytes wait to be written (a large upload does not copy itself into
  /// memory all at once). Does nothing once the connection is closed.
  void send(std::vector<std::byte> message);
  /// Queues one message made of `head` followed by `body`, written from where
  /// `body` lies (tensor data is not copied into a message first); `owner`
  /// keeps it alive until written.
  void send(std::vector<std::byte> head, std::shared_ptr<const void> owner, std::span<const std::byte> body);
  /// As send(), but waits while `max_queued` bytes or more are queued (a
  /// sender that wants to stay only a little ahead of the network).
  void send_within(std::size_t max_queued, std::vector<std::byte> head, std::shared_ptr<const void> owner,
                   std::span<const std::byte> body);
  /// Closes the connection gracefully (the peer sees a normal close);
  /// thread-safe, returns at once.
  void close();
  /// Hands a delivered message back once its owner is done with it
  /// (thread-safe): the next message is read into its memory. Tensor data
  /// arrives as a stream of same-sized chunks, and a fresh buffer for each
  /// one had its pages faulted in again every time.
  void recycle(Message message);
  /// Stops reading while `paused` (a server whose session has too much queued
  /// work applies back-pressure this way).
  void pause_reading(bool paused);
  bool is_open() const;
  /// "127.0.0.1:51234": the peer's address.
  std::string peer() const;

  struct Impl;  // the stream-independent part; a subclass per stream type
  struct OwnedLoop;
  Channel(std::shared_ptr<Impl> impl, std::unique_ptr<OwnedLoop> loop);

 private:
  std::shared_ptr<Impl> impl_;
  /// The client's own network thread (a server's channels share the listener's).
  std::unique_ptr<OwnedLoop> loop_;
};

/// Server side: accepts websocket connections on one address.
class Listener {
 public:
  struct Options {
    std::size_t max_message_bytes = 0;
    /// A client not heard from (not even a pong) for this long is dropped.
    std::chrono::milliseconds idle_timeout{30'000};
    /// A connection that does not complete the websocket handshake in time is dropped.
    std::chrono::milliseconds handshake_timeout{10'000};
    /// Set: every connection is TLS, and a client speaking plain websocket
    /// is dropped at its first bytes.
    std::optional<ServerTls> tls;
  };
  using AcceptHandler = std::function<void(std::shared_ptr<Channel>)>;
  using ErrorHandler = std::function<void(const std::string& peer, const std::string& reason)>;

  /// Binds "host:port" (port 0: an ephemeral port, see port()); throws
  /// std::runtime_error when the address cannot be bound or the TLS
  /// certificate and key cannot be loaded.
  Listener(const std::string& address, Options options, AcceptHandler on_accept, ErrorHandler on_error);
  ~Listener();  // NOLINT(bugprone-exception-escape): as ~Channel
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  std::uint16_t port() const;
  /// Serves on the calling thread until stop().
  void run();
  /// Stops accepting and closes every connection; thread-safe.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace burn::remote
