#include "backends/flex/dnnl_engine.hpp"

#include <mutex>
#include <string>

#include "backends/flex/element.hpp"
#include "backends/flex/packed_weights.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::flex::dnn {

const dnnl::engine& engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

std::optional<dnnl::memory::data_type> float_type(DType d) {
  switch (d) {
    case DType::F32: return dnnl::memory::data_type::f32;
    case DType::BF16: return dnnl::memory::data_type::bf16;
    case DType::F16: return dnnl::memory::data_type::f16;
    default: return std::nullopt;
  }
}

dnnl::memory::dims to_dims(const std::vector<std::size_t>& v) { return dnnl::memory::dims(v.begin(), v.end()); }

dnnl::memory::desc plain_desc(const std::vector<std::size_t>& shape, dnnl::memory::data_type dt) {
  const auto strides = host::contiguous_strides(shape);
  return dnnl::memory::desc(to_dims(shape), dt, dnnl::memory::dims(strides.begin(), strides.end()));
}

dnnl::memory wrap(const dnnl::memory::desc& md, const host::CpuTensor& t) {
  return dnnl::memory(md, engine(), static_cast<void*>(t.base()));
}

void execute(const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args) {
  thread_local dnnl::stream stream(engine());
  prim.execute(stream, args);
  stream.wait();
}

namespace {

template <class T>
void append_bytes(std::string& key, const T& value) {
  key.append(reinterpret_cast<const char*>(&value), sizeof value);
}

}  // namespace

bool append_attr_key(std::string& key, const dnnl::primitive_attr& attr) {
  append_bytes(key, attr.get_scratchpad_mode());
  const dnnl::post_ops post = attr.get_post_ops();
  for (int i = 0; i < post.len(); ++i) {
    const dnnl::primitive::kind kind = post.kind(i);
    append_bytes(key, kind);
    if (kind == dnnl::primitive::kind::eltwise) {
      float scale = 0, alpha = 0, beta = 0;
      dnnl::algorithm alg{};
      post.get_params_eltwise(i, scale, alg, alpha, beta);
      append_bytes(key, alg);
      for (float v : {scale, alpha, beta}) append_bytes(key, v);
    } else if (kind == dnnl::primitive::kind::binary) {
      dnnl::algorithm alg{};
      dnnl::memory::desc md;
      post.get_params_binary(i, alg, md);
      append_bytes(key, alg);
      append_bytes(key, md.data);
    } else if (kind == dnnl::primitive::kind::sum) {
      float scale = 0;
      dnnl::memory::data_type dt{};
      post.get_params_sum(i, scale, dt);
      append_bytes(key, scale);
      append_bytes(key, dt);
    } else {
      return false;  // a post-op the key does not describe
    }
  }
  return true;
}

namespace {

/// Enough for every problem of a few models; past it the cache starts over
/// (a program that makes endless new shapes must not grow it forever).
constexpr std::size_t kMaxCachedPrimitives = 4096;

struct PrimitiveCache {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const void>> entries;
};

PrimitiveCache& primitive_cache() {
  static PrimitiveCache cache;
  return cache;
}

// Contiguous conversions to and from f32, compiled for each instruction set
// (the f16 and bf16 conversions vectorise).
template <class T>
BURN_FLEX_ROW_CLONES void widen_row(const T* src, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}
template <class T>
BURN_FLEX_ROW_CLONES void narrow_row(const float* src, T* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = convert_element<T>(src[i]);
}

}  // namespace

std::shared_ptr<const void> find_cached_primitive(const std::string& key, bool& found) {
  auto& cache = primitive_cache();
  std::lock_guard lock(cache.mutex);
  const auto it = cache.entries.find(key);
  found = it != cache.entries.end();
  return found ? it->second : nullptr;
}

void store_cached_primitive(std::string key, std::shared_ptr<const void> value) {
  auto& cache = primitive_cache();
  std::lock_guard lock(cache.mutex);
  if (cache.entries.size() >= kMaxCachedPrimitives) cache.entries.clear();
  cache.entries.emplace(std::move(key), std::move(value));
}

bool isa_below_avx512() {
  static const bool below = [] {
    const auto isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::sse41 || isa == dnnl::cpu_isa::avx || isa == dnnl::cpu_isa::avx2 ||
           isa == dnnl::cpu_isa::avx2_vnni;
  }();
  return below;
}

dnnl::memory::desc any_layout(const dnnl::memory::desc& md) {
  return dnnl::memory::desc(md.dims(), md.data_type(), dnnl::memory::format_tag::any);
}

void execute_with_layouts(const Context& ctx, const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd,
                          std::span<const PlainArg> args, const std::unordered_map<int, dnnl::memory>* ready) {
  std::unordered_map<int, dnnl::memory> exec_args;
  if (ready) exec_args = *ready;
  std::vector<std::pair<dnnl::memory, dnnl::memory>> before, after;  // (from, to) reorders
  std::vector<host::CpuTensorPtr> scratch;                           // keeps blocked buffers alive
  for (const PlainArg& a : args) {
    dnnl::memory plain = wrap(a.md, *a.tensor);
    const dnnl::memory::desc want = pd.query_md(dnnl::query::exec_arg_md, a.arg);
    if (want == a.md || want.is_zero()) {
      exec_args.emplace(a.arg, plain);
      continue;
    }
    if (a.arg == DNNL_ARG_WEIGHTS && !a.is_output) {
      if (auto packed = packed_weights(ctx, *a.tensor, a.md, want)) {
        exec_args.emplace(a.arg, dnnl::memory(want, engine(), static_cast<void*>(packed->base())));
        scratch.push_back(std::move(packed));
        continue;
      }
    }
    // The blocked copy lives in the caching allocator, as every other buffer.
    scratch.push_back(ctx.output({Shape{want.get_size()}, DType::U8}));
    dnnl::memory blocked(want, engine(), static_cast<void*>(scratch.back()->base()));
    exec_args.emplace(a.arg, blocked);
    if (a.is_output) after.emplace_back(blocked, plain);
    else before.emplace_back(plain, blocked);
  }
  for (auto& [from, to] : before) reorder(from, to);
  execute(prim, exec_args);
  for (auto& [from, to] : after) reorder(from, to);
}

host::CpuTensorPtr to_f32(const Context& ctx, const host::CpuTensor& t) {
  auto out = ctx.output({Shape(t.shape), DType::F32});
  if (out->num_elements() == 0) return out;
  float* dst = out->data<float>();
  visit_float_dtype("to_f32", t.dtype, [&]<class T>() {
    if (t.is_contiguous()) {
      const T* src = t.data<T>();
      parallel_for(t.num_elements(), [&](std::size_t b, std::size_t e) { widen_row(src + b, dst + b, e - b); });
    } else {
      const T* src = reinterpret_cast<const T*>(t.buffer->data());
      host::for_each_offset(t.shape, t.strides, t.offset,
                            [&](std::size_t i, std::int64_t off) { dst[i] = static_cast<float>(src[off]); });
    }
  });
  return out;
}

void narrow_from_f32(const host::CpuTensor& src, host::CpuTensor& dst) {
  const float* s = src.data<float>();
  visit_float_dtype("narrow_from_f32", dst.dtype, [&]<class T>() {
    T* d = dst.data<T>();
    parallel_for(dst.num_elements(), [&](std::size_t b, std::size_t e) { narrow_row(s + b, d + b, e - b); });
  });
}

}  // namespace burn::flex::dnn
