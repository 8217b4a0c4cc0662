// oneDNN's int8 matmul: int8 activations, s8 weights reordered once into the
// layout oneDNN's blocked (brgemm) kernels read, s32 sums; the scales, the
// bias and the output's layout are applied as the sums are read back. One
// primitive per activation row count (a model sees a few batch sizes).
//
// Why no oneDNN attributes: oneDNN 2.6 runs a matmul with run-time output
// scales or a run-time source zero point with its older gemm kernel, which
// recomputes the weights' column sums on every call, and the scales change
// with every batch's activations. (A 4096 -> 4096 int8 Linear layer on a
// batch of 64, 2-core Xeon with AMX: 8.5 ms that way, 1.2 ms this way.)
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include <omp.h>

#include <burn/config.hpp>
#include <burn/error.hpp>

#include "quant/int8_gemm.hpp"

#if BURN_HAS_FLEX
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace burn::quant::kernels {

#if BURN_HAS_FLEX

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

memory::dims dims(std::size_t a, std::size_t b) { return {static_cast<memory::dim>(a), static_cast<memory::dim>(b)}; }

/// AMX multiplies s8 by s8 natively. VNNI (vpdpbusd) multiplies u8 by s8:
/// there the activations are shifted into u8 by the zero point and the
/// shift's share of each sum (zero point x the weight column's sum) is taken
/// off afterwards; oneDNN would emulate s8 sources with the same shift,
/// slower.
bool signed_source() {
  static const bool amx = dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx;
  return amx;
}

}  // namespace

struct OneDnnPrimitives {
  std::mutex mutex;
  struct Primitive {
    dnnl::matmul matmul;
    memory::desc weights;        // the layout it reads the weights in
    std::size_t scratchpad = 0;  // bytes
  };
  /// By activation row count.
  std::map<std::size_t, Primitive> by_rows;
  /// The weights in each layout a primitive asked for (in practice one).
  std::vector<std::pair<memory::desc, memory>> packed;
  /// Per column, the sum of its weights (for the u8 shift).
  std::vector<std::int32_t> column_sums;

  /// The [k, n] values reordered back from the first layout kept (the
  /// mutex held).
  std::vector<std::int8_t> unpacked(std::size_t k, std::size_t n) const {
    std::vector<std::int8_t> values(k * n);
    dnnl::engine& e = engine();
    dnnl::stream stream(e);
    memory plain({dims(k, n), dt::s8, tag::ab}, e, values.data());
    // oneDNN's layouts may carry compensation sums after the values; the
    // reorder back reads the values alone.
    memory from = packed.front().second;
    dnnl::reorder(from, plain).execute(stream, from, plain);
    stream.wait();
    return values;
  }

  /// The weights in `layout`, reordered on first use. They are read from
  /// a layout already kept, else from the layer (Int8Weights::read_values),
  /// rather than kept plain beside the reordered copy.
  const memory& weights_in(const memory::desc& layout, const Int8Weights& w, bool need_sums) {
    for (const auto& [desc, mem] : packed)
      if (desc == layout) return mem;
    std::vector<std::int8_t> values = packed.empty() ? w.read_values() : unpacked(w.k, w.n);
    if (need_sums && column_sums.empty()) {  // set once: callers read it unlocked
      column_sums.assign(w.n, 0);
      for (std::size_t l = 0; l < w.k; ++l)
        for (std::size_t j = 0; j < w.n; ++j) column_sums[j] += values[l * w.n + j];
    }
    dnnl::engine& e = engine();
    dnnl::stream stream(e);
    memory plain({dims(w.k, w.n), dt::s8, tag::ab}, e, values.data());
    memory reordered(layout, e);
    dnnl::reorder(plain, reordered).execute(stream, plain, reordered);
    stream.wait();
    const memory& kept = packed.emplace_back(layout, std::move(reordered)).second;
    w.onednn_held.store(true, std::memory_order_release);
    return kept;
  }
};

std::vector<std::int8_t> unpack_onednn(OneDnnPrimitives& primitives, std::size_t k, std::size_t n) {
  std::lock_guard lock(primitives.mutex);
  if (primitives.packed.empty()) return {};
  return primitives.unpacked(k, n);
}

bool onednn_available() { return true; }

bool onednn_has_vnni() {
  static const bool vnni = [] {
    const auto isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx2_vnni || isa == dnnl::cpu_isa::avx512_core_vnni ||
           isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return vnni;
}

void int8_matmul_onednn(const std::int8_t* a, std::size_t m, const Int8Weights& w, const float* col_scales,
                        int zero_point, const Int8Output& out) {
  std::call_once(w.onednn_once, [&] { w.onednn = std::make_shared<OneDnnPrimitives>(); });
  const bool shift = !signed_source();
  const dt source_type = shift ? dt::u8 : dt::s8;
  OneDnnPrimitives::Primitive primitive;
  memory weights;
  const std::int32_t* column_sums = nullptr;
  {
    std::lock_guard lock(w.onednn->mutex);
    auto& cache = w.onednn->by_rows;
    auto it = cache.find(m);
    if (it == cache.end()) {
      const dnnl::matmul::desc desc(memory::desc(dims(m, w.k), source_type, tag::ab),
                                    memory::desc(dims(w.k, w.n), dt::s8, tag::any),
                                    memory::desc(dims(m, w.n), dt::s32, tag::ab));
      if (cache.size() > 16) cache.clear();  // bounded: a stream of odd batch sizes
      // A convolution runs one image per thread through the same primitive:
      // each call brings its own scratchpad, as concurrent calls need.
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      const dnnl::matmul::primitive_desc pd(desc, attr, engine());
      it = cache
               .emplace(
                   m, OneDnnPrimitives::Primitive{dnnl::matmul(pd), pd.weights_desc(), pd.scratchpad_desc().get_size()})
               .first;
    }
    primitive = it->second;
    weights = w.onednn->weights_in(primitive.weights, w, shift);
    column_sums = shift ? w.onednn->column_sums.data() : nullptr;
  }
  std::vector<std::uint8_t> shifted(shift ? m * w.k : 0);
  for (std::size_t i = 0; i < shifted.size(); ++i) shifted[i] = static_cast<std::uint8_t>(a[i] + zero_point);
  const std::unique_ptr<std::int32_t[]> sums(new std::int32_t[m * w.n]);  // written whole by oneDNN
  dnnl::engine& e = engine();
  dnnl::stream stream(e);
  memory src({dims(m, w.k), source_type, tag::ab}, e,
             shift ? static_cast<void*>(shifted.data()) : const_cast<std::int8_t*>(a));
  memory dst({dims(m, w.n), dt::s32, tag::ab}, e, sums.get());
  thread_local std::vector<std::byte> scratch;
  if (scratch.size() < primitive.scratchpad) scratch.resize(primitive.scratchpad);
  memory scratchpad({{static_cast<memory::dim>(primitive.scratchpad)}, dt::u8, tag::a}, e, scratch.data());
  primitive.matmul.execute(
      stream,
      {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad}});
  stream.wait();

  // Inside another parallel region (a convolution's images) on this thread alone.
  const int threads = omp_in_parallel() ? 1 : int8_threads();
  const auto rows = static_cast<std::ptrdiff_t>(m);
#pragma omp parallel for schedule(static) num_threads(threads) if (m * w.n >= (1U << 15))
  for (std::ptrdiff_t r = 0; r < rows; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const std::int32_t* row = sums.get() + i * w.n;
    for (std::size_t j = 0; j < w.n; ++j) {
      const std::int32_t sum = column_sums ? row[j] - zero_point * column_sums[j] : row[j];
      out.at(i, j) = out.value(sum, col_scales[j], j);
    }
  }
}

#else  // a build without the flex backend has no oneDNN

struct OneDnnPrimitives {};
std::vector<std::int8_t> unpack_onednn(OneDnnPrimitives&, std::size_t, std::size_t) { return {}; }
bool onednn_available() { return false; }
bool onednn_has_vnni() { return false; }
void int8_matmul_onednn(const std::int8_t*, std::size_t, const Int8Weights&, const float*, int, const Int8Output&) {
  throw Error("int8 matmul", "this build has no oneDNN (it comes with the flex backend); use another int8 kernel");
}

#endif

}  // namespace burn::quant::kernels
