# burn::collective (include/burn/collective.hpp): process groups of a
# data-parallel job over Gloo's TCP transport (Debian's libgloo-dev), with a
# rendezvous store of our own over Boost.Asio (src/collective/store.hpp says
# why), and the burn-run launcher. docs/distributed.md has the design.
if(NOT BURN_COLLECTIVE)
  return()
endif()

find_package(Gloo CONFIG QUIET)
if(NOT Gloo_FOUND)
  message(FATAL_ERROR "BURN_COLLECTIVE=ON needs Gloo: install it (Debian: apt install libgloo-dev) or turn "
                      "BURN_COLLECTIVE off.")
endif()
find_package(Boost 1.74 CONFIG QUIET)
if(NOT Boost_FOUND)
  message(FATAL_ERROR "BURN_COLLECTIVE=ON needs Boost.Asio (header-only): install it (Debian: apt install "
                      "libboost-dev) or turn BURN_COLLECTIVE off.")
endif()
find_package(Threads REQUIRED)

file(GLOB burn_collective_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/collective/*.cpp)
target_sources(burn PRIVATE ${burn_collective_sources})
# Gloo's and Boost's headers stay inside src/collective; a consumer links Gloo.
target_link_libraries(burn PRIVATE $<BUILD_INTERFACE:Boost::headers> gloo Threads::Threads)
burn_backend_package_dependency(Gloo CONFIG)
burn_backend_package_dependency(Threads)

# NCCL between CUDA devices (src/collective/nccl/): the CUDA runtime linked
# statically, NCCL opened with dlopen when a group asks for it.
if(BURN_HAS_NCCL)
  target_sources(burn PRIVATE ${PROJECT_SOURCE_DIR}/src/collective/nccl/nccl_comm.cpp)
  target_include_directories(burn PRIVATE ${BURN_NCCL_INCLUDE_DIR})
  target_link_libraries(burn PRIVATE CUDA::cudart_static ${CMAKE_DL_LIBS})
  burn_backend_package_dependency(CUDAToolkit)
  message(STATUS "burn: collectives over NCCL too (${BURN_NCCL_INCLUDE_DIR}/nccl.h)")
endif()
