# Device::wgpu(kind): the graphics API is chosen automatically, and on Linux
# (the only platform this build targets) that is Vulkan, so wgpu devices are
# the Vulkan backend under another name: vulkan.cmake builds the backend when
# either option is ON, and this file registers the wgpu family
# (src/backends/vulkan/factory.cpp).
if(BURN_BACKEND_STAGE STREQUAL "options")
  option(BURN_WGPU "Device::wgpu(kind): automatic graphics API (Vulkan on Linux; the Vulkan backend)" OFF)
  return()
endif()
if(NOT BURN_WGPU)
  return()
endif()

burn_register_backend(wgpu_factory)
