# Device::capture(): a device that records operations into a graph instead of
# running them (src/backends/capture/), the front half of ONNX export
# (BURN_ONNX) and of burn::trace (src/trace/: a function recorded once and
# replayed on any device). No dependencies.
if(BURN_BACKEND_STAGE STREQUAL "options")
  option(BURN_CAPTURE "Device::capture(): record operations into a graph (ONNX export, burn::trace)" ON)
  return()
endif()
if(NOT BURN_CAPTURE)
  return()
endif()

file(GLOB burn_capture_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backends/capture/*.cpp
     ${PROJECT_SOURCE_DIR}/src/trace/*.cpp)
target_sources(burn PRIVATE ${burn_capture_sources})
burn_register_backend(capture_factory)
