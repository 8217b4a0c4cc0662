// Boost.Beast websockets under the remote protocol. Every Beast call runs on
// one network thread per io_context (the client's own, or the listener's), so
// no strand is needed; other threads reach a connection only through post().
#include "backends/remote/channel.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <fmt/format.h>

namespace burn::remote {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
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

struct Channel::Impl : std::enable_shared_from_this<Channel::Impl> {
  Impl(std::shared_ptr<net::io_context> context, tcp::socket socket, std::chrono::milliseconds idle)
      : ioc(std::move(context)), ws(std::move(socket)), idle_timeout(idle) {}
  Impl(std::shared_ptr<net::io_context> context, std::chrono::milliseconds idle)
      : ioc(std::move(context)), ws(ioc->get_executor()), idle_timeout(idle) {}

  std::shared_ptr<net::io_context> ioc;  // before ws: ws is destroyed first
  websocket::stream<beast::tcp_stream> ws;
  std::chrono::milliseconds idle_timeout;
  std::string peer_name;

  // Network thread only.
  beast::flat_buffer read_buffer;
  std::deque<std::vector<std::byte>> outbox;
  bool writing = false;
  bool reading = false;
  bool paused = false;
  bool close_requested = false;
  bool closing = false;
  bool started = false;
  std::deque<std::vector<std::byte>> early;  // arrived before start()
  std::string early_close;                   // the connection ended before start()
  MessageHandler on_message;
  CloseHandler on_close;

  // Any thread.
  std::atomic<bool> open{true};
  std::mutex mutex;
  std::condition_variable drained;
  std::size_t queued_bytes = 0;

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

  void read() {
    if (!open || paused || reading) return;
    reading = true;
    ws.async_read(read_buffer, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->reading = false;
      if (ec) return self->fail(describe(ec, self->idle_timeout));
      if (!self->ws.got_binary()) return self->fail("a text message arrived (the protocol is binary)");
      const auto data = self->read_buffer.cdata();
      const auto* first = static_cast<const std::byte*>(data.data());
      std::vector<std::byte> message(first, first + data.size());
      self->read_buffer.consume(self->read_buffer.size());
      self->deliver(std::move(message));
      self->read();
    });
  }

  void deliver(std::vector<std::byte> message) {
    if (started) on_message(std::move(message));
    else early.push_back(std::move(message));
  }

  void write() {
    if (writing || outbox.empty() || !open) return;
    writing = true;
    ws.async_write(net::buffer(outbox.front()), [self = shared_from_this()](beast::error_code ec, std::size_t) {
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

  // A graceful close: the websocket close handshake, after every queued write.
  void close_now() {
    if (closing || !open) return;
    closing = true;
    ws.async_close(websocket::close_code::normal,
                   [self = shared_from_this()](beast::error_code) { self->fail("closed by this side"); });
  }

  // The connection is over (error, close, or shutdown): close the socket, wake
  // blocked senders, tell the owner once.
  void fail(const std::string& reason) {
    if (!open.exchange(false)) return;
    beast::error_code ignored;
    auto& socket = beast::get_lowest_layer(ws).socket();
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
    drained.notify_all();
    if (started) {
      if (on_close) on_close(reason);
    } else {
      early_close = reason;
    }
  }
};

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

void Channel::send(std::vector<std::byte> message) {
  {
    std::unique_lock lock(impl_->mutex);
    impl_->drained.wait(lock, [&] { return impl_->queued_bytes < kMaxQueuedBytes || !impl_->open; });
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

std::shared_ptr<Channel> Channel::connect(const std::string& address, std::chrono::milliseconds timeout,
                                          std::size_t max_message_bytes) {
  std::pair<std::string, std::string> host_port;
  try {
    host_port = split_address(address);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  const std::string& host = host_port.first;  // named, not a structured binding: the lambdas capture them
  const std::string& port = host_port.second;
  auto ioc = std::make_shared<net::io_context>(1);
  auto impl = std::make_shared<Impl>(ioc, timeout);
  impl->peer_name = address;
  tcp::resolver resolver(*ioc);
  std::string error;
  bool connected = false;
  resolver.async_resolve(host, port, [&](beast::error_code ec, const tcp::resolver::results_type& results) {
    if (ec) {
      error = fmt::format("cannot resolve '{}': {}", host, ec.message());
      return;
    }
    auto& stream = beast::get_lowest_layer(impl->ws);
    stream.expires_after(timeout);
    stream.async_connect(results, [&](beast::error_code ec2, const tcp::endpoint&) {
      if (ec2) {
        error = ec2 == beast::error::timeout ? fmt::format("no answer within {} ms", timeout.count())
                                             : fmt::format("cannot connect: {}", ec2.message());
        return;
      }
      auto& s = beast::get_lowest_layer(impl->ws);
      s.expires_never();  // from here on the websocket's own timeouts apply
      s.socket().set_option(tcp::no_delay(true));
      impl->configure(timeout, max_message_bytes);
      impl->ws.async_handshake(host + ":" + port, "/", [&](beast::error_code ec3) {
        if (ec3) error = fmt::format("the websocket handshake failed: {}", describe(ec3, timeout));
        else connected = true;
      });
    });
  });
  ioc->run_for(timeout + std::chrono::milliseconds(500));
  if (!connected) {
    beast::error_code ignored;
    beast::get_lowest_layer(impl->ws).socket().close(ignored);
    ioc->restart();
    ioc->poll();
    throw std::runtime_error(error.empty() ? fmt::format("no answer within {} ms", timeout.count()) : error);
  }
  ioc->restart();
  impl->read();
  auto loop = std::unique_ptr<OwnedLoop>(new OwnedLoop{ioc, net::make_work_guard(*ioc), {}});
  loop->thread = std::thread([ioc] { ioc->run(); });
  return std::make_shared<Channel>(std::move(impl), std::move(loop));
}

// ---- the listener ------------------------------------------------------------------------------

struct Listener::Impl {
  std::shared_ptr<net::io_context> ioc = std::make_shared<net::io_context>(1);
  tcp::acceptor acceptor{*ioc};
  Options options;
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
      auto impl = std::make_shared<Channel::Impl>(ioc, std::move(socket), options.idle_timeout);
      impl->peer_name = endpoint_name(beast::get_lowest_layer(impl->ws).socket());
      impl->configure(options.handshake_timeout, options.max_message_bytes);
      impl->ws.async_accept([this, impl](beast::error_code ec2) {
        if (ec2) {
          on_error(impl->peer_name,
                   fmt::format("not a websocket client: {}", describe(ec2, options.handshake_timeout)));
          impl->fail("handshake failed");
          return;
        }
        if (stopped) return impl->fail("the server is stopping");
        std::erase_if(connections, [](const auto& w) { return w.expired(); });
        connections.push_back(impl);
        impl->read();
        on_accept(std::make_shared<Channel>(impl, nullptr));
      });
      accept();
    });
  }
};

Listener::Listener(const std::string& address, Options options, AcceptHandler on_accept, ErrorHandler on_error)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
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
