# Device::cpu(): the fusion layer (src/fusion/, part of the core library,
# shared with cuda) over flex's kernels (src/backends/cpu/). It needs flex in
# the same build.
if(BURN_BACKEND_STAGE STREQUAL "options")
  option(BURN_CPU "Device::cpu(): flex behind lazy op fusion (needs BURN_FLEX)" ON)
  return()
endif()
if(NOT BURN_CPU)
  return()
endif()

if(NOT BURN_FLEX)
  message(FATAL_ERROR "BURN_CPU=ON needs BURN_FLEX=ON: Device::cpu() runs flex's kernels behind the fusion layer. "
                      "Turn BURN_FLEX on, or BURN_CPU off.")
endif()

file(GLOB burn_cpu_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backends/cpu/*.cpp)
target_sources(burn PRIVATE ${burn_cpu_sources})
burn_register_backend(cpu_factory)
