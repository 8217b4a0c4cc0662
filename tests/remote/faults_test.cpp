// What goes wrong between a client and a burn-server, each a tested
// behaviour: dead servers and clients, hostile or broken messages, tokens,
// protocol versions, limits. Every server and client here is a real process
// on 127.0.0.1, and every wait is bounded.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <fstream>
#include <thread>

#include <burn_test.hpp>
#include <server_process.hpp>

#include <burn/config.hpp>
#if BURN_HAS_CAPTURE
#include <burn/trace.hpp>
#endif

#include "backends/remote/channel.hpp"
#include "backends/remote/protocol.hpp"

namespace {

using namespace burn;
using namespace std::chrono_literals;
using burn::testing::ChildProcess;
using burn::testing::expect_error;
using burn::testing::ServerProcess;
namespace remote = burn::remote;

Device connect(const ServerProcess& server, std::chrono::milliseconds timeout = 10s) {
  return Device::remote_options(RemoteHost{server.address()}).device("flex:0").timeout(timeout).init();
}

/// Bytes in use on the server's flex:0, as another client sees them.
std::uint64_t server_bytes_in_use(const Device& observer) {
  const auto usage = observer.memory_pool_usage();
  return usage ? usage->bytes_in_use : ~std::uint64_t{0};
}

/// A raw connection speaking the protocol by hand: the messages a broken or
/// hostile client would send.
class RawClient {
 public:
  explicit RawClient(const std::string& address)
      : channel_(remote::Channel::connect(address, 5s, 64 << 20, std::nullopt)) {
    channel_->start(
        [this](remote::Message m) {
          std::lock_guard lock(mutex_);
          inbox_.push_back(std::move(m));
          cv_.notify_all();
        },
        [this](const std::string& reason) {
          std::lock_guard lock(mutex_);
          closed_ = reason;
          cv_.notify_all();
        });
  }
  void send(std::vector<std::byte> m) { channel_->send(std::move(m)); }
  /// The next message, or nullopt when the server closed the connection (or 10 s passed).
  std::optional<remote::Message> next() {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, 10s, [&] { return !inbox_.empty() || closed_; });
    if (inbox_.empty()) return std::nullopt;
    auto m = std::move(inbox_.front());
    inbox_.erase(inbox_.begin());
    return m;
  }
  /// Whether the server closed the connection within 10 s.
  bool closed_by_server() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, 10s, [&] { return closed_.has_value(); });
  }

 private:
  std::shared_ptr<remote::Channel> channel_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<remote::Message> inbox_;
  std::optional<std::string> closed_;
};

std::vector<std::byte> hello(std::uint32_t version, const std::string& token = "") {
  remote::Writer w(remote::MessageKind::Hello);
  w.str(remote::kMagic);
  w.u32(version);
  w.str(token);
  w.u8(static_cast<std::uint8_t>(remote::DeviceSelection::Default));
  w.str("");
  w.u32(0);
  return std::move(w).take();
}

/// The server still serves a well-behaved client.
void expect_still_serving(const ServerProcess& server) {
  RawClient probe(server.address());
  probe.send(hello(remote::kProtocolVersion));
  const auto answer = probe.next();
  ASSERT_TRUE(answer.has_value()) << "the server stopped answering; its log:\n" << server.log();
  EXPECT_EQ(remote::message_kind(*answer), remote::MessageKind::Welcome);
}

TEST(RemoteFaults, AKilledServerIsAnExecutionErrorNamingTheHostAndLocalDevicesGoOn) {
  auto server = std::make_unique<ServerProcess>();
  const std::string address = server->address();
  const Device d = connect(*server, 3s);
  auto x = Tensor<2>::ones({32, 32}, d);
  d.sync();
  server->process().kill(SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  try {
    auto y = x.matmul(x);
    y.to_data();
    d.sync();
    ADD_FAILURE() << "no error after the server died";
  } catch (const ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find(address), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  // Later calls fail fast with the same reason; the local devices are untouched.
  expect_error([&] { d.sync(); }, address);
  expect_error([&] { (x + 1.0).to_data(); }, address);
  burn::testing::expect_values((Tensor<1>::ones({3}, Device::flex()) * 2.0).to_data(), {2, 2, 2}, {3});
}

// A server restarted at the same address: asking for the device again
// connects afresh; tensors of the lost connection say so when used there.
TEST(RemoteFaults, ADeviceWhoseServerRestartedConnectsAgain) {
  auto first = std::make_unique<ServerProcess>();
  const std::string address = first->address();
  const Device before = connect(*first, 3s);
  auto old = Tensor<1>::ones({4}, before);
  before.sync();
  first->process().kill(SIGKILL);
  expect_error([&] { before.sync(); }, address);
  first.reset();
  const ServerProcess second({"--device", "flex:0", "--listen", address});
  ASSERT_EQ(second.address(), address);
  const Device after = connect(second, 3s);
  EXPECT_EQ(after, before);  // the same device, reached over a new connection
  burn::testing::expect_values((Tensor<1>::ones({4}, after) * 3.0).to_data(), {3, 3, 3, 3}, {4});
  expect_error([&] { (Tensor<1>::ones({4}, after) + old).to_data(); }, "earlier connection");
  // The parsed spelling reaches the new connection too.
  burn::testing::expect_values(Tensor<1>::full({2}, 5.0, Device::parse("remote:" + address + "/flex:0")).to_data(),
                               {5, 5}, {2});
}

#if BURN_HAS_CAPTURE
// A traced function whose program the server kept: the server dies between
// two calls, the next call is an error naming the host (bounded in time),
// and after a restart at the same address the same function runs again,
// defining its program on the new connection.
TEST(RemoteFaults, ATracedFunctionOutlivesItsServer) {
  const TracedFunction affine = trace(
      [](const TracedFunction::Tensors& in) -> TracedFunction::Tensors {
        const Tensor<1> x(in[0]);
        return {(x * 2.0 + Tensor<1>::from_floats({0.5, 1.0, 1.5, 2.0}, x.device())).ref()};
      },
      {{Shape{4}, DType::F32}});
  const auto call = [&](const Device& d) {
    return Tensor<1>(affine({Tensor<1>::from_floats({1, 2, 3, 4}, d).ref()})[0]).to_data();
  };
  auto first = std::make_unique<ServerProcess>();
  const std::string address = first->address();
  {
    // Nothing refers to the lost connection's device after this block, so
    // the new connection's backend may be made where the old one was.
    const Device before = connect(*first, 3s);
    burn::testing::expect_values(call(before), {2.5, 5, 7.5, 10}, {4});
    first->process().kill(SIGKILL);
    const auto start = std::chrono::steady_clock::now();
    expect_error([&] { call(before); }, address);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  }
  first.reset();
  const ServerProcess second({"--device", "flex:0", "--listen", address});
  ASSERT_EQ(second.address(), address);
  const Device after = connect(second, 3s);
  for (int k = 0; k < 2; ++k) burn::testing::expect_values(call(after), {2.5, 5, 7.5, 10}, {4});
}
#endif

TEST(RemoteFaults, AStoppedServerIsDetectedByItsSilence) {
  ServerProcess server;
  const Device d = connect(server, 1500ms);
  auto x = Tensor<1>::ones({8}, d);
  d.sync();
  ::kill(server.process().pid(), SIGSTOP);  // alive but silent: no answer, not even to pings
  const auto start = std::chrono::steady_clock::now();
  expect_error([&] { (x * 3.0).to_data(); }, "not heard from");
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_LT(waited, 8s);
  ::kill(server.process().pid(), SIGCONT);
}

TEST(RemoteFaults, AKilledClientsTensorsAreFreedAndOthersAreServed) {
  ServerProcess server;
  const Device observer = connect(server);
  const std::uint64_t baseline = server_bytes_in_use(observer);
  const std::string out = (server.dir() / "client.out").string();
  ChildProcess client({BURN_REMOTE_CLIENT_PATH, "hold", server.address(), "64"}, out);
  // Bounded wait for the client to hold its tensors.
  bool ready = false;
  for (int i = 0; i < 3000 && !ready; ++i) {
    std::ifstream in(out);
    std::string line;
    ready = std::getline(in, line) && line == "ready";
    if (!ready) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(ready) << "the client did not start; server log:\n" << server.log();
  EXPECT_GE(server_bytes_in_use(observer), baseline + (64u << 20));
  client.kill(SIGKILL);
  // The server notices the closed socket and frees the session.
  std::uint64_t now = 0;
  for (int i = 0; i < 3000; ++i) {  // at most 30 s: a loaded machine can be slow to run the session's end
    now = server_bytes_in_use(observer);
    if (now == baseline) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(now, baseline) << server.log();
  burn::testing::expect_values((Tensor<1>::ones({2}, observer) + 1.0).to_data(), {2, 2}, {2});
  EXPECT_NE(server.log().find("tensors freed"), std::string::npos) << server.log();
}

TEST(RemoteFaults, GarbageTruncatedAndOversizedMessagesDropOnlyThatConnection) {
  ServerProcess server;
  {
    RawClient c(server.address());
    c.send({std::byte{0xde}, std::byte{0xad}, std::byte{0xbe}, std::byte{0xef}});
    EXPECT_TRUE(c.closed_by_server());
  }
  {
    RawClient c(server.address());
    auto m = hello(remote::kProtocolVersion);
    m.resize(m.size() - 3);  // truncated
    c.send(std::move(m));
    EXPECT_TRUE(c.closed_by_server());
  }
  {
    RawClient c(server.address());
    c.send(hello(remote::kProtocolVersion));
    ASSERT_TRUE(c.next().has_value());
    // A batch that reads a tensor the session does not have.
    remote::Writer w(remote::MessageKind::Batch);
    w.u32(1);
    w.u8(static_cast<std::uint8_t>(remote::CommandKind::Execute));
    remote::write_op(w, ir::Unary{ir::UnaryOp::Exp});
    w.u32(1);
    w.u64(12345);
    w.u32(1);
    w.u64(1);
    remote::write_spec(w, {Shape{2}, DType::F32});
    c.send(std::move(w).take());
    EXPECT_TRUE(c.closed_by_server());
  }
  {
    RawClient c(server.address());
    c.send(hello(remote::kProtocolVersion));
    ASSERT_TRUE(c.next().has_value());
    c.send(std::vector<std::byte>(remote::kMaxMessageBytes + 1, std::byte{2}));  // over the limit
    EXPECT_TRUE(c.closed_by_server());
  }
  // Not even a websocket: plain bytes on the port.
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(server.address().substr(10))));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval limit{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    const std::string junk = "HELLO? this is not HTTP\r\n\r\n";
    ASSERT_EQ(::write(fd, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
    char buf[256];
    while (::read(fd, buf, sizeof buf) > 0) {
    }
    ::close(fd);
  }
  expect_still_serving(server);
  const std::string log = server.log();
  EXPECT_NE(log.find("not a burn client"), std::string::npos) << log;
  EXPECT_NE(log.find("does not have"), std::string::npos) << log;
}

TEST(RemoteFaults, AnotherProtocolVersionIsRefusedNamingBoth) {
  ServerProcess server;
  RawClient c(server.address());
  c.send(hello(remote::kProtocolVersion + 7));
  const auto answer = c.next();
  ASSERT_TRUE(answer.has_value());
  remote::Reader r(*answer);
  ASSERT_EQ(r.kind(), remote::MessageKind::Refused);
  const std::string reason = r.str();
  EXPECT_NE(reason.find("version " + std::to_string(remote::kProtocolVersion)), std::string::npos) << reason;
  EXPECT_NE(reason.find("version " + std::to_string(remote::kProtocolVersion + 7)), std::string::npos) << reason;
  EXPECT_TRUE(c.closed_by_server());
  expect_still_serving(server);
}

TEST(RemoteFaults, ATokenIsRequiredWhenTheServerHasOne) {
  const auto dir = std::filesystem::temp_directory_path() / ("burn-token-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "token";
  std::ofstream(file) << "s3cret-token\n";
  ServerProcess server({"--device", "flex:0", "--token-file", file.string()});
  const RemoteHost host{server.address()};
  expect_error([&] { Device::remote_options(host).init(); }, "requires a token");
  expect_error([&] { Device::remote_options(host).token("s3cret-tokem").init(); }, "wrong token");
  const Device d = Device::remote_options(host).token("s3cret-token").init();
  burn::testing::expect_values((Tensor<1>::ones({2}, d) * 5.0).to_data(), {5, 5}, {2});
  std::filesystem::remove_all(dir);
}

TEST(RemoteFaults, SessionMemoryLimitIsAnErrorWithTheOpName) {
  ServerProcess server({"--device", "flex:0", "--max-session-memory", "8"});
  const Device d = connect(server);
  auto small = Tensor<1>::ones({1024}, d);
  auto big = Tensor<1>::zeros({std::size_t{4} << 20}, d);  // 16 MiB: over the limit
  try {
    d.sync();
    ADD_FAILURE() << "the limit was not enforced";
  } catch (const ExecutionError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("[full]", 0), 0u) << what;
    EXPECT_NE(what.find("--max-session-memory"), std::string::npos) << what;
  }
  // The session goes on: what did fit is still there.
  burn::testing::expect_values(small.sum().to_data(), {1024}, {1});
  // A tensor made from the failed one reports the failure when read.
  expect_error([&] { (big + 1.0).to_data(); }, "never computed");
}

#if BURN_HAS_LIBTORCH
// LibTorch has no u16/u32/u64: the server's answer reaches the client in the
// handshake, so the error comes at the call, as on a local libtorch device.
TEST(RemoteFaults, WhatTheServersDeviceLacksIsAnErrorAtTheCall) {
  ServerProcess server({"--device", "libtorch:0"});
  const Device d = Device::remote_options(RemoteHost{server.address()}).device("libtorch:0").init();
  EXPECT_FALSE(d.supports_dtype(DType::U16));
  EXPECT_TRUE(d.supports_dtype(DType::F32));
  EXPECT_EQ(d.supports_dtype(DType::U32), Device::libtorch().supports_dtype(DType::U32));
  auto x = Tensor<1, Int>::arange(0, 4, {d, DType::I32});
  burn::testing::expect_op_error([&] { x.cast(IntDType::U16); }, "cast", "does not support dtype u16");
  burn::testing::expect_values((x + 1).to_data(), {1, 2, 3, 4}, {4});
}
#endif

TEST(RemoteFaults, EightClientsTrainAtOnceWithoutCrossTalk) {
  ServerProcess server;
  std::vector<std::unique_ptr<ChildProcess>> clients;
  for (int i = 0; i < 8; ++i)
    clients.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{BURN_REMOTE_CLIENT_PATH, "train", server.address(), std::to_string(100 + i), "20"},
        (server.dir() / ("train" + std::to_string(i) + ".log")).string()));
  for (int i = 0; i < 8; ++i) {
    const auto status = clients[i]->wait_for(120s);
    ASSERT_TRUE(status.has_value()) << "client " << i << " did not finish in 120 s";
    std::ifstream in(server.dir() / ("train" + std::to_string(i) + ".log"));
    const std::string out{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    EXPECT_EQ(*status, 0) << "client " << i << ": " << out;
  }
}

TEST(RemoteFaults, AGibibyteRoundTripsInChunks) {
  ServerProcess server;
  const Device d = connect(server);
  const std::size_t n = (std::size_t{1} << 30) / sizeof(std::int32_t);
  std::vector<std::int32_t> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<std::int32_t>(i * 2654435761u);
  auto t = Tensor<1, Int>::from_data(TensorData(values, {n}), {d, DType::I32});
  const TensorData back = t.to_data();
  ASSERT_EQ(back.bytes().size(), n * sizeof(std::int32_t));
  EXPECT_EQ(std::memcmp(back.bytes().data(), values.data(), back.bytes().size()), 0);
}

}  // namespace
