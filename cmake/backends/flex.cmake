# Device::flex(): the eager, optimised CPU backend (src/backends/flex/):
# oneDNN for matmul, convolution and pooling, Highway for SIMD kernels.
if(BURN_BACKEND_STAGE STREQUAL "options")
  option(BURN_FLEX "Device::flex(): eager, optimised CPU backend" ON)
  return()
endif()
if(NOT BURN_FLEX)
  return()
endif()

find_package(dnnl REQUIRED)
find_package(hwy REQUIRED)  # Highway: SIMD with the instruction set chosen at run time
file(GLOB_RECURSE burn_flex_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backends/flex/*.cpp)
target_sources(burn PRIVATE ${burn_flex_sources})
target_link_libraries(burn PRIVATE DNNL::dnnl hwy::hwy)
burn_backend_package_dependency(dnnl)
burn_backend_package_dependency(hwy)
burn_register_backend(flex_factory)
