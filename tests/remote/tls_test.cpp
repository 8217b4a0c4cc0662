// TLS between a client and burn-server: a server given --tls-cert/--tls-key
// serves only TLS clients that trust its CA and reach it by the name its
// certificate carries; every mismatch is a clear error on the side that can
// fix it, and the server goes on serving. Real processes on 127.0.0.1, with
// certificates made for the test.
#include <fstream>

#include <burn_test.hpp>
#include <server_process.hpp>
#include <tls_files.hpp>

namespace {

using namespace burn;
using namespace std::chrono_literals;
using burn::testing::ChildProcess;
using burn::testing::expect_error;
using burn::testing::ServerProcess;
using burn::testing::TlsFiles;

std::vector<std::string> tls_server_args(const TlsFiles& files) {
  return {"--device", "flex:0", "--tls-cert", files.server_cert(), "--tls-key", files.server_key_file()};
}

void expect_computes(const Device& d) {
  const auto x = Tensor<1>::from_data(TensorData(std::vector<float>{1, 2, 3}, Shape{3}), d);
  burn::testing::expect_values((x * 2.0 + 1.0).to_data(), {3, 5, 7}, {3});
}

TEST(RemoteTls, AClientTrustingTheServersCaComputesAndTrains) {
  const TlsFiles files("serve");
  const auto token_file = std::filesystem::path(files.ca_cert()).parent_path() / "token";
  std::ofstream(token_file) << "tls-token\n";
  auto args = tls_server_args(files);
  args.insert(args.end(), {"--token-file", token_file.string()});
  ServerProcess server(args);
  EXPECT_NE(server.log().find(", TLS"), std::string::npos) << server.log();

  const Device d =
      Device::remote_options(RemoteHost{server.address()}).tls_ca(files.ca_cert()).token("tls-token").init();
  expect_computes(d);
  // Autodiff over the encrypted connection: d(sum(x^2))/dx = 2x.
  const Device ad = d.autodiff();
  auto x = Tensor<1>::from_data(TensorData(std::vector<float>{1, -2, 3}, Shape{3}), ad).require_grad();
  auto grads = (x * x).sum().backward();
  burn::testing::expect_values(x.grad(grads).value().to_data(), {2, -4, 6}, {3});
}

TEST(RemoteTls, ThePlainClientIsRefusedWithAHintAndTheServerGoesOn) {
  const TlsFiles files("plain-client");
  ServerProcess server(tls_server_args(files));
  expect_error([&] { Device::remote_options(RemoteHost{server.address()}).timeout(5s).init(); }, "tls_ca");
  // The server logged why, and still serves a client that speaks TLS.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (server.log().find("without TLS") == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  EXPECT_NE(server.log().find("a client without TLS"), std::string::npos) << server.log();
  expect_computes(Device::remote_options(RemoteHost{server.address()}).tls_ca(files.ca_cert()).init());
}

TEST(RemoteTls, ACertificateFromAnotherAuthorityIsRefused) {
  const TlsFiles files("server-ca");
  const TlsFiles other("other-ca");
  ServerProcess server(tls_server_args(files));
  expect_error([&] { Device::remote_options(RemoteHost{server.address()}).tls_ca(other.ca_cert()).timeout(5s).init(); },
               "certificate verify failed");
  expect_computes(Device::remote_options(RemoteHost{server.address()}).tls_ca(files.ca_cert()).init());
}

TEST(RemoteTls, TheCertificateMustNameTheHostConnectedTo) {
  // A certificate the trusted CA signed, but for another address than the
  // one connected to (127.0.0.1; no host name, which a minimal system may
  // not resolve).
  const TlsFiles files("host-name", "127.0.0.2");
  ServerProcess server(tls_server_args(files));
  expect_error([&] { Device::remote_options(RemoteHost{server.address()}).tls_ca(files.ca_cert()).timeout(5s).init(); },
               "certificate verify failed");
}

TEST(RemoteTls, ATlsClientOfAPlainServerIsToldTheServerHasNoTls) {
  const TlsFiles files("plain-server");
  ServerProcess server;
  expect_error([&] { Device::remote_options(RemoteHost{server.address()}).tls_ca(files.ca_cert()).timeout(5s).init(); },
               "TLS handshake failed");
  expect_computes(Device::remote_options(RemoteHost{server.address()}).init());
}

TEST(RemoteTls, TheEnvironmentTurnsTlsOnForDeviceStrings) {
  const TlsFiles files("env");
  ServerProcess server(tls_server_args(files));
  ::setenv("BURN_REMOTE_TLS_CA", files.ca_cert().c_str(), 1);
  std::optional<Device> d;
  try {
    d = Device::parse("remote:" + server.address() + "/flex:0");
  } catch (...) {
    ::unsetenv("BURN_REMOTE_TLS_CA");
    throw;
  }
  ::unsetenv("BURN_REMOTE_TLS_CA");
  expect_computes(*d);
  // A CA file that is not there is named.
  expect_error(
      [&] { Device::remote_options(RemoteHost{server.address()}).tls_ca(files.ca_cert() + ".missing").init(); },
      "cannot load the TLS CA file");
}

/// burn-server's exit status and output for a command line that must fail.
std::pair<int, std::string> run_server(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv{BURN_SERVER_PATH, "--listen", "127.0.0.1:0"};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess p(argv, log);
  const auto status = p.wait_for(20s);
  std::ifstream in(log);
  return {status.value_or(-1), std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>())};
}

TEST(RemoteTls, TheServerRefusesIncompleteOrMismatchedTlsFiles) {
  const TlsFiles files("flags");
  const std::string log = std::filesystem::path(files.ca_cert()).parent_path() / "server.log";
  auto [status, out] = run_server({"--tls-cert", files.server_cert()}, log);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("--tls-cert needs --tls-key"), std::string::npos) << out;

  std::filesystem::remove(log);
  std::tie(status, out) = run_server({"--tls-cert", files.server_cert(), "--tls-key", files.ca_key_file()}, log);
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("is not the key of the certificate"), std::string::npos) << out;

  std::filesystem::remove(log);
  std::tie(status, out) =
      run_server({"--tls-cert", files.server_key_file(), "--tls-key", files.server_key_file()}, log);
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("cannot load a PEM certificate chain"), std::string::npos) << out;
}

}  // namespace
