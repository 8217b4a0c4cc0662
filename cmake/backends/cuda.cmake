# The CUDA backend (Device::cuda(i)): kernels are CUDA C++ generated from the
# op IR and compiled at run time by NVRTC for the device's own architecture.
#
# Nothing of CUDA is linked: the driver (libcuda.so.1) and NVRTC
# (libnvrtc.so.<major>) are opened with dlopen on first use, and cuBLASLt
# (libcublasLt.so.<major>, matmul) when a device is created, so a build with
# CUDA loads and runs on a machine without an NVIDIA driver or toolkit, where
# Device::cuda() is a DeviceError and Device() skips CUDA. The toolkit is
# needed at build time for its headers (cuda.h, nvrtc.h, cublasLt.h) only.
#
# AUTO (the default): on where the headers of CUDA 12 or newer are found.
if(BURN_BACKEND_STAGE STREQUAL "options")
  set(BURN_CUDA AUTO CACHE STRING "Device::cuda(i): CUDA backend: AUTO (on where the CUDA toolkit is found), ON or OFF")
  set_property(CACHE BURN_CUDA PROPERTY STRINGS AUTO ON OFF)
  if(NOT BURN_CUDA STREQUAL "OFF")
    find_package(CUDAToolkit QUIET)
    set(burn_cuda_headers_found OFF)
    if(CUDAToolkit_FOUND)
      find_path(BURN_CUDA_INCLUDE_DIR NAMES cuda.h nvrtc.h HINTS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
      # CUDA 12 and newer name NVRTC's library after the major version alone.
      if(BURN_CUDA_INCLUDE_DIR AND EXISTS ${BURN_CUDA_INCLUDE_DIR}/nvrtc.h AND EXISTS ${BURN_CUDA_INCLUDE_DIR}/cublasLt.h
         AND CUDAToolkit_VERSION_MAJOR GREATER_EQUAL 12)
        set(burn_cuda_headers_found ON)
      endif()
    endif()
    if(BURN_CUDA STREQUAL "AUTO")
      # A normal variable shadows the cache entry: the rest of the build sees ON or OFF.
      set(BURN_CUDA ${burn_cuda_headers_found})
    elseif(NOT burn_cuda_headers_found)
      message(FATAL_ERROR "BURN_CUDA=ON needs the headers (cuda.h, nvrtc.h, cublasLt.h) of CUDA 12 or newer: install the "
                          "toolkit (docs/cuda.md), set CUDAToolkit_ROOT, or use BURN_CUDA=AUTO or OFF.")
    endif()
  endif()
  return()
endif()
if(NOT BURN_CUDA)
  return()
endif()

file(GLOB burn_cuda_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backends/cuda/*.cpp)
target_sources(burn PRIVATE ${burn_cuda_sources})
target_include_directories(burn PRIVATE ${BURN_CUDA_INCLUDE_DIR})
# NVRTC's and cuBLASLt's sonames carry the toolkit's major version; the
# driver's is fixed.
target_compile_definitions(burn PRIVATE BURN_CUDA_NVRTC_LIBRARY="libnvrtc.so.${CUDAToolkit_VERSION_MAJOR}"
                                        BURN_CUDA_CUBLASLT_LIBRARY="libcublasLt.so.${CUDAToolkit_VERSION_MAJOR}")
# cuDNN is versioned on its own (9 for CUDA 12 and 13) and installed apart
# from the toolkit; built without its header (cudnn.cpp checks), the
# convolutions run on burn's kernels.
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/backends/cuda/cudnn.cpp PROPERTIES COMPILE_DEFINITIONS
                            BURN_CUDA_CUDNN_LIBRARY="libcudnn.so.9")
target_link_libraries(burn PRIVATE ${CMAKE_DL_LIBS})
burn_register_backend(cuda_factory)
message(STATUS "burn: CUDA backend (headers of CUDA ${CUDAToolkit_VERSION}; driver and NVRTC loaded at run time)")
