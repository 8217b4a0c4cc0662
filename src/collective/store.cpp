#include "collective/store.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <fmt/format.h>

#include <burn/error.hpp>

namespace burn::collective {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

enum class Op : std::uint8_t {
  Set = 1,
  Get = 2,
  Hello = 3,     // key: this connection's rank
  Bye = 4,       // the rank leaves the group on purpose
  Departed = 5,  // answered like a get: "rank reason" lines of the ranks gone
};

/// A request or answer larger than this ends the connection: the store holds
/// addresses and ids of a few hundred bytes, never tensors.
constexpr std::uint32_t kMaxMessageBytes = std::uint32_t{16} << 20;

void put_u32(std::vector<char>& out, std::uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

void put_bytes(std::vector<char>& out, const char* data, std::size_t n) {
  put_u32(out, static_cast<std::uint32_t>(n));
  out.insert(out.end(), data, data + n);
}

/// Reads the fields of one payload; nullopt once it runs past the end.
class Cursor {
 public:
  explicit Cursor(const std::vector<char>& bytes) : bytes_(bytes) {}
  std::optional<std::uint8_t> u8() {
    if (at_ + 1 > bytes_.size()) return std::nullopt;
    return static_cast<std::uint8_t>(bytes_[at_++]);
  }
  std::optional<std::vector<char>> bytes() {
    if (at_ + 4 > bytes_.size()) return std::nullopt;
    std::uint32_t n = 0;
    std::memcpy(&n, bytes_.data() + at_, 4);
    at_ += 4;
    if (n > bytes_.size() - at_) return std::nullopt;
    std::vector<char> out(bytes_.begin() + static_cast<std::ptrdiff_t>(at_),
                          bytes_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
    at_ += n;
    return out;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const std::vector<char>& bytes_;
  std::size_t at_ = 0;
};

}  // namespace

// ---- server ---------------------------------------------------------------------------------------

struct StoreServer::Impl {
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::map<std::string, std::vector<char>> values;  // network thread only
  std::map<int, std::string> departed;              // rank -> how it went; network thread only
  std::atomic<int> open_connections{0};             // accepted and not yet gone
  std::thread thread;

  // One client connection: read a request, answer it, repeat.
  struct Connection : std::enable_shared_from_this<Connection> {
    Connection(Impl& server, tcp::socket s) : server(server), socket(std::move(s)) {}
    Impl& server;
    tcp::socket socket;
    std::uint32_t length = 0;
    std::vector<char> request;
    std::vector<char> answer;
    int rank = -1;  // from its Hello
    bool left = false;

    void read() {
      net::async_read(socket, net::buffer(&length, 4), [self = shared_from_this()](auto ec, std::size_t) {
        if (ec || self->length > kMaxMessageBytes) return self->gone();  // closed, or not a store client
        self->request.resize(self->length);
        net::async_read(self->socket, net::buffer(self->request), [self](auto ec2, std::size_t) {
          if (!ec2 && self->handle()) self->write();
          else self->gone();
        });
      });
    }

    // The connection ended. Each rank holds its connection for the group's
    // lifetime, so a rank whose connection ends without a Bye has died (or
    // lost the network): what the others are told when a collective fails.
    void gone() {
      if (rank >= 0 && !left) server.departed.emplace(rank, "died or lost its connection");
      --server.open_connections;
    }

    // False for a malformed request (the connection is dropped).
    bool handle() {
      Cursor in(request);
      const auto op = in.u8();
      auto key = in.bytes();
      if (!op || !key) return false;
      std::string name(key->begin(), key->end());
      std::vector<char> payload;
      if (*op == static_cast<std::uint8_t>(Op::Set)) {
        auto value = in.bytes();
        if (!value || !in.done()) return false;
        server.values[name] = std::move(*value);
        payload.push_back(1);
      } else if (*op == static_cast<std::uint8_t>(Op::Get)) {
        if (!in.done()) return false;
        const auto it = server.values.find(name);
        payload.push_back(it == server.values.end() ? 0 : 1);
        if (it != server.values.end()) put_bytes(payload, it->second.data(), it->second.size());
      } else if (*op == static_cast<std::uint8_t>(Op::Hello)) {
        if (!in.done()) return false;
        try {
          rank = std::stoi(name);
        } catch (const std::exception&) {
          return false;
        }
        payload.push_back(1);
      } else if (*op == static_cast<std::uint8_t>(Op::Bye)) {
        if (!in.done() || rank < 0) return false;
        left = true;
        server.departed.emplace(rank, "left the group");
        payload.push_back(1);
      } else if (*op == static_cast<std::uint8_t>(Op::Departed)) {
        if (!in.done()) return false;
        std::string text;
        for (const auto& [r, how] : server.departed) text += fmt::format("rank {} {}\n", r, how);
        payload.push_back(1);
        put_bytes(payload, text.data(), text.size());
      } else {
        return false;
      }
      answer.clear();
      put_u32(answer, static_cast<std::uint32_t>(payload.size()));
      answer.insert(answer.end(), payload.begin(), payload.end());
      return true;
    }

    void write() {
      net::async_write(socket, net::buffer(answer), [self = shared_from_this()](auto ec, std::size_t) {
        if (!ec) self->read();
        else self->gone();
      });
    }
  };

  void accept() {
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket s) {
      if (ec) return;  // the acceptor was closed: the server stops
      ++open_connections;
      std::make_shared<Connection>(*this, std::move(s))->read();
      accept();
    });
  }
};

StoreServer::StoreServer(const std::string& host, std::uint16_t port) : impl_(std::make_unique<Impl>()) {
  try {
    const auto endpoints = tcp::resolver(impl_->ioc).resolve(host, std::to_string(port));
    const tcp::endpoint endpoint = *endpoints.begin();
    impl_->acceptor.open(endpoint.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(endpoint);
    impl_->acceptor.listen();
  } catch (const boost::system::system_error& e) {
    throw ExecutionError("ProcessGroup::create",
                         fmt::format("rank 0 cannot serve the rendezvous on {}:{}: {}; choose a free MASTER_PORT", host,
                                     port, e.code().message()));
  }
  impl_->accept();
  impl_->thread = std::thread([impl = impl_.get()] { impl->ioc.run(); });
}

std::uint16_t StoreServer::port() const { return impl_->acceptor.local_endpoint().port(); }

StoreServer::~StoreServer() {
  // The other ranks may still ask who failed (their collective failed
  // later than ours): serve until they have gone too, for a few seconds.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (impl_->open_connections.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  net::post(impl_->ioc, [impl = impl_.get()] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
  });
  impl_->ioc.stop();
  impl_->thread.join();
}

// ---- client ---------------------------------------------------------------------------------------

struct StoreClient::Impl {
  std::string master;
  std::chrono::milliseconds timeout;
  net::io_context ioc;
  tcp::socket socket{ioc};

  using Deadline = std::chrono::steady_clock::time_point;

  // Runs the asynchronous work started on ioc until it completes or the
  // deadline passes; returns its error (timed_out at the deadline).
  boost::system::error_code run_until(Deadline deadline, boost::system::error_code& result) {
    const auto now = std::chrono::steady_clock::now();
    ioc.restart();
    ioc.run_for(deadline > now ? deadline - now : std::chrono::steady_clock::duration::zero());
    if (!ioc.stopped()) {  // still waiting: give up on the socket
      boost::system::error_code ignored;
      socket.close(ignored);
      ioc.restart();
      ioc.run();
      return net::error::timed_out;
    }
    return result;
  }

  [[noreturn]] void fail(const std::string& what, const boost::system::error_code& ec) const {
    throw ExecutionError("ProcessGroup", fmt::format("the rendezvous at {} {}: {} (is rank 0 running, with the same "
                                                     "MASTER_ADDR and MASTER_PORT?)",
                                                     master, what, ec.message()));
  }

  void connect(const std::string& host, std::uint16_t port) {
    const Deadline deadline = std::chrono::steady_clock::now() + timeout;
    boost::system::error_code last = net::error::timed_out;
    // Rank 0 may start after the others: retry until the deadline.
    while (std::chrono::steady_clock::now() < deadline) {
      boost::system::error_code result = net::error::would_block;
      tcp::resolver resolver(ioc);
      tcp::resolver::results_type endpoints;
      try {
        endpoints = resolver.resolve(host, std::to_string(port));
      } catch (const boost::system::system_error& e) {
        fail("cannot be resolved", e.code());
      }
      socket = tcp::socket(ioc);
      net::async_connect(socket, endpoints, [&](auto ec, const auto&) { result = ec; });
      last = run_until(deadline, result);
      if (!last) {
        socket.set_option(tcp::no_delay(true));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    fail(fmt::format("could not be reached within {} ms", timeout.count()), last);
  }

  std::vector<char> call(const std::vector<char>& payload, Deadline deadline) {
    std::vector<char> message;
    put_u32(message, static_cast<std::uint32_t>(payload.size()));
    message.insert(message.end(), payload.begin(), payload.end());
    std::uint32_t length = 0;
    std::vector<char> answer;
    boost::system::error_code result = net::error::would_block;
    net::async_write(socket, net::buffer(message), [&](auto ec, std::size_t) {
      if (ec) {
        result = ec;
        return;
      }
      net::async_read(socket, net::buffer(&length, 4), [&](auto ec2, std::size_t) {
        if (ec2 || length > kMaxMessageBytes) {
          result = ec2 ? ec2 : net::error::message_size;
          return;
        }
        answer.resize(length);
        net::async_read(socket, net::buffer(answer), [&](auto ec3, std::size_t) { result = ec3; });
      });
    });
    if (const auto ec = run_until(deadline, result)) fail("stopped answering", ec);
    return answer;
  }

  std::optional<std::vector<char>> try_get(const std::string& key, Deadline deadline) {
    std::vector<char> payload{static_cast<char>(Op::Get)};
    put_bytes(payload, key.data(), key.size());
    const auto answer = call(payload, deadline);
    Cursor in(answer);
    const auto found = in.u8();
    if (!found) fail("sent a malformed answer", net::error::invalid_argument);
    if (*found == 0) return std::nullopt;
    auto value = in.bytes();
    if (!value) fail("sent a malformed answer", net::error::invalid_argument);
    return value;
  }

  std::vector<char> get(const std::string& key, Deadline deadline, std::chrono::milliseconds limit) {
    for (;;) {
      if (auto value = try_get(key, deadline)) return std::move(*value);
      if (std::chrono::steady_clock::now() + std::chrono::milliseconds(10) >= deadline)
        throw ExecutionError("ProcessGroup",
                             fmt::format("waited {} ms at the rendezvous for \"{}\", which no rank published: a rank "
                                         "did not start, or the ranks disagree on WORLD_SIZE",
                                         limit.count(), key));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
};

StoreClient::StoreClient(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->master = fmt::format("{}:{}", host, port);
  impl_->timeout = timeout;
  impl_->connect(host, port);
}

StoreClient::~StoreClient() = default;

void StoreClient::hello(int rank) {
  const std::string key = std::to_string(rank);
  std::vector<char> payload{static_cast<char>(Op::Hello)};
  put_bytes(payload, key.data(), key.size());
  impl_->call(payload, std::chrono::steady_clock::now() + impl_->timeout);
}

void StoreClient::bye() noexcept {
  try {
    std::vector<char> payload{static_cast<char>(Op::Bye)};
    put_bytes(payload, "", 0);
    impl_->call(payload, std::chrono::steady_clock::now() + std::chrono::seconds(2));
  } catch (const std::exception&) {
    // Leaving a group whose rendezvous is gone: nobody is left to tell.
  }
}

std::string StoreClient::departed(std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    std::vector<char> payload{static_cast<char>(Op::Departed)};
    put_bytes(payload, "", 0);
    const auto answer = impl_->call(payload, deadline + std::chrono::seconds(2));
    Cursor in(answer);
    (void)in.u8();
    auto text = in.bytes();
    if (!text) impl_->fail("sent a malformed answer", net::error::invalid_argument);
    if (!text->empty() || std::chrono::steady_clock::now() >= deadline) return {text->begin(), text->end()};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void StoreClient::set(const std::string& key, const std::vector<char>& data) {
  std::vector<char> payload{static_cast<char>(Op::Set)};
  put_bytes(payload, key.data(), key.size());
  put_bytes(payload, data.data(), data.size());
  impl_->call(payload, std::chrono::steady_clock::now() + impl_->timeout);
}

std::vector<char> StoreClient::get(const std::string& key) {
  return impl_->get(key, std::chrono::steady_clock::now() + impl_->timeout, impl_->timeout);
}

void StoreClient::wait(const std::vector<std::string>& keys) { wait(keys, impl_->timeout); }

void StoreClient::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& key : keys) (void)impl_->get(key, deadline, timeout);
}

}  // namespace burn::collective
