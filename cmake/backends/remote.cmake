# Remote devices (Device::remote_options(host).init()): the client backend in
# src/backends/remote/ and the burn-server program (apps/burn-server). Both
# speak the protocol in src/backends/remote/protocol.hpp over Boost.Beast
# websockets (header-only: Debian's libboost-dev; docs/remote.md says why
# Beast rather than gRPC), over TLS through OpenSSL (libssl-dev) when the
# server has a certificate.
if(BURN_BACKEND_STAGE STREQUAL "options")
  option(BURN_REMOTE "Device::remote_options(host): devices of a burn-server (Boost.Beast websockets)" OFF)
  return()
endif()
if(NOT BURN_REMOTE)
  return()
endif()

find_package(Boost 1.74 CONFIG QUIET)
if(NOT Boost_FOUND)
  message(FATAL_ERROR "BURN_REMOTE=ON needs Boost.Beast (header-only): install it (Debian: apt install "
                      "libboost-dev) or turn BURN_REMOTE off.")
endif()
find_package(OpenSSL 1.1 QUIET)
if(NOT OPENSSL_FOUND)
  message(FATAL_ERROR "BURN_REMOTE=ON needs OpenSSL for TLS connections: install it (Debian: apt install "
                      "libssl-dev) or turn BURN_REMOTE off.")
endif()
find_package(Threads REQUIRED)

file(GLOB burn_remote_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backends/remote/*.cpp)
target_sources(burn PRIVATE ${burn_remote_sources})
# Boost's and OpenSSL's headers are needed only by channel.cpp; a consumer of
# an installed burn needs no Boost, and OpenSSL only to link.
target_link_libraries(burn PRIVATE $<BUILD_INTERFACE:Boost::headers> OpenSSL::SSL OpenSSL::Crypto Threads::Threads)
burn_register_backend(remote_factory)
burn_backend_package_dependency(Threads)
burn_backend_package_dependency(OpenSSL)
