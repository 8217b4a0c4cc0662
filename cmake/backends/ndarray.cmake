# Device::ndarray(): the reference CPU backend (src/backends/ndarray/), plain
# loops the other backends are tested against. No dependencies.
if(BURN_BACKEND_STAGE STREQUAL "options")
  option(BURN_NDARRAY "Device::ndarray(): simple reference CPU backend (oracle)" ON)
  return()
endif()
if(NOT BURN_NDARRAY)
  return()
endif()

file(GLOB_RECURSE burn_ndarray_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backends/ndarray/*.cpp)
target_sources(burn PRIVATE ${burn_ndarray_sources})
burn_register_backend(ndarray_factory)
