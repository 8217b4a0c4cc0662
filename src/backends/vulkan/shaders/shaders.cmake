# Every shader variant the Vulkan backend embeds: burn_vk_shader(<source>
# <variant> <glslc flags>); burn_vk_slot(<prefix> <dtype> <var>) gives the
# flags that type one tensor slot (cmake/backends/vulkan.cmake). Variants are
# named <shader>_<dtype>[_<dtype>] with burn's dtype names (dtype_name()).
set(burn_vk_all_dtypes f64 f32 f16 bf16 i64 i32 i16 i8 u64 u32 u16 u8 bool)
set(burn_vk_numeric_dtypes f64 f32 f16 bf16 i64 i32 i16 i8 u64 u32 u16 u8)
set(burn_vk_float_dtypes f64 f32 f16 bf16)

burn_vk_shader(fill.comp fill)
foreach(bits 8 16 32 64)
  burn_vk_shader(copy.comp copy_${bits} -DELEM_BITS=${bits})
endforeach()

foreach(t ${burn_vk_numeric_dtypes})
  burn_vk_slot(O ${t} o)
  burn_vk_shader(arange.comp arange_${t} ${o})
endforeach()

foreach(from ${burn_vk_all_dtypes})
  burn_vk_slot(A ${from} a)
  foreach(to ${burn_vk_all_dtypes})
    if(NOT from STREQUAL to)
      burn_vk_slot(O ${to} o)
      burn_vk_shader(cast.comp cast_${from}_${to} ${a} ${o})
    endif()
  endforeach()
endforeach()

burn_vk_slot(O bool obool)
foreach(t ${burn_vk_all_dtypes})
  burn_vk_slot(A ${t} a)
  burn_vk_slot(O ${t} o)
  burn_vk_shader(unary.comp unary_${t} ${a} ${o})
  burn_vk_shader(binary.comp binary_${t} ${a} ${o})
  burn_vk_shader(binary.comp binary_cmp_${t} ${a} ${obool} -DCMP=1)
  if(t IN_LIST burn_vk_float_dtypes)
    burn_vk_shader(unary.comp unary_pred_${t} ${a} ${obool} -DPRED=1)
  endif()
  if(t IN_LIST burn_vk_numeric_dtypes)
    burn_vk_shader(clamp.comp clamp_${t} ${a})
  endif()
endforeach()

# Reductions: values (sum, prod, float mean, max, min), int mean summed in 64
# bits, arg max/min to i64 or i32 indices, any/all to bool.
set(burn_vk_int_dtypes i64 i32 i16 i8 u64 u32 u16 u8)
foreach(t ${burn_vk_all_dtypes})
  burn_vk_slot(A ${t} a)
  burn_vk_slot(O ${t} o)
  burn_vk_shader(reduce.comp reduce_anyall_${t} ${a} ${obool} -DANYALL=1)
  if(t IN_LIST burn_vk_numeric_dtypes)
    burn_vk_shader(reduce.comp reduce_${t} ${a} ${o})
    foreach(idx i64 i32)
      burn_vk_slot(O ${idx} oidx)
      burn_vk_shader(reduce.comp reduce_arg_${t}_${idx} ${a} ${oidx} -DARG=1)
    endforeach()
  endif()
  if(t IN_LIST burn_vk_int_dtypes)
    burn_vk_shader(reduce.comp reduce_mean_${t} ${a} ${o} -DWIDE_ACC=1 -DNEED_INT64=1)
  endif()
endforeach()

# Matmul and conv stage 4-wide vectors where layouts allow (A_V4): 32- and
# 64-bit types, whose vectors need no conversion (vec4_types() in launch.hpp
# lists the same dtypes).
set(burn_vk_v4_f64 dvec4)
set(burn_vk_v4_f32 vec4)
set(burn_vk_v4_i64 i64vec4)
set(burn_vk_v4_i32 ivec4)
set(burn_vk_v4_u64 u64vec4)
set(burn_vk_v4_u32 uvec4)
function(burn_vk_v4 t out)
  set(${out} "" PARENT_SCOPE)
  if(DEFINED burn_vk_v4_${t})
    set(${out} -DA_V4=${burn_vk_v4_${t}} PARENT_SCOPE)
  endif()
endfunction()

foreach(t ${burn_vk_numeric_dtypes})
  burn_vk_slot(A ${t} a)
  burn_vk_v4(${t} v4)
  burn_vk_shader(matmul.comp matmul_${t} ${a} ${v4})
endforeach()

# Indexing and masks: elements move as raw bits; indices are bounds-checked
# per index dtype, then used as i32.
foreach(bits 8 16 32 64)
  burn_vk_shader(mask.comp mask_${bits} -DELEM_BITS=${bits})
  burn_vk_shader(gather.comp gather_${bits} -DELEM_BITS=${bits})
endforeach()
foreach(t ${burn_vk_int_dtypes})
  burn_vk_slot(I ${t} i)
  burn_vk_shader(index_check.comp index_check_${t} ${i})
endforeach()
foreach(t ${burn_vk_all_dtypes})
  burn_vk_slot(A ${t} a)
  burn_vk_shader(scatter.comp scatter_${t} ${a})
endforeach()

# Scans, sorts (chunks in workgroup memory, then merge passes for long lines)
# and max pooling: every numeric dtype.
foreach(t ${burn_vk_numeric_dtypes})
  burn_vk_slot(A ${t} a)
  burn_vk_shader(scan.comp scan_${t} ${a})
  burn_vk_shader(sort.comp sort_${t} ${a})
  burn_vk_shader(merge.comp merge_${t} ${a})
  burn_vk_shader(pool.comp pool_${t} ${a})
endforeach()

# Convolutions and resizing: floats.
foreach(t ${burn_vk_float_dtypes})
  burn_vk_slot(A ${t} a)
  burn_vk_v4(${t} v4)
  burn_vk_shader(conv.comp conv_${t} ${a} ${v4})
  burn_vk_shader(interpolate.comp interpolate_${t} ${a})
endforeach()
