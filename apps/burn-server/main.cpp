// burn-server: hosts this machine's devices for burn clients
// (Device::remote_options(host).init()); see docs/remote.md.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include <burn/burn.hpp>

#include "log.hpp"
#include "server.hpp"

namespace {

constexpr std::string_view kUsage = R"(Usage: burn-server [options]

Hosts this machine's devices (flex, cpu, ndarray, vulkan, libtorch, ... as built)
for burn clients: Device::remote_options(burn::RemoteHost("HOST:PORT")).init(),
or BURN_DEVICE=remote:HOST:PORT/flex:0. Stops cleanly on SIGINT or SIGTERM.

Options:
  --listen HOST:PORT        address to serve on (default 127.0.0.1:7878; port 0 picks
                            a free port, see --port-file). An address other than
                            loopback needs --token-file.
  --token-file FILE         clients must present the secret in FILE (its first line)
                            as RemoteOptions::token or BURN_REMOTE_TOKEN
  --tls-cert FILE           serve over TLS with this PEM certificate chain (the
                            server's own first); needs --tls-key. Clients connect
                            with RemoteOptions::tls_ca or BURN_REMOTE_TLS_CA
  --tls-key FILE            the certificate's private key (PEM, unencrypted)
  --device NAME             host only this device (flex:0, ndarray, vulkan:0, ...);
                            repeat for several. Default: every device of this build.
  --max-session-memory MIB  tensor memory one client session may hold (default: no limit)
  --idle-timeout-ms MS      drop a client not heard from (not even a ping answer) for
                            this long (default 30000)
  --port-file FILE          write the port served on to FILE once listening
  --quiet                   no log lines (errors at start-up are still printed)
  --help                    this text
)";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::uint64_t parse_number(std::string_view flag, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 15)
    throw UsageError(fmt::format("{} expects a whole number, got '{}'", flag, text));
  return std::stoull(text);
}

std::string read_token(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--token-file {}: cannot read the file", path));
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) throw UsageError(fmt::format("--token-file {}: the first line is empty", path));
  return token;
}

// Written whole or not at all: a test reading it never sees half a number.
void write_port_file(const std::string& path, std::uint16_t port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out) throw std::runtime_error(fmt::format("--port-file {}: cannot write", path));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error(fmt::format("--port-file {}: cannot write", path));
}

}  // namespace

int main(int argc, char** argv) {
  burn_server::ServerOptions options;
  std::string port_file;
  std::string tls_cert;
  std::string tls_key;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw UsageError(fmt::format("{} needs a value", arg));
        return argv[++i];
      };
      if (arg == "--help" || arg == "-h") {
        std::fputs(kUsage.data(), stdout);
        return 0;
      } else if (arg == "--listen") {
        options.listen = value();
      } else if (arg == "--token-file") {
        options.token = read_token(value());
      } else if (arg == "--tls-cert") {
        tls_cert = value();
      } else if (arg == "--tls-key") {
        tls_key = value();
      } else if (arg == "--device") {
        options.devices.push_back(value());
      } else if (arg == "--max-session-memory") {
        options.max_session_bytes = parse_number(arg, value()) << 20;
      } else if (arg == "--idle-timeout-ms") {
        const auto ms = parse_number(arg, value());
        if (ms == 0) throw UsageError("--idle-timeout-ms must be at least 1");
        options.idle_timeout = std::chrono::milliseconds(ms);
      } else if (arg == "--port-file") {
        port_file = value();
      } else if (arg == "--quiet") {
        burn_server::set_quiet(true);
      } else {
        throw UsageError(fmt::format("unknown option '{}'", arg));
      }
    }
    if (tls_cert.empty() != tls_key.empty())
      throw UsageError(tls_cert.empty() ? "--tls-key needs --tls-cert (the certificate it belongs to)"
                                        : "--tls-cert needs --tls-key (the certificate's private key)");
    if (!tls_cert.empty()) options.tls = burn::remote::ServerTls{tls_cert, tls_key};
    std::string host;
    try {
      host = burn::remote::split_address(options.listen).first;
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--listen: {}", e.what()));
    }
    if (!burn_server::is_loopback(host) && options.token.empty())
      throw UsageError(fmt::format(
          "refusing to listen on {} without a token: anyone who reaches that address could use this machine's "
          "devices. Give --token-file FILE (clients pass the same secret), or listen on 127.0.0.1",
          options.listen));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "burn-server: %s\n(burn-server --help lists the options)\n", e.what());
    return 2;
  }

  // SIGINT and SIGTERM are taken by one thread that stops the server; every
  // other thread (started after this) has them blocked. SIGUSR1 is how main
  // releases that thread when the server stopped some other way.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  try {
    burn_server::Server server(options);
    for (const auto& d : server.devices()) burn_server::log("hosting {}: {}", d.info.name, d.info.description);
    burn_server::log("listening on {} (port {}){}{}", options.listen, server.port(), options.tls ? ", TLS" : "",
                     options.token.empty() ? "" : ", token required");
    // Last: whoever waits for the port file (a launcher, a test) may read the
    // log the moment it appears, and must find the start-up lines there.
    if (!port_file.empty()) write_port_file(port_file, server.port());
    if (!options.tls && !burn_server::is_loopback(burn::remote::split_address(options.listen).first))
      burn_server::log(
          "warning: no TLS: the token and the tensor data cross the network unencrypted "
          "(give --tls-cert and --tls-key)");
    std::thread signal_thread([&] {
      int sig = 0;
      sigwait(&signals, &sig);
      if (sig != SIGINT && sig != SIGTERM) return;
      burn_server::log("{}: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
      server.stop();
    });
    server.run();
    // The signal thread is still waiting when run() ended some other way.
    pthread_kill(signal_thread.native_handle(), SIGUSR1);
    signal_thread.join();
    burn_server::log("stopped");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "burn-server: %s\n", e.what());
    return 1;
  }
}
