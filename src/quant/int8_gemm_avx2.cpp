// Our AVX2 int8 GEMM, for CPUs without VNNI (measured on this AMD EPYC: about
// twice as fast as oneDNN 2.6's int8 matmul, which is slower there than its
// f32 one; docs/precision.md).
//
// The inner step is vpmaddubsw, which multiplies 32 unsigned bytes by 32
// signed bytes and adds neighbouring pairs into saturating 16-bit lanes. Its
// unsigned operand is |w|, its signed one the activation carrying w's sign
// (vpsignb), so a * w = |w| * (a sign(w)) for any signs. With 7-bit
// activations (|a| <= 63) a pair sum stays within ±16002, so the pair sums
// of two consecutive groups of four k add in 16 bits without saturating
// (±32004); only then does vpmaddwd against ones widen them to 32-bit sums.
// That is three multiplies per eight k instead of fbgemm's four: the
// multiplies share one execution port on the CPUs this kernel is for.
//
// Weights are packed once into panels of 16 columns: for each group of four
// k, 64 bytes holding columns 0-7 (four k each) then columns 8-15, so one
// broadcast of four activation bytes meets two vectors of weights. A block
// of a few rows x 16 columns keeps its accumulators in registers for the
// whole k loop; threads split the panels.
#include <algorithm>
#include <cstring>

#include <omp.h>

#include <burn/error.hpp>

#include "quant/int8_gemm.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define BURN_INT8_AVX2 1
#else
#define BURN_INT8_AVX2 0
#endif

namespace burn::quant::kernels {

namespace {
constexpr std::size_t kPanel = 16;  // columns per panel
// Rows per register block: 3 to 5 measured alike here; 3 leaves registers
// for the weights of both groups of four k.
constexpr std::size_t kRows = 3;
}  // namespace

struct Avx2Panels {
  std::size_t k4 = 0;             // k rounded up to a multiple of 8, over 4 (an even count of groups)
  std::size_t panels = 0;         // n rounded up to a multiple of 16, over 16
  std::vector<std::int8_t> data;  // panels x k4 x 64 bytes
};

namespace {
/// Where weight [l, j] sits in the panels.
std::size_t panel_offset(const Avx2Panels& p, std::size_t l, std::size_t j) {
  const std::size_t panel = j / kPanel, col = j % kPanel;
  return (panel * p.k4 + l / 4) * 64 + (col / 8) * 32 + (col % 8) * 4 + l % 4;
}
}  // namespace

std::vector<std::int8_t> unpack_avx2(const Avx2Panels& panels, std::size_t k, std::size_t n) {
  std::vector<std::int8_t> values(k * n);
  for (std::size_t l = 0; l < k; ++l)
    for (std::size_t j = 0; j < n; ++j) values[l * n + j] = panels.data[panel_offset(panels, l, j)];
  return values;
}

#if BURN_INT8_AVX2

bool avx2_supported() {
  static const bool supported = __builtin_cpu_supports("avx2");
  return supported;
}

namespace {

std::shared_ptr<const Avx2Panels> pack(const Int8Weights& w) {
  auto p = std::make_shared<Avx2Panels>();
  p->k4 = (w.k + 7) / 8 * 2;
  p->panels = (w.n + kPanel - 1) / kPanel;
  p->data.assign(p->panels * p->k4 * 64, 0);
  // Read, not values(): the panels are all this kernel keeps.
  const std::vector<std::int8_t> values = w.read_values();
  for (std::size_t l = 0; l < w.k; ++l)
    for (std::size_t j = 0; j < w.n; ++j) p->data[panel_offset(*p, l, j)] = values[l * w.n + j];
  return p;
}

__attribute__((target("avx2"))) inline __m256i load(const std::int8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

/// acc[2 r + h] = sum over k of a[r, k] * panel columns 8 h .. 8 h + 7.
template <std::size_t R>
__attribute__((target("avx2"))) void block(const std::int8_t* a, std::size_t lda, const std::int8_t* panel,
                                           std::size_t k4, std::int32_t (*acc)[8]) {
  const __m256i ones = _mm256_set1_epi16(1);
  // The row loops are unrolled so that the accumulators stay in registers
  // (GCC keeps a rolled loop's array on the stack).
  __m256i c[R][2];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) c[r][0] = c[r][1] = _mm256_setzero_si256();
  for (std::size_t s = 0; s < k4; s += 2) {
    // w[g][h]: group s + g of four k, columns 8 h .. 8 h + 7.
    const std::int8_t* w = panel + s * 64;
    const __m256i w00 = load(w), w01 = load(w + 32), w10 = load(w + 64), w11 = load(w + 96);
    const __m256i u00 = _mm256_abs_epi8(w00), u01 = _mm256_abs_epi8(w01);
    const __m256i u10 = _mm256_abs_epi8(w10), u11 = _mm256_abs_epi8(w11);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r) {
      std::int32_t four0 = 0, four1 = 0;
      std::memcpy(&four0, a + r * lda + s * 4, 4);
      std::memcpy(&four1, a + r * lda + s * 4 + 4, 4);
      const __m256i x0 = _mm256_set1_epi32(four0), x1 = _mm256_set1_epi32(four1);
      const __m256i t0 = _mm256_add_epi16(_mm256_maddubs_epi16(u00, _mm256_sign_epi8(x0, w00)),
                                          _mm256_maddubs_epi16(u10, _mm256_sign_epi8(x1, w10)));
      const __m256i t1 = _mm256_add_epi16(_mm256_maddubs_epi16(u01, _mm256_sign_epi8(x0, w01)),
                                          _mm256_maddubs_epi16(u11, _mm256_sign_epi8(x1, w11)));
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(t0, ones));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(t1, ones));
    }
  }
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc[2 * r]), c[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc[2 * r + 1]), c[r][1]);
  }
}

void run_block(std::size_t rows, const std::int8_t* a, std::size_t lda, const std::int8_t* panel, std::size_t k4,
               std::int32_t (*acc)[8]) {
  switch (rows) {
    case 3: return block<3>(a, lda, panel, k4, acc);
    case 2: return block<2>(a, lda, panel, k4, acc);
    default: return block<1>(a, lda, panel, k4, acc);
  }
}

}  // namespace

void int8_matmul_avx2(const std::int8_t* a, std::size_t m, const Int8Weights& w, const float* col_scales,
                      const Int8Output& out) {
  std::call_once(w.avx2_once, [&] {
    w.avx2 = pack(w);
    w.avx2_held.store(true, std::memory_order_release);
  });
  const Avx2Panels& p = *w.avx2;
  const std::size_t lda = p.k4 * 4;
  // Rows padded to the packed k with zeros (the padding's weights are 0 too);
  // a already in that form is used as it is.
  std::vector<std::int8_t> padded;
  const std::int8_t* rows_a = a;
  if (lda != w.k) {
    padded.assign(m * lda, 0);
    for (std::size_t i = 0; i < m; ++i) std::memcpy(padded.data() + i * lda, a + i * w.k, w.k);
    rows_a = padded.data();
  }
  // Threads take tiles of rows x one panel, a panel's tiles in a row so that
  // its weights stay in cache: whole panels where there are enough of them
  // (a Linear layer's thousands of columns), else row tiles too (a
  // convolution's few output channels over many pixels).
  // Inside another parallel region (a convolution's images) on this thread alone.
  const auto threads = omp_in_parallel() ? std::size_t{1} : static_cast<std::size_t>(int8_threads());
  std::size_t row_tiles = 1;
  if (p.panels < 4 * threads) row_tiles = std::min((4 * threads + p.panels - 1) / p.panels, (m + 47) / 48);
  const std::size_t tile_rows = ((m + row_tiles - 1) / row_tiles + kRows - 1) / kRows * kRows;
  row_tiles = (m + tile_rows - 1) / tile_rows;
  const auto tiles = static_cast<std::ptrdiff_t>(p.panels * row_tiles);
#pragma omp parallel for schedule(static) num_threads(static_cast <int>(threads))
  for (std::ptrdiff_t tile = 0; tile < tiles; ++tile) {
    const std::size_t panel = static_cast<std::size_t>(tile) / row_tiles;
    const std::size_t first = static_cast<std::size_t>(tile) % row_tiles * tile_rows;
    const std::size_t last = std::min(m, first + tile_rows);
    const std::int8_t* packed = p.data.data() + panel * p.k4 * 64;
    const std::size_t columns = std::min(kPanel, w.n - panel * kPanel);
    std::int32_t acc[2 * kRows][8];
    for (std::size_t i = first; i < last; i += kRows) {
      const std::size_t rows = std::min(kRows, last - i);
      run_block(rows, rows_a + i * lda, lda, packed, p.k4, acc);
      // Column by column: a convolution's output rows are adjacent pixels
      // of one channel, so each column's values land side by side.
      for (std::size_t c = 0; c < columns; ++c) {
        const std::size_t j = panel * kPanel + c;
        for (std::size_t r = 0; r < rows; ++r)
          out.at(i + r, j) = out.value(acc[2 * r + c / 8][c % 8], col_scales[j], j);
      }
    }
  }
}

#else  // not x86-64

bool avx2_supported() { return false; }
void int8_matmul_avx2(const std::int8_t*, std::size_t, const Int8Weights&, const float*, const Int8Output&) {
  throw Error("int8 matmul", "the AVX2 int8 kernel needs an x86-64 CPU");
}

#endif

}  // namespace burn::quant::kernels
