// The rendezvous store: a small key-value server on rank 0 (MASTER_ADDR:
// MASTER_PORT) through which the ranks exchange the addresses Gloo connects
// them by. Debian's Gloo has file, hash and Redis stores but no TCP store
// (PyTorch keeps its own TCPStore for the same reason), so this is ours,
// over Boost.Asio.
//
// Messages are length-prefixed: a u32 byte count, then the payload. A request
// is an op byte, the key (u32 length and bytes) and, for a set, the value
// (u32 length and bytes). A set is answered by one byte; a get by a found
// byte and, when found, the value. A get of a key not yet set is answered
// "not found" at once; the client asks again until its deadline, so the
// server never holds a request open.
//
// Each rank keeps its connection for the group's lifetime, named by a Hello:
// a connection that ends without a Bye marks its rank as dead, which is how
// the survivors of a failed collective learn which rank to name.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

namespace burn::collective {

/// Rank 0's side: serves the store on its own thread until destroyed, and
/// on destruction until every client has disconnected (at most 5 s), so the
/// other ranks can still learn which rank failed.
class StoreServer {
 public:
  /// Binds host:port (port 0: one the kernel picks); throws ExecutionError
  /// when it cannot (the port in use).
  StoreServer(const std::string& host, std::uint16_t port);
  /// The port it listens on.
  std::uint16_t port() const;
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Every rank's side (rank 0's too), as the Store Gloo's rendezvous uses.
/// Every call ends within the timeout: an ExecutionError naming the master.
class StoreClient final : public gloo::rendezvous::Store {
 public:
  /// Connects, retrying while the master is not up yet, until `timeout`.
  StoreClient(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout);
  ~StoreClient() override;
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  void set(const std::string& key, const std::vector<char>& data) override;
  /// Waits for the key (up to the timeout).
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

  /// Names this connection's rank: from now on the server notices when it
  /// goes (the connection closes without a bye()).
  void hello(int rank);
  /// The rank leaves the group on purpose; never throws.
  void bye() noexcept;
  /// "rank R how\n" for each rank that has gone, waiting up to `wait` for
  /// one to be known (a collective can fail a moment before the server sees
  /// the dead rank's connection close). Throws ExecutionError when the
  /// rendezvous itself does not answer (rank 0 is gone).
  std::string departed(std::chrono::milliseconds wait);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace burn::collective
