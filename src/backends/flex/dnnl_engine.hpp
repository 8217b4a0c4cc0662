// The process's oneDNN engine and the glue the flex module kernels share:
// wrapping CpuTensor storage as dnnl::memory (no copies), running primitives,
// and staging half-precision tensors through f32 where oneDNN lacks a kernel.
#pragma once

#include <dnnl.hpp>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "backends/flex/kernels.hpp"

namespace burn::flex::dnn {

/// One CPU engine for the process (oneDNN engines are thread-safe).
const dnnl::engine& engine();

/// oneDNN's element type for `d`, if it has one we may use (f32, bf16, f16).
std::optional<dnnl::memory::data_type> float_type(DType d);

dnnl::memory::dims to_dims(const std::vector<std::size_t>& v);

/// Whether oneDNN's kernels here are its AVX2 (or older) ones: the CPU has
/// no AVX-512, or oneDNN was told not to use it (ONEDNN_MAX_CPU_ISA).
bool isa_below_avx512();

/// Row-major descriptor of `shape`.
dnnl::memory::desc plain_desc(const std::vector<std::size_t>& shape, dnnl::memory::data_type dt);

/// A dnnl::memory viewing `t`'s storage (offset applied) through `md`.
dnnl::memory wrap(const dnnl::memory::desc& md, const host::CpuTensor& t);

/// Executes `prim` on a stream of the calling thread and waits for it.
/// Streams are per thread because the backend may be called from several
/// threads at once and a oneDNN stream must not be shared between them.
void execute(const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args);

/// Copies the tensor `from` holds into `to`, which describes the same dims
/// in another layout (oneDNN's reorder, or burn's own transpose between
/// plain and channels-last f32 activations: reorder.cpp).
void reorder(const dnnl::memory& from, const dnnl::memory& to);

/// A primitive argument held by the caller in a plain (row-major or
/// explicitly strided) layout.
struct PlainArg {
  int arg;  // DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, ...
  dnnl::memory::desc md;
  const host::CpuTensor* tensor;
  bool is_output = false;
};

/// Descriptor with the same dims and type as `md` but layout left to the
/// primitive (format_tag::any): oneDNN then picks its blocked layouts, whose
/// direct kernels are several times faster than im2col on plain NCHW.
dnnl::memory::desc any_layout(const dnnl::memory::desc& md);

/// Executes `prim`, reordering every argument whose layout differs from the
/// one `pd` chose: inputs into scratch buffers before (weights through the
/// packed-weights cache), outputs back after. `ready` holds arguments
/// already in the layout `pd` reads (post-op operands made by the caller).
void execute_with_layouts(const Context& ctx, const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd,
                          std::span<const PlainArg> args, const std::unordered_map<int, dnnl::memory>* ready = nullptr);

/// Creates a primitive descriptor, or nullopt when oneDNN has no
/// implementation for this case (the caller then falls back).
template <class PD, class... Args>
std::optional<PD> try_create(Args&&... args) {
  try {
    return PD(std::forward<Args>(args)...);
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

/// Appends the bytes of the attributes' scratchpad mode and post-ops
/// (eltwise, binary, sum) to `key`; false when a post-op is of another
/// kind, which the key would not tell apart. Other attributes are not part
/// of it: callers of `cached_primitive` set none.
bool append_attr_key(std::string& key, const dnnl::primitive_attr& attr);

/// A primitive descriptor with its primitive.
template <class Prim>
struct CachedPrimitive {
  typename Prim::primitive_desc pd;
  Prim prim;
};

/// Creates the primitive descriptor and primitive of a problem once and
/// keeps them for the process: building a descriptor runs oneDNN's
/// implementation search, about 7 us for a convolution (a fifth of the time
/// of a small one), and then its primitive has to be found again in oneDNN's
/// cache; a model's run asks for the same few problems every time. nullptr
/// when oneDNN has no implementation (remembered too).
template <class Prim>
std::shared_ptr<const CachedPrimitive<Prim>> cached_primitive(const typename Prim::desc& desc,
                                                              const dnnl::primitive_attr& attr);

/// oneDNN's general-purpose implementations (im2col + gemm, reference
/// loops), which it picks when no direct kernel takes the case.
inline bool is_fallback(const dnnl::primitive_desc_base& pd) {
  const std::string_view impl = pd.impl_info_str();
  return impl.find("gemm") != std::string_view::npos || impl.starts_with("ref");
}

/// True for a half-precision primitive that oneDNN would run with its
/// reference (emulated) implementation: converting to f32 is faster then.
inline bool slow_half(const dnnl::primitive_desc_base& pd, dnnl::memory::data_type dt) {
  return dt != dnnl::memory::data_type::f32 && std::string_view(pd.impl_info_str()).starts_with("ref");
}

/// The process's cache behind cached_primitive: type-erased values by key.
std::shared_ptr<const void> find_cached_primitive(const std::string& key, bool& found);
void store_cached_primitive(std::string key, std::shared_ptr<const void> value);

template <class Prim>
std::shared_ptr<const CachedPrimitive<Prim>> cached_primitive(const typename Prim::desc& desc,
                                                              const dnnl::primitive_attr& attr) {
  auto make = [&]() -> std::shared_ptr<const CachedPrimitive<Prim>> {
    auto pd = try_create<typename Prim::primitive_desc>(desc, attr, engine());
    return pd ? std::make_shared<const CachedPrimitive<Prim>>(CachedPrimitive<Prim>{*pd, Prim(*pd)}) : nullptr;
  };
  // The primitive's type, then the operation descriptor's bytes (oneDNN
  // 2.x keeps it as a plain C struct, zero-initialised before its fields
  // are set), then the attributes'.
  std::string key = typeid(Prim).name();
  key.append(reinterpret_cast<const char*>(&desc.data), sizeof desc.data);
  if (!append_attr_key(key, attr)) return make();
  bool found = false;
  if (auto hit = find_cached_primitive(key, found); found)
    return std::static_pointer_cast<const CachedPrimitive<Prim>>(hit);
  auto made = make();
  store_cached_primitive(std::move(key), made);
  return made;
}

/// A contiguous f32 copy of any float tensor view (halves widened exactly).
host::CpuTensorPtr to_f32(const Context& ctx, const host::CpuTensor& t);
/// Writes the contiguous f32 tensor `src` into the contiguous tensor `dst`
/// of a half dtype, rounding to nearest even.
void narrow_from_f32(const host::CpuTensor& src, host::CpuTensor& dst);

}  // namespace burn::flex::dnn
