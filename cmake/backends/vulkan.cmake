# The Vulkan backend (also serves Device::wgpu, see wgpu.cmake): its sources,
# the Vulkan loader, and the compute shaders, compiled by glslc at build time
# and embedded into the library as arrays of SPIR-V words.
if(BURN_BACKEND_STAGE STREQUAL "options")
  option(BURN_VULKAN "Device::vulkan(kind): Vulkan compute backend (needs the Vulkan loader and glslc)" OFF)
  return()
endif()
if(NOT BURN_VULKAN AND NOT BURN_WGPU)
  return()
endif()

find_package(Vulkan REQUIRED COMPONENTS glslc)

set(BURN_VK_DIR ${PROJECT_SOURCE_DIR}/src/backends/vulkan)
set(BURN_VK_GEN ${CMAKE_CURRENT_BINARY_DIR}/generated/vulkan_shaders)
file(GLOB burn_vk_sources CONFIGURE_DEPENDS ${BURN_VK_DIR}/*.cpp)
target_sources(burn PRIVATE ${burn_vk_sources})
target_link_libraries(burn PRIVATE Vulkan::Vulkan)
burn_backend_package_dependency(Vulkan)

# ---- one tensor slot's element type as glslc defines ----------------------------
# A shader reads or writes each tensor through <P>_T (storage type), <P>_C
# (the type it computes in), <P>_LOAD(v) / <P>_STORE(v) (conversions) and the
# flags <P>_FLOAT, <P>_INT, <P>_SIGNED, <P>_BOOL, <P>_WIDE (64-bit compute);
# int slots also get <P>_BITS, their range as float literals <P>_LO/<P>_HI
# and as integer literals <P>_MIN/<P>_MAX.
# Half types compute in f32 and 8/16-bit ints in 32 bits, so the shaders only
# need the storage features for them, never 8/16-bit arithmetic.
function(burn_vk_slot prefix dtype out)
  set(P ${prefix})
  set(f "")
  if(dtype STREQUAL "f64")
    list(APPEND f "-D${P}_T=double" "-D${P}_C=double" "-D${P}_LOAD(v)=double(v)" "-D${P}_STORE(v)=double(v)"
                  -D${P}_FLOAT=1 -D${P}_WIDE=1 -DNEED_FLOAT64=1)
  elseif(dtype STREQUAL "f32")
    list(APPEND f "-D${P}_T=float" "-D${P}_C=float" "-D${P}_LOAD(v)=float(v)" "-D${P}_STORE(v)=float(v)" -D${P}_FLOAT=1)
  elseif(dtype STREQUAL "f16")
    list(APPEND f "-D${P}_T=float16_t" "-D${P}_C=float" "-D${P}_LOAD(v)=float(v)" "-D${P}_STORE(v)=float16_t(v)"
                  -D${P}_FLOAT=1)
  elseif(dtype STREQUAL "bf16")
    list(APPEND f "-D${P}_T=uint16_t" "-D${P}_C=float" "-D${P}_LOAD(v)=bf16_load(v)" "-D${P}_STORE(v)=bf16_store(v)"
                  -D${P}_FLOAT=1)
  elseif(dtype MATCHES "^i(64|32|16|8)$")
    set(bits ${CMAKE_MATCH_1})
    if(bits STREQUAL "64")
      list(APPEND f "-D${P}_T=int64_t" "-D${P}_C=int64_t" "-D${P}_LOAD(v)=int64_t(v)" "-D${P}_STORE(v)=int64_t(v)"
                    -D${P}_WIDE=1 -DNEED_INT64=1)
    elseif(bits STREQUAL "32")
      list(APPEND f "-D${P}_T=int" "-D${P}_C=int" "-D${P}_LOAD(v)=int(v)" "-D${P}_STORE(v)=int(v)")
    else()
      list(APPEND f "-D${P}_T=int${bits}_t" "-D${P}_C=int" "-D${P}_LOAD(v)=int(v)" "-D${P}_STORE(v)=int${bits}_t(v)")
    endif()
    if(bits STREQUAL "64")
      set(hi 9223372036854775807)
    else()
      math(EXPR hi "(1 << (${bits} - 1)) - 1" OUTPUT_FORMAT DECIMAL)
    endif()
    # 64-bit literals are refused before the shader enables int64: build them.
    set(min "(-${hi} - 1)")
    set(max "${hi}")
    if(bits STREQUAL "64")
      set(min "(int64_t(1) << 63)")
      set(max "(~(int64_t(1) << 63))")
    endif()
    list(APPEND f -D${P}_INT=1 -D${P}_SIGNED=1 -D${P}_BITS=${bits} "-D${P}_LO=(-${hi}.0 - 1.0)" "-D${P}_HI=${hi}.0"
                  "-D${P}_MIN=${min}" "-D${P}_MAX=${max}")
  elseif(dtype MATCHES "^u(64|32|16|8)$")
    set(bits ${CMAKE_MATCH_1})
    if(bits STREQUAL "64")
      list(APPEND f "-D${P}_T=uint64_t" "-D${P}_C=uint64_t" "-D${P}_LOAD(v)=uint64_t(v)" "-D${P}_STORE(v)=uint64_t(v)"
                    -D${P}_WIDE=1 -DNEED_INT64=1)
    elseif(bits STREQUAL "32")
      list(APPEND f "-D${P}_T=uint" "-D${P}_C=uint" "-D${P}_LOAD(v)=uint(v)" "-D${P}_STORE(v)=uint(v)")
    else()
      list(APPEND f "-D${P}_T=uint${bits}_t" "-D${P}_C=uint" "-D${P}_LOAD(v)=uint(v)" "-D${P}_STORE(v)=uint${bits}_t(v)")
    endif()
    if(bits STREQUAL "64")
      set(hi 18446744073709551615)
    else()
      math(EXPR hi "(1 << ${bits}) - 1" OUTPUT_FORMAT DECIMAL)
    endif()
    set(max "${hi}u")
    if(bits STREQUAL "64")
      set(max "(~uint64_t(0))")
    endif()
    list(APPEND f -D${P}_INT=1 -D${P}_BITS=${bits} "-D${P}_LO=0.0" "-D${P}_HI=${hi}.0" "-D${P}_MIN=0u"
                  "-D${P}_MAX=${max}")
  elseif(dtype STREQUAL "bool")
    list(APPEND f "-D${P}_T=uint8_t" "-D${P}_C=uint" "-D${P}_LOAD(v)=uint(v)" "-D${P}_STORE(v)=uint8_t(v)" -D${P}_BOOL=1)
  else()
    message(FATAL_ERROR "burn_vk_slot: unknown dtype ${dtype}")
  endif()
  set(${out} ${f} PARENT_SCOPE)
endfunction()

# ---- burn_vk_shader(<source.comp> <variant-name> [glslc flags...]) ------------------
# Compiles one variant to SPIR-V words (glslc -mfmt=num) that the generated
# source for <source> includes; burn_vk_embed() below writes those sources.
set(BURN_VK_VARIANTS "" CACHE INTERNAL "")
function(burn_vk_shader source variant)
  set(inc ${BURN_VK_GEN}/${variant}.inc)
  add_custom_command(
    OUTPUT ${inc}
    COMMAND Vulkan::glslc --target-env=vulkan1.2 -O -Werror -I ${BURN_VK_DIR}/shaders
            -MD -MF ${inc}.d -mfmt=num ${ARGN} -o ${inc} ${BURN_VK_DIR}/shaders/${source}
    DEPENDS ${BURN_VK_DIR}/shaders/${source}
    DEPFILE ${inc}.d
    COMMENT "glslc ${variant}"
    VERBATIM)
  get_filename_component(group ${source} NAME_WE)
  set_property(GLOBAL APPEND PROPERTY BURN_VK_GROUP_${group} ${variant})
  set_property(GLOBAL APPEND PROPERTY BURN_VK_GROUPS ${group})
endfunction()

include(${BURN_VK_DIR}/shaders/shaders.cmake)

# One generated .cpp per shader source (its variants as arrays plus a table),
# and an index that lists every table: editing one shader rebuilds one file.
get_property(burn_vk_groups GLOBAL PROPERTY BURN_VK_GROUPS)
list(REMOVE_DUPLICATES burn_vk_groups)
set(index_decls "")
set(index_calls "")
foreach(group ${burn_vk_groups})
  get_property(variants GLOBAL PROPERTY BURN_VK_GROUP_${group})
  set(body "// Generated by cmake/backends/vulkan.cmake: the ${group} shader variants.\n")
  string(APPEND body "#include \"backends/vulkan/shader_registry.hpp\"\n\nnamespace burn::vulkan {\nnamespace {\n")
  set(table "")
  set(incs "")
  foreach(v ${variants})
    string(APPEND body "const std::uint32_t k_${v}[] = {\n#include \"${v}.inc\"\n};\n")
    string(APPEND table "    {\"${v}\", k_${v}},\n")
    list(APPEND incs ${BURN_VK_GEN}/${v}.inc)
  endforeach()
  string(APPEND body "}  // namespace\n\nvoid add_shaders_${group}(std::vector<ShaderBinary>& out) {\n")
  string(APPEND body "  const ShaderBinary table[] = {\n${table}  };\n  out.insert(out.end(), std::begin(table), std::end(table));\n}\n\n}  // namespace burn::vulkan\n")
  set(cpp ${BURN_VK_GEN}/shaders_${group}.cpp)
  file(CONFIGURE OUTPUT ${cpp} CONTENT "${body}")
  set_source_files_properties(${cpp} PROPERTIES OBJECT_DEPENDS "${incs}")
  target_sources(burn PRIVATE ${cpp})
  string(APPEND index_decls "void add_shaders_${group}(std::vector<ShaderBinary>&);\n")
  string(APPEND index_calls "    add_shaders_${group}(out);\n")
endforeach()
file(CONFIGURE OUTPUT ${BURN_VK_GEN}/shader_index.cpp CONTENT
"// Generated by cmake/backends/vulkan.cmake: every embedded shader variant.
#include \"backends/vulkan/shader_registry.hpp\"

namespace burn::vulkan {

${index_decls}
const std::vector<ShaderBinary>& all_shaders() {
  static const std::vector<ShaderBinary> shaders = [] {
    std::vector<ShaderBinary> out;
${index_calls}    return out;
  }();
  return shaders;
}

}  // namespace burn::vulkan
")
target_sources(burn PRIVATE ${BURN_VK_GEN}/shader_index.cpp)
target_include_directories(burn PRIVATE ${BURN_VK_GEN})
if(BURN_VULKAN)
  burn_register_backend(vulkan_factory)
endif()
