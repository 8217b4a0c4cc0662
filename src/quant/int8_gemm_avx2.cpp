// Our AVX2 int8 GEMM, for CPUs without VNNI (measured on this AMD EPYC: about
// twice as fast as oneDNN 2.6's int8 matmul, which is slower there than its
// f32 one; docs/precision.md).
//
// The inner step is fbgemm's: vpmaddubsw multiplies 32 u8 activations by 32
// s8 weights and adds neighbouring pairs into 16-bit lanes, vpmaddwd against
// ones adds those pairs into 32-bit sums. Activations are 7-bit (|a| <= 63),
// shifted to u8 by +64 so that a pair sum stays below the 16-bit saturation
// point (127 * 127 * 2 < 32767); the shift is taken back out with each
// column's weight sum.
//
// Weights are packed once into panels of 16 columns: for each group of four
// k, 64 bytes holding columns 0-7 (four k each) then columns 8-15, so one
// broadcast of four activation bytes meets two vectors of weights. A block
// of 6 rows x 16 columns keeps its 12 accumulators in registers for the
// whole k loop; threads split the panels.
#include <algorithm>
#include <cstring>

#include <omp.h>

#include <burn/config.hpp>
#include <burn/error.hpp>

#include "quant/int8_gemm.hpp"

#if BURN_HAS_FLEX
#include "backends/flex/threads.hpp"
#endif

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define BURN_INT8_AVX2 1
#else
#define BURN_INT8_AVX2 0
#endif

namespace burn::quant::kernels {

namespace {
constexpr std::size_t kPanel = 16;  // columns per panel
constexpr std::size_t kRows = 6;    // rows per register block
constexpr int kShift = 64;          // the u8 offset of 7-bit activations
}  // namespace

struct Avx2Panels {
  std::size_t k4 = 0;                // k rounded up to a multiple of 4, over 4
  std::size_t panels = 0;            // n rounded up to a multiple of 16, over 16
  std::vector<std::int8_t> data;     // panels x k4 x 64 bytes
  std::vector<std::int32_t> colsum;  // each column's weight sum, times kShift
};

#if BURN_INT8_AVX2

bool avx2_supported() {
  static const bool supported = __builtin_cpu_supports("avx2");
  return supported;
}

namespace {

std::shared_ptr<const Avx2Panels> pack(const Int8Weights& w) {
  auto p = std::make_shared<Avx2Panels>();
  p->k4 = (w.k + 3) / 4;
  p->panels = (w.n + kPanel - 1) / kPanel;
  p->data.assign(p->panels * p->k4 * 64, 0);
  p->colsum.assign(p->panels * kPanel, 0);
  for (std::size_t l = 0; l < w.k; ++l)
    for (std::size_t j = 0; j < w.n; ++j) {
      const std::int8_t v = w.values[l * w.n + j];
      const std::size_t panel = j / kPanel, col = j % kPanel;
      p->data[(panel * p->k4 + l / 4) * 64 + (col / 8) * 32 + (col % 8) * 4 + l % 4] = v;
      p->colsum[j] += kShift * v;
    }
  return p;
}

/// acc[2 r + h] = sum over k of a[r, k] * panel columns 8 h .. 8 h + 7.
template <std::size_t R>
__attribute__((target("avx2"))) void block(const std::uint8_t* a, std::size_t lda, const std::int8_t* panel,
                                           std::size_t k4, std::int32_t (*acc)[8]) {
  const __m256i ones = _mm256_set1_epi16(1);
  // The row loops are unrolled so that the accumulators stay in registers
  // (GCC keeps a rolled loop's array on the stack).
  __m256i c[R][2];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) c[r][0] = c[r][1] = _mm256_setzero_si256();
  for (std::size_t s = 0; s < k4; ++s) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + s * 64));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + s * 64 + 32));
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r) {
      std::int32_t four = 0;
      std::memcpy(&four, a + r * lda + s * 4, 4);
      const __m256i x = _mm256_set1_epi32(four);
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(x, b0), ones));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(x, b1), ones));
    }
  }
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc[2 * r]), c[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc[2 * r + 1]), c[r][1]);
  }
}

void run_block(std::size_t rows, const std::uint8_t* a, std::size_t lda, const std::int8_t* panel, std::size_t k4,
               std::int32_t (*acc)[8]) {
  switch (rows) {
    case 6: return block<6>(a, lda, panel, k4, acc);
    case 5: return block<5>(a, lda, panel, k4, acc);
    case 4: return block<4>(a, lda, panel, k4, acc);
    case 3: return block<3>(a, lda, panel, k4, acc);
    case 2: return block<2>(a, lda, panel, k4, acc);
    default: return block<1>(a, lda, panel, k4, acc);
  }
}

}  // namespace

void int8_matmul_avx2(const std::int8_t* a, std::size_t m, const Int8Weights& w, const float* col_scales, float* out) {
  std::call_once(w.avx2_once, [&] { w.avx2 = pack(w); });
  const Avx2Panels& p = *w.avx2;
  const std::size_t lda = p.k4 * 4;
  std::vector<std::uint8_t> shifted(m * lda, 0);  // k padding: 0 (its weights are 0 too)
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t l = 0; l < w.k; ++l) shifted[i * lda + l] = static_cast<std::uint8_t>(a[i * w.k + l] + kShift);
  const auto panels = static_cast<std::ptrdiff_t>(p.panels);
  // As many threads as flex's kernels use (BURN_NUM_THREADS, the device's
  // set_num_threads), so a quantized layer keeps a run's thread budget.
#if BURN_HAS_FLEX
  const auto threads = static_cast<int>(burn::flex::pool_size());
#else
  const int threads = omp_get_max_threads();
#endif
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::ptrdiff_t panel = 0; panel < panels; ++panel) {
    const std::int8_t* packed = p.data.data() + static_cast<std::size_t>(panel) * p.k4 * 64;
    std::int32_t acc[2 * kRows][8];
    for (std::size_t i = 0; i < m; i += kRows) {
      const std::size_t rows = std::min(kRows, m - i);
      run_block(rows, shifted.data() + i * lda, lda, packed, p.k4, acc);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < kPanel; ++c) {
          const std::size_t j = static_cast<std::size_t>(panel) * kPanel + c;
          if (j >= w.n) break;
          const std::int32_t sum = acc[2 * r + c / 8][c % 8] - p.colsum[j];
          out[(i + r) * w.n + j] = static_cast<float>(sum) * col_scales[j];
        }
    }
  }
}

#else  // not x86-64

bool avx2_supported() { return false; }
void int8_matmul_avx2(const std::int8_t*, std::size_t, const Int8Weights&, const float*, float*) {
  throw Error("int8 matmul", "the AVX2 int8 kernel needs an x86-64 CPU");
}

#endif

}  // namespace burn::quant::kernels
