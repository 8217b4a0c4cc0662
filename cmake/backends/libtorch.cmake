# The LibTorch backend (Device::libtorch()): every IR op through ATen.
#
# Only engine.cpp and ops.cpp include torch headers. They compile in an object
# library that takes torch's include dirs and definitions (USE_DISTRIBUTED,
# _GLIBCXX_USE_CXX11_ABI, ...); its objects join `burn`, which links torch
# for linking only, so the flags reach neither burn's other sources nor its
# consumers. The rest of the backend is ordinary burn code.
if(BURN_BACKEND_STAGE STREQUAL "options")
  option(BURN_LIBTORCH "Device::libtorch(): LibTorch backend (ATen)" OFF)
  return()
endif()
if(NOT BURN_LIBTORCH)
  return()
endif()

find_package(Torch CONFIG QUIET)
if(NOT Torch_FOUND)
  message(FATAL_ERROR "BURN_LIBTORCH=ON needs LibTorch: install it (Debian: apt install libtorch-dev) "
                      "or point Torch_DIR at its TorchConfig.cmake; or turn BURN_LIBTORCH off.")
endif()

set(burn_libtorch_dir ${PROJECT_SOURCE_DIR}/src/backends/libtorch)
set(burn_libtorch_aten_sources ${burn_libtorch_dir}/engine.cpp ${burn_libtorch_dir}/ops.cpp)
file(GLOB burn_libtorch_sources CONFIGURE_DEPENDS ${burn_libtorch_dir}/*.cpp)
list(REMOVE_ITEM burn_libtorch_sources ${burn_libtorch_aten_sources})

add_library(burn_libtorch_aten OBJECT ${burn_libtorch_aten_sources})
target_include_directories(burn_libtorch_aten PRIVATE $<TARGET_PROPERTY:burn,INCLUDE_DIRECTORIES>)
# burn_warnings is defined after this file is included; target names resolve at generate time.
target_link_libraries(burn_libtorch_aten PRIVATE torch fmt::fmt burn_warnings)

target_sources(burn PRIVATE ${burn_libtorch_sources} $<TARGET_OBJECTS:burn_libtorch_aten>)
target_link_libraries(burn PRIVATE $<LINK_ONLY:torch>)
burn_backend_package_dependency(Torch CONFIG)
burn_register_backend(libtorch_factory)
