// oneDNN's int8 matmul: u8 activations (value + zero point), s8 weights, s32
// sums, f32 output scaled per column. One primitive per activation row count
// (a model sees a few batch sizes).
#include <map>
#include <mutex>

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

}  // namespace

struct OneDnnPrimitives {
  std::mutex mutex;
  std::map<std::size_t, dnnl::matmul> by_rows;
};

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
  dnnl::matmul primitive;
  {
    std::lock_guard lock(w.onednn->mutex);
    auto& cache = w.onednn->by_rows;
    auto it = cache.find(m);
    if (it == cache.end()) {
      dnnl::primitive_attr attr;
      attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});
      attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      const dnnl::matmul::desc desc(memory::desc(dims(m, w.k), dt::u8, tag::ab),
                                    memory::desc(dims(w.k, w.n), dt::s8, tag::ab),
                                    memory::desc(dims(m, w.n), dt::f32, tag::ab));
      if (cache.size() > 16) cache.clear();  // bounded: a stream of odd batch sizes
      it = cache.emplace(m, dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, engine()))).first;
    }
    primitive = it->second;
  }
  std::vector<std::uint8_t> shifted(m * w.k);
  for (std::size_t i = 0; i < shifted.size(); ++i) shifted[i] = static_cast<std::uint8_t>(a[i] + zero_point);
  dnnl::engine& e = engine();
  dnnl::stream stream(e);
  memory src({dims(m, w.k), dt::u8, tag::ab}, e, shifted.data());
  memory weights({dims(w.k, w.n), dt::s8, tag::ab}, e, const_cast<std::int8_t*>(w.values().data()));
  // oneDNN writes a contiguous product; other layouts and the bias are
  // applied on the way out.
  const bool direct = out.row_stride == w.n && out.col_stride == 1 && out.bias == nullptr;
  std::vector<float> product(direct ? 0 : m * w.n);
  memory dst({dims(m, w.n), dt::f32, tag::ab}, e, direct ? out.data : product.data());
  memory scales({{static_cast<memory::dim>(w.n)}, dt::f32, tag::a}, e, const_cast<float*>(col_scales));
  std::int32_t zp = zero_point;
  memory zp_mem({{1}, dt::s32, tag::a}, e, &zp);
  primitive.execute(stream, {{DNNL_ARG_SRC, src},
                             {DNNL_ARG_WEIGHTS, weights},
                             {DNNL_ARG_DST, dst},
                             {DNNL_ARG_ATTR_OUTPUT_SCALES, scales},
                             {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_mem}});
  stream.wait();
  if (direct) return;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < w.n; ++j) out.at(i, j) = out.with_bias(product[i * w.n + j], j);
}

#else  // a build without the flex backend has no oneDNN

struct OneDnnPrimitives {};
bool onednn_available() { return false; }
bool onednn_has_vnni() { return false; }
void int8_matmul_onednn(const std::int8_t*, std::size_t, const Int8Weights&, const float*, int, const Int8Output&) {
  throw Error("int8 matmul", "this build has no oneDNN (it comes with the flex backend); use another int8 kernel");
}

#endif

}  // namespace burn::quant::kernels
