// The yardstick of the network benchmarks: bytes per second of a plain TCP
// copy over loopback (Boost.Asio, one sender thread and one receiver), what
// one link can carry on this machine in the same run.
#pragma once

#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

namespace burn_bench {

inline double socket_copy_bandwidth(std::size_t bytes) {
  namespace net = boost::asio;
  using tcp = net::ip::tcp;
  net::io_context ioc;
  tcp::acceptor acceptor(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  std::vector<char> out(bytes, 'x'), in(bytes);
  std::thread sender([&] {
    tcp::socket s(ioc);
    s.connect(acceptor.local_endpoint());
    net::write(s, net::buffer(out));
  });
  tcp::socket receiver = acceptor.accept();
  const auto start = std::chrono::steady_clock::now();
  net::read(receiver, net::buffer(in));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sender.join();
  return static_cast<double>(bytes) / seconds;
}

}  // namespace burn_bench
