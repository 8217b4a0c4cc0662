# Device::wgpu(kind): the graphics API is chosen automatically, and on Linux
# (the only platform this build targets) that is Vulkan, so wgpu devices are
# the Vulkan backend under another name (src/backends/vulkan/factory.cpp).
include(${CMAKE_CURRENT_LIST_DIR}/vulkan.cmake)
