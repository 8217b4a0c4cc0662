// Remote devices: a device hosted by a burn-server in another process, on
// this machine or another, used exactly like a local one (docs/remote.md).
//
//   auto device = burn::Device::remote_options(burn::RemoteHost("127.0.0.1:7878"))
//                     .device("flex:0")
//                     .init();
#pragma once

#include <burn/config.hpp>

#if BURN_HAS_REMOTE

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <burn/device.hpp>

namespace burn {

/// How to connect a remote device; Device::remote_options(host) starts one.
class RemoteOptions {
 public:
  explicit RemoteOptions(RemoteHost host) : host_(std::move(host)) {}

  /// The server's device to compute on, as the server names it ("flex:0",
  /// "cuda:1"); default: the server's first device.
  RemoteOptions& device(std::string name) & {
    device_ = std::move(name);
    return *this;
  }
  RemoteOptions&& device(std::string name) && { return std::move(device(std::move(name))); }
  /// The shared secret the server was started with (--token-file). Default:
  /// the environment variable BURN_REMOTE_TOKEN, else none.
  RemoteOptions& token(std::string token) & {
    token_ = std::move(token);
    return *this;
  }
  RemoteOptions&& token(std::string token) && { return std::move(this->token(std::move(token))); }
  /// How long the server may stay silent (not even answering a ping) before
  /// the device counts as lost, and the limit for connecting. Default 10 s,
  /// or BURN_REMOTE_TIMEOUT_MS.
  RemoteOptions& timeout(std::chrono::milliseconds t) & {
    timeout_ = t;
    return *this;
  }
  RemoteOptions&& timeout(std::chrono::milliseconds t) && { return std::move(timeout(t)); }
  /// Connect over TLS (to a server started with --tls-cert/--tls-key),
  /// trusting the certificate authorities in this PEM file; the server's
  /// certificate must also name the host as given (DNS name or IP address).
  /// Default: the environment variable BURN_REMOTE_TLS_CA (a file, or
  /// "system"), else no TLS.
  RemoteOptions& tls_ca(std::string pem_file) & {
    tls_ca_ = std::move(pem_file);
    return *this;
  }
  RemoteOptions&& tls_ca(std::string pem_file) && { return std::move(tls_ca(std::move(pem_file))); }
  /// Connect over TLS trusting the system's certificate authorities (a
  /// server whose certificate a public CA signed).
  RemoteOptions& tls_system_ca() & {
    tls_ca_ = std::string();
    return *this;
  }
  RemoteOptions&& tls_system_ca() && { return std::move(tls_system_ca()); }

  /// Connects (once per host and server device: later calls return the same
  /// device) and returns the device. Throws DeviceError (NotAvailable) when
  /// the server cannot be reached, refuses the token, speaks another protocol
  /// version or has no such device.
  Device init() const;

  const RemoteHost& host() const noexcept { return host_; }

 private:
  RemoteHost host_;
  std::optional<std::string> device_;
  std::optional<std::string> token_;
  std::optional<std::chrono::milliseconds> timeout_;
  std::optional<std::string> tls_ca_;  ///< set: TLS; empty: the system's authorities
};

}  // namespace burn

#endif
