# burn::onnx (include/burn/onnx.hpp): ONNX export through Device::capture()
# and import onto any device. The ONNX protobuf schema, its generated C++
# classes, the checker and shape inference come from Debian's libonnx-dev
# (with libprotobuf); nothing of ONNX is copied into this repository.
if(NOT BURN_ONNX)
  return()
endif()
if(NOT BURN_CAPTURE)
  message(FATAL_ERROR "BURN_ONNX=ON needs BURN_CAPTURE=ON (export records the model on Device::capture())")
endif()

find_package(ONNX CONFIG QUIET)
find_package(Protobuf QUIET)
if(NOT ONNX_FOUND OR NOT Protobuf_FOUND)
  message(FATAL_ERROR "BURN_ONNX=ON needs ONNX's C++ library and protobuf: install them (Debian: apt install "
                      "libonnx-dev libprotobuf-dev) or turn BURN_ONNX off.")
endif()

file(GLOB burn_onnx_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/onnx/*.cpp)
target_sources(burn PRIVATE ${burn_onnx_sources})
# ONNX's headers stay inside src/onnx; a consumer of an installed burn links the libraries.
target_link_libraries(burn PRIVATE onnx onnx_proto protobuf::libprotobuf)
burn_backend_package_dependency(ONNX CONFIG)
burn_backend_package_dependency(Protobuf)
