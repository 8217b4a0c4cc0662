// Boost.Beast websockets, plain or over TLS, under the remote protocol. Every
// Beast call runs on one network thread per io_context (the client's own, or
// the listener's), so no strand is needed; other threads reach a connection
// only through post().
#include "backends/remote/channel.hpp"

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include <boost/asio/buffer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace burn::remote {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

namespace {

/// Bytes a sender may have queued before send() waits for the network.
constexpr std::size_t kMaxQueuedBytes = std::size_t{64} << 20;

std::string describe(const beast::error_code& ec, std::chrono::milliseconds idle_timeout) {
  if (ec == websocket::error::closed) return "the peer closed the connection";
  if (ec == beast::error::timeout)
    return fmt::format("the peer was not heard from (not even an answer to a ping) for {} ms", idle_timeout.count());
  if (ec == websocket::error::message_too_big) return "a message over the size limit arrived";
  if (ec == net::error::eof || ec == net::error::connection_reset || ec == net::error::broken_pipe)
    return fmt::format("the connection was lost ({})", ec.message());
  return ec.message();
}

std::string endpoint_name(const tcp::socket& socket) {
  beast::error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  if (ec) return "?";
  return fmt::format("{}:{}", ep.address().to_string(), ep.port());
}

}  // namespace

std::pair<std::string, std::string> split_address(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    throw std::invalid_argument(
        fmt::format("'{}' is not an address: expected host:port, e.g. 127.0.0.1:7878", address));
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoul(port) > 65535)
    throw std::invalid_argument(
        fmt::format("'{}' is not an address: the port '{}' is not a number from 0 to 65535", address, port));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host, port};
}

// ---- one connection -----------------------------------------------------------------------------

// What a connection is, whatever its stream: the outbox, the flags and the
// owner's handlers. Connection<Next> below adds the websocket stream, plain
// or TLS, and the operations that touch it.
struct Channel::Impl : std::enable_shared_from_this<Channel::Impl> {
  Impl(std::shared_ptr<net::io_context> context, std::chrono::milliseconds idle)
      : ioc(std::move(context)), idle_timeout(idle) {}
  virtual ~Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  std::shared_ptr<net::io_context> ioc;
  std::chrono::milliseconds idle_timeout;
  std::string peer_name;

  /// A message waiting to be written: `head`, then `body` (which `owner`
  /// keeps alive; empty for a message that is all head).
  struct Outgoing {
    std::vector<std::byte> head;
    std::shared_ptr<const void> owner;
    std::span<const std::byte> body;
    std::size_t size() const noexcept { return head.size() + body.size(); }
  };

  // Network thread only.
  std::deque<Outgoing> outbox;
  bool writing = false;
  bool reading = false;
  bool paused = false;
  bool close_requested = false;
  bool closing = false;
  bool started = false;
  std::deque<Message> early;  // arrived before start()
  std::string early_close;    // the connection ended before start()
  MessageHandler on_message;
  CloseHandler on_close;

  // Any thread.
  std::atomic<bool> open{true};
  std::mutex mutex;
  std::condition_variable drained;
  std::size_t queued_bytes = 0;
  /// Delivered messages handed back, read into again (guarded by `mutex`).
  std::vector<Message> spare;

  /// A buffer for the next message: a recycled one where there is one.
  Message take_spare() {
    std::lock_guard lock(mutex);
    if (spare.empty()) return {};
    Message m = std::move(spare.back());
    spare.pop_back();
    m.clear();
    return m;
  }

  // Network thread only; each needs the stream.
  virtual void read() = 0;
  virtual void write() = 0;
  /// A graceful close: the websocket close handshake, after every queued write.
  virtual void close_now() = 0;
  virtual tcp::socket& socket() = 0;

  void deliver(Message message) {
    if (started) on_message(std::move(message));
    else early.push_back(std::move(message));
  }

  // The connection is over (error, close, or shutdown): close the socket, wake
  // blocked senders, tell the owner once.
  void fail(const std::string& reason) {
    if (!open.exchange(false)) return;
    beast::error_code ignored;
    socket().shutdown(tcp::socket::shutdown_both, ignored);
    socket().close(ignored);
    drained.notify_all();
    if (started) {
      if (on_close) on_close(reason);
    } else {
      early_close = reason;
    }
  }
};

namespace {

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

template <class Next>
struct Connection final : Channel::Impl {
  static constexpr bool kTls = std::is_same_v<Next, TlsStream>;

  // Plain: from an accepted socket, or unconnected (a client's).
  Connection(std::shared_ptr<net::io_context> context, tcp::socket s, std::chrono::milliseconds idle) requires(!kTls)
      : Impl(std::move(context), idle), ws(std::move(s)) {}
  Connection(std::shared_ptr<net::io_context> context, std::chrono::milliseconds idle) requires(!kTls)
      : Impl(context, idle), ws(context->get_executor()) {}
  // TLS: the same, with the context holding the certificates.
  Connection(std::shared_ptr<net::io_context> context, tcp::socket s, std::chrono::milliseconds idle,
             std::shared_ptr<ssl::context> tls) requires(kTls)
      : Impl(std::move(context), idle), tls_context(std::move(tls)), ws(std::move(s), *tls_context) {}
  Connection(std::shared_ptr<net::io_context> context, std::chrono::milliseconds idle,
             std::shared_ptr<ssl::context> tls) requires(kTls)
      : Impl(context, idle), tls_context(std::move(tls)), ws(context->get_executor(), *tls_context) {}

  std::shared_ptr<ssl::context> tls_context;  // before ws, which refers to it
  websocket::stream<Next> ws;
  // The message being read, straight from the socket into the vector that is
  // handed on (no copy out of a read buffer); network thread only.
  Message incoming;
  std::optional<net::dynamic_vector_buffer<std::byte, Message::allocator_type>> incoming_buffer;

  std::shared_ptr<Connection> self() { return std::static_pointer_cast<Connection>(shared_from_this()); }

  tcp::socket& socket() override { return beast::get_lowest_layer(ws).socket(); }

  void configure(std::chrono::milliseconds handshake, std::size_t max_message) {
    ws.set_option(websocket::stream_base::timeout{handshake, idle_timeout, /*keep_alive_pings=*/true});
    ws.read_message_max(max_message);
    ws.binary(true);
    ws.auto_fragment(false);  // one frame per message: no per-4-KiB frame headers on tensor data
    // A client masks what it sends (RFC 6455) through this buffer, one socket
    // write per buffer-full: at Beast's default of 4 KiB, a 4 MiB chunk took
    // a thousand writes.
    ws.write_buffer_bytes(std::size_t{1} << 20);
  }

  void read() override {
    if (!open || paused || reading) return;
    reading = true;
    // Beast sizes the buffer from the frame header: a first read of at most
    // 1.5 KiB, then the rest of the payload in one piece.
    incoming = take_spare();
    incoming_buffer.emplace(incoming);
    ws.async_read(*incoming_buffer, [self = self()](beast::error_code ec, std::size_t) {
      self->reading = false;
      if (ec) return self->fail(describe(ec, self->idle_timeout));
      if (!self->ws.got_binary()) return self->fail("a text message arrived (the protocol is binary)");
      self->incoming.resize(self->incoming_buffer->size());
      self->incoming_buffer.reset();
      self->deliver(std::move(self->incoming));
      self->read();
    });
  }

  void write() override {
    if (writing || outbox.empty() || !open) return;
    writing = true;
    const Outgoing& next = outbox.front();
    const std::array<net::const_buffer, 2> buffers{net::buffer(next.head),
                                                   net::buffer(next.body.data(), next.body.size())};
    ws.async_write(buffers, [self = self()](beast::error_code ec, std::size_t) {
      self->writing = false;
      {
        std::lock_guard lock(self->mutex);
        self->queued_bytes -= self->outbox.front().size();
      }
      self->drained.notify_all();
      self->outbox.pop_front();
      if (ec) return self->fail(describe(ec, self->idle_timeout));
      if (self->outbox.empty() && self->close_requested) return self->close_now();
      self->write();
    });
  }

  void close_now() override {
    if (closing || !open) return;
    closing = true;
    ws.async_close(websocket::close_code::normal,
                   [self = self()](beast::error_code) { self->fail("closed by this side"); });
  }
};

}  // namespace

struct Channel::OwnedLoop {
  std::shared_ptr<net::io_context> ioc;
  net::executor_work_guard<net::io_context::executor_type> guard;
  std::thread thread;
};

Channel::Channel(std::shared_ptr<Impl> impl, std::unique_ptr<OwnedLoop> loop)
    : impl_(std::move(impl)), loop_(std::move(loop)) {}

// NOLINTNEXTLINE(bugprone-exception-escape): see the declaration
Channel::~Channel() {
  close();
  if (!loop_) return;
  // Give the close handshake a moment, then stop: a dead peer must not hold
  // up the destructor.
  for (int i = 0; i < 100 && impl_->open; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  loop_->guard.reset();
  loop_->ioc->stop();
  loop_->thread.join();
  // Close the socket and let the handlers it aborts run, so that they release
  // the connection before the io_context goes.
  loop_->ioc->restart();
  net::post(*loop_->ioc, [impl = impl_] { impl->fail("closed by this side"); });
  loop_->ioc->poll();
}

void Channel::start(MessageHandler on_message, CloseHandler on_close) {
  net::post(*impl_->ioc, [impl = impl_, m = std::move(on_message), c = std::move(on_close)]() mutable {
    impl->on_message = std::move(m);
    impl->on_close = std::move(c);
    impl->started = true;
    while (!impl->early.empty()) {
      auto message = std::move(impl->early.front());
      impl->early.pop_front();
      impl->on_message(std::move(message));
    }
    if (!impl->open && impl->on_close) impl->on_close(impl->early_close);
  });
}

void Channel::send(std::vector<std::byte> message) { send(std::move(message), nullptr, {}); }

void Channel::send(std::vector<std::byte> head, std::shared_ptr<const void> owner, std::span<const std::byte> body) {
  send_within(kMaxQueuedBytes, std::move(head), std::move(owner), body);
}

void Channel::send_within(std::size_t max_queued, std::vector<std::byte> head, std::shared_ptr<const void> owner,
                          std::span<const std::byte> body) {
  Impl::Outgoing message{std::move(head), std::move(owner), body};
  {
    std::unique_lock lock(impl_->mutex);
    impl_->drained.wait(lock, [&] { return impl_->queued_bytes < max_queued || !impl_->open; });
    if (!impl_->open) return;
    impl_->queued_bytes += message.size();
  }
  net::post(*impl_->ioc, [impl = impl_, m = std::move(message)]() mutable {
    if (!impl->open) {
      std::lock_guard lock(impl->mutex);
      impl->queued_bytes -= m.size();
      return;
    }
    impl->outbox.push_back(std::move(m));
    impl->write();
  });
}

void Channel::recycle(Message message) {
  // A few buffers cover the messages in flight between the network thread
  // and the owner. Only buffers about a data chunk's size are kept: an
  // occasional large op batch is not worth holding on to.
  constexpr std::size_t kMaxSpare = 4;
  constexpr std::size_t kMaxSpareBytes = std::size_t{1} << 20;
  if (message.capacity() > kMaxSpareBytes) return;
  std::lock_guard lock(impl_->mutex);
  if (impl_->spare.size() < kMaxSpare) impl_->spare.push_back(std::move(message));
}

void Channel::close() {
  net::post(*impl_->ioc, [impl = impl_] {
    impl->close_requested = true;
    if (!impl->writing) impl->close_now();
  });
}

void Channel::pause_reading(bool paused) {
  net::post(*impl_->ioc, [impl = impl_, paused] {
    impl->paused = paused;
    impl->read();
  });
}

bool Channel::is_open() const { return impl_->open; }
std::string Channel::peer() const { return impl_->peer_name; }

namespace {

constexpr std::string_view kPlainClientHint =
    " (a server started with --tls-cert speaks only TLS: give the client its CA with RemoteOptions::tls_ca "
    "or BURN_REMOTE_TLS_CA)";

// Resolves, connects, does the TLS handshake where there is one and the
// websocket handshake, all within `timeout`; returns the reason it could
// not, or nothing.
template <class Next>
std::optional<std::string> handshake_client(Connection<Next>& c, const std::string& host, const std::string& port,
                                            std::chrono::milliseconds timeout, std::size_t max_message_bytes) {
  net::io_context& ioc = *c.ioc;
  tcp::resolver resolver(ioc);
  std::optional<std::string> error;
  bool connected = false;
  // Stops the loop at once: a websocket or TCP timer still pending would
  // otherwise keep run_for() below waiting for the whole timeout.
  auto fail_with = [&](std::string why) {
    error = std::move(why);
    ioc.stop();
  };
  auto websocket_handshake = [&] {
    c.configure(timeout, max_message_bytes);
    c.ws.async_handshake(host + ":" + port, "/", [&](beast::error_code ec) {
      if (!ec) {
        connected = true;
        ioc.stop();
        return;
      }
      std::string why = fmt::format("the websocket handshake failed: {}", describe(ec, timeout));
      if constexpr (!Connection<Next>::kTls) why += kPlainClientHint;
      fail_with(std::move(why));
    });
  };
  resolver.async_resolve(host, port, [&](beast::error_code ec, const tcp::resolver::results_type& results) {
    if (ec) {
      return fail_with(fmt::format("cannot resolve '{}': {}", host, ec.message()));
    }
    auto& stream = beast::get_lowest_layer(c.ws);
    stream.expires_after(timeout);
    stream.async_connect(results, [&](beast::error_code ec2, const tcp::endpoint&) {
      if (ec2)
        return fail_with(ec2 == beast::error::timeout ? fmt::format("no answer within {} ms", timeout.count())
                                                      : fmt::format("cannot connect: {}", ec2.message()));
      c.socket().set_option(tcp::no_delay(true));
      if constexpr (Connection<Next>::kTls) {
        auto& tls = c.ws.next_layer();
        beast::error_code bad_ip;
        net::ip::make_address(host, bad_ip);
        // SNI names a host, never an address (RFC 6066).
        if (bad_ip && !SSL_set_tlsext_host_name(tls.native_handle(), host.c_str()))
          return fail_with(fmt::format("cannot set the TLS server name '{}'", host));
        tls.set_verify_mode(ssl::verify_peer);
        tls.set_verify_callback(ssl::host_name_verification(host));
        // The TCP stream's own deadline (still `timeout`) covers the TLS handshake.
        tls.async_handshake(ssl::stream_base::client, [&](beast::error_code ec3) {
          if (ec3)
            return fail_with(fmt::format(
                "the TLS handshake failed: {} (the server's certificate must chain to the client's CA and name "
                "'{}'; a server without --tls-cert does not speak TLS)",
                describe(ec3, timeout), host));
          beast::get_lowest_layer(c.ws).expires_never();  // from here on the websocket's own timeouts apply
          websocket_handshake();
        });
      } else {
        beast::get_lowest_layer(c.ws).expires_never();
        websocket_handshake();
      }
    });
  });
  ioc.run_for(timeout + std::chrono::milliseconds(500));
  if (connected) return std::nullopt;
  return error.value_or(fmt::format("no answer within {} ms", timeout.count()));
}

template <class Next, class... TlsContext>
std::shared_ptr<Channel> connect_with(const std::string& address, std::chrono::milliseconds timeout,
                                      std::size_t max_message_bytes, TlsContext... tls) {
  std::pair<std::string, std::string> host_port;
  try {
    host_port = split_address(address);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  auto ioc = std::make_shared<net::io_context>(1);
  auto impl = std::make_shared<Connection<Next>>(ioc, timeout, std::move(tls)...);
  impl->peer_name = address;
  if (auto error = handshake_client(*impl, host_port.first, host_port.second, timeout, max_message_bytes)) {
    beast::error_code ignored;
    impl->socket().close(ignored);
    ioc->restart();
    ioc->poll();
    throw std::runtime_error(*error);
  }
  ioc->restart();
  impl->read();
  auto loop = std::unique_ptr<Channel::OwnedLoop>(new Channel::OwnedLoop{ioc, net::make_work_guard(*ioc), {}});
  loop->thread = std::thread([ioc] { ioc->run(); });
  return std::make_shared<Channel>(std::move(impl), std::move(loop));
}

}  // namespace

std::shared_ptr<Channel> Channel::connect(const std::string& address, std::chrono::milliseconds timeout,
                                          std::size_t max_message_bytes, const std::optional<ClientTls>& tls) {
  if (!tls) return connect_with<PlainStream>(address, timeout, max_message_bytes);
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  context->set_options(ssl::context::no_sslv2 | ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                       ssl::context::no_tlsv1_1);
  beast::error_code ec;
  if (tls->ca_file.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) throw std::runtime_error(fmt::format("cannot load the system's certificate authorities: {}", ec.message()));
  } else {
    context->load_verify_file(tls->ca_file, ec);
    if (ec)
      throw std::runtime_error(
          fmt::format("cannot load the TLS CA file '{}': {} (a PEM file of certificates)", tls->ca_file, ec.message()));
  }
  return connect_with<TlsStream>(address, timeout, max_message_bytes, std::move(context));
}

// ---- the listener ------------------------------------------------------------------------------

struct Listener::Impl {
  std::shared_ptr<net::io_context> ioc = std::make_shared<net::io_context>(1);
  tcp::acceptor acceptor{*ioc};
  Options options;
  std::shared_ptr<ssl::context> tls;  // set: every connection is TLS
  AcceptHandler on_accept;
  ErrorHandler on_error;
  bool stopped = false;                                   // network thread
  std::vector<std::weak_ptr<Channel::Impl>> connections;  // network thread

  void accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (stopped) return;
      if (ec) {
        on_error("", fmt::format("accept failed: {}", ec.message()));
        return accept();
      }
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      if (tls) {
        auto c = std::make_shared<Connection<TlsStream>>(ioc, std::move(socket), options.idle_timeout, tls);
        c->peer_name = endpoint_name(c->socket());
        auto& stream = beast::get_lowest_layer(c->ws);
        stream.expires_after(options.handshake_timeout);
        c->ws.next_layer().async_handshake(ssl::stream_base::server, [this, c](beast::error_code ec2) {
          if (ec2) {
            // OpenSSL's reason for a plain HTTP request where a TLS hello belongs.
            const bool plain = ec2.category() == net::error::get_ssl_category() &&
                               ERR_GET_REASON(static_cast<unsigned long>(ec2.value())) == SSL_R_HTTP_REQUEST;
            on_error(c->peer_name,
                     plain ? std::string("a client without TLS (this server speaks only TLS)")
                           : fmt::format("the TLS handshake failed: {}", describe(ec2, options.handshake_timeout)));
            c->fail("handshake failed");
            return;
          }
          beast::get_lowest_layer(c->ws).expires_never();  // the websocket's own timeouts from here on
          accept_websocket(c);
        });
      } else {
        accept_websocket(std::make_shared<Connection<PlainStream>>(ioc, std::move(socket), options.idle_timeout));
      }
      accept();
    });
  }

  template <class Next>
  void accept_websocket(const std::shared_ptr<Connection<Next>>& c) {
    if (c->peer_name.empty()) c->peer_name = endpoint_name(c->socket());
    c->configure(options.handshake_timeout, options.max_message_bytes);
    c->ws.async_accept([this, c](beast::error_code ec) {
      if (ec) {
        on_error(c->peer_name, fmt::format("not a websocket client: {}", describe(ec, options.handshake_timeout)));
        c->fail("handshake failed");
        return;
      }
      if (stopped) return c->fail("the server is stopping");
      std::erase_if(connections, [](const auto& w) { return w.expired(); });
      connections.push_back(c);
      c->read();
      on_accept(std::make_shared<Channel>(c, nullptr));
    });
  }
};

namespace {

std::shared_ptr<ssl::context> server_tls_context(const ServerTls& files) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  beast::error_code ec;
  context->use_certificate_chain_file(files.cert_file, ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("--tls-cert {}: cannot load a PEM certificate chain: {}", files.cert_file, ec.message()));
  context->use_private_key_file(files.key_file, ssl::context::pem, ec);
  // OpenSSL checks the key against the certificate as it loads it.
  if (ec && ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH)
    throw std::runtime_error(fmt::format("--tls-key {} is not the key of the certificate in --tls-cert {}",
                                         files.key_file, files.cert_file));
  if (ec)
    throw std::runtime_error(
        fmt::format("--tls-key {}: cannot load an unencrypted PEM private key: {}", files.key_file, ec.message()));
  return context;
}

}  // namespace

Listener::Listener(const std::string& address, Options options, AcceptHandler on_accept, ErrorHandler on_error)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  if (options.tls) impl_->tls = server_tls_context(*options.tls);
  impl_->on_accept = std::move(on_accept);
  impl_->on_error = std::move(on_error);
  std::pair<std::string, std::string> host_port;
  try {
    host_port = split_address(address);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  beast::error_code ec;
  tcp::resolver resolver(*impl_->ioc);
  const auto results = resolver.resolve(host_port.first, host_port.second, tcp::resolver::passive, ec);
  if (ec || results.empty())
    throw std::runtime_error(fmt::format("cannot listen on {}: {}", address, ec ? ec.message() : "no such address"));
  const tcp::endpoint endpoint = *results.begin();
  auto& a = impl_->acceptor;
  a.open(endpoint.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot listen on {}: {}", address, ec.message()));
  impl_->accept();
}

// NOLINTNEXTLINE(bugprone-exception-escape): see the declaration
Listener::~Listener() {
  stop();
  impl_->ioc->restart();
  impl_->ioc->poll();
}

std::uint16_t Listener::port() const {
  beast::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

void Listener::run() { impl_->ioc->run(); }

void Listener::stop() {
  net::post(*impl_->ioc, [impl = impl_.get()] {
    if (impl->stopped) return;
    impl->stopped = true;
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    for (auto& weak : impl->connections)
      if (auto c = weak.lock()) c->fail("the server is stopping");
    impl->connections.clear();
    // Every connection's owner has been told. What is still queued runs (a
    // connection's start, posted before this), then run() returns even if
    // Beast still holds a timer of a connection whose socket is gone.
    net::post(*impl->ioc, [ioc = impl->ioc] { ioc->stop(); });
  });
}

}  // namespace burn::remote
