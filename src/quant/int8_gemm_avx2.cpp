// Our AVX2 int8 GEMM, for CPUs without VNNI (on AMD EPYCs about twice as
// fast as oneDNN 2.6's int8 matmul, which is slower there than its f32 one;
// docs/precision.md).
//
// Both inner steps rest on vpmaddubsw, which multiplies 32 unsigned bytes
// by 32 signed bytes and adds neighbouring pairs into saturating 16-bit
// lanes, and vpmaddwd against ones, which widens pair sums to 32 bits. The
// kernel's activations have 7 bits (|a| <= 63); the two steps differ in
// what they make of the spare bit:
//
//  - Int8Kernel::Avx2 (zero point): the unsigned operand is a + 64, in
//    [1, 127], the signed one the weight, so a pair sum stays within
//    2 * 127 * 127 = 32258 and never saturates; 64 times each column's
//    weight sum comes off at the end. Two multiplies per four k and
//    nothing else on the multiply units.
//  - Int8Kernel::Avx2FewerMultiplies (sign transfer): the unsigned operand
//    is |w|, the signed one the activation carrying w's sign (vpsignb), so
//    a pair sum stays within 2 * 127 * 63 = 16002 and the pair sums of two
//    groups of four k add in 16 bits before one vpmaddwd: three multiplies
//    per eight k instead of four, plus four vpsignb and (shared by a
//    block's rows) four vpabsb.
//
// Which is faster depends on where the CPU runs vpsignb and vpabsb. Zen 1
// has one vector multiply pipe and runs them beside it: the sign transfer
// took a 64 x 4096 x 4096 product from 29.9 to 26.0 ms there. Zen 3 runs
// all four on the same two pipes, where the zero point's 8 instructions per
// eight k beat the sign transfer's 11: 7.4 to 5.5 ms on two Zen 3 cores.
// The default is the sign transfer on Zen 1 and on Haswell and Broadwell
// (whose published port assignments are Zen 1's case: integer multiplies
// on one port, vpsignb and vpabsb on others; not measured here), the zero
// point elsewhere; tests run both on any AVX2 CPU.
//
// Weights are packed once into panels of 16 columns: for each group of four
// k, 64 bytes holding columns 0-7 (four k each) then columns 8-15, so one
// broadcast of four activation bytes meets two vectors of weights. Both
// steps read the same panels. A block of a few rows x 16 columns keeps its
// accumulators in registers for the whole k loop; threads split the panels.
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
constexpr std::size_t kGroup = 4;   // k per 32-bit lane of vpmaddubsw's operands
// Rows per register block: each row more shares the block's weight loads
// until the accumulators (two per row) no longer fit in the 16 vector
// registers beside the weights, the ones and a broadcast. The zero point
// holds two weight vectors (at 6 rows GCC spills; 5 ran 4-5 % faster than 4
// or 3 on Zen 3), the sign transfer eight (weights and their magnitudes).
constexpr std::size_t kZeroPointRows = 5;
constexpr std::size_t kSignRows = 3;
constexpr std::size_t kMaxRows = std::max(kZeroPointRows, kSignRows);
// What the zero-point step adds to each activation: 7-bit activations become
// unsigned bytes 1..127.
constexpr int kZeroPoint = 64;
}  // namespace

struct Avx2Panels {
  std::size_t groups = 0;              // k rounded up to a multiple of 8, over 4 (an even count)
  std::size_t panels = 0;              // n rounded up to a multiple of 16, over 16
  std::vector<std::int8_t> data;       // panels x groups x 64 bytes
  std::vector<std::int32_t> col_sums;  // each column's sum of weights over k
};

namespace {
/// Where weight [l, j] sits in the panels.
std::size_t panel_offset(const Avx2Panels& p, std::size_t l, std::size_t j) {
  const std::size_t panel = j / kPanel, col = j % kPanel;
  return (panel * p.groups + l / kGroup) * 64 + (col / 8) * 32 + (col % 8) * kGroup + l % kGroup;
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

bool avx2_prefers_fewer_multiplies() {
  static const bool one_multiply_port =
      __builtin_cpu_is("znver1") || __builtin_cpu_is("haswell") || __builtin_cpu_is("broadwell");
  return one_multiply_port;
}

namespace {

std::shared_ptr<const Avx2Panels> pack(const Int8Weights& w) {
  auto p = std::make_shared<Avx2Panels>();
  p->groups = (w.k + 2 * kGroup - 1) / (2 * kGroup) * 2;
  p->panels = (w.n + kPanel - 1) / kPanel;
  p->data.assign(p->panels * p->groups * 64, 0);
  p->col_sums.assign(w.n, 0);
  // Read, not values(): the panels are all this kernel keeps.
  const std::vector<std::int8_t> values = w.read_values();
  for (std::size_t l = 0; l < w.k; ++l)
    for (std::size_t j = 0; j < w.n; ++j) {
      const std::int8_t v = values[l * w.n + j];
      p->data[panel_offset(*p, l, j)] = v;
      p->col_sums[j] += v;
    }
  return p;
}

__attribute__((target("avx2"))) inline __m256i load(const std::int8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

__attribute__((target("avx2"))) inline __m256i broadcast_four(const std::int8_t* p) {
  std::int32_t four = 0;
  std::memcpy(&four, p, kGroup);
  return _mm256_set1_epi32(four);
}

template <std::size_t R>
__attribute__((target("avx2"))) inline void zero_sums(__m256i (&c)[R][2]) {
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) c[r][0] = c[r][1] = _mm256_setzero_si256();
}

/// acc[2 r + h] = c[r][h], a block's 32-bit sums for its caller.
template <std::size_t R>
__attribute__((target("avx2"))) inline void store_sums(const __m256i (&c)[R][2], std::int32_t (*acc)[8]) {
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc[2 * r]), c[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc[2 * r + 1]), c[r][1]);
  }
}

/// acc[2 r + h] = sum over k of (a[r, k] + 64) * panel columns 8 h .. 8 h +
/// 7, for activations within ±63 (the zero-point step).
template <std::size_t R>
__attribute__((target("avx2"))) void zero_point_block(const std::int8_t* a, std::size_t lda, const std::int8_t* panel,
                                                      std::size_t groups, std::int32_t (*acc)[8]) {
  const __m256i ones = _mm256_set1_epi16(1);
  // Added as the activations are broadcast, on a unit the multiplies leave
  // free: a copy of the activations plus 64 cost a convolution more than
  // its products.
  const __m256i zero_point = _mm256_set1_epi8(static_cast<char>(kZeroPoint));
  // The row loops are unrolled so that the accumulators stay in registers
  // (GCC keeps a rolled loop's array on the stack).
  __m256i c[R][2];
  zero_sums<R>(c);
  for (std::size_t g = 0; g < groups; ++g) {
    // Group g of four k: columns 0-7, then 8-15.
    const __m256i w0 = load(panel + g * 64), w1 = load(panel + g * 64 + 32);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r) {
      const __m256i x = _mm256_add_epi8(broadcast_four(a + r * lda + g * kGroup), zero_point);
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(x, w0), ones));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(x, w1), ones));
    }
  }
  store_sums<R>(c, acc);
}

/// The same sums for signed activations within ±63, by the sign transfer.
template <std::size_t R>
__attribute__((target("avx2"))) void sign_block(const std::int8_t* a, std::size_t lda, const std::int8_t* panel,
                                                std::size_t groups, std::int32_t (*acc)[8]) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i c[R][2];
  zero_sums<R>(c);
  for (std::size_t g = 0; g < groups; g += 2) {
    // w[s][h]: group g + s of four k, columns 8 h .. 8 h + 7.
    const std::int8_t* w = panel + g * 64;
    const __m256i w00 = load(w), w01 = load(w + 32), w10 = load(w + 64), w11 = load(w + 96);
    const __m256i u00 = _mm256_abs_epi8(w00), u01 = _mm256_abs_epi8(w01);
    const __m256i u10 = _mm256_abs_epi8(w10), u11 = _mm256_abs_epi8(w11);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r) {
      const __m256i x0 = broadcast_four(a + r * lda + g * kGroup);
      const __m256i x1 = broadcast_four(a + r * lda + (g + 1) * kGroup);
      const __m256i t0 = _mm256_add_epi16(_mm256_maddubs_epi16(u00, _mm256_sign_epi8(x0, w00)),
                                          _mm256_maddubs_epi16(u10, _mm256_sign_epi8(x1, w10)));
      const __m256i t1 = _mm256_add_epi16(_mm256_maddubs_epi16(u01, _mm256_sign_epi8(x0, w01)),
                                          _mm256_maddubs_epi16(u11, _mm256_sign_epi8(x1, w11)));
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(t0, ones));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(t1, ones));
    }
  }
  store_sums<R>(c, acc);
}

using BlockFn = void (*)(const std::int8_t*, std::size_t, const std::int8_t*, std::size_t, std::int32_t (*)[8]);

/// One inner step: its block for each row count up to its block height, and
/// the zero point its blocks add to each activation (whose share of each
/// sum comes off as the output is written).
struct Step {
  std::size_t rows = 0;
  int zero_point = 0;
  BlockFn blocks[kMaxRows] = {};  // blocks[r - 1] computes r rows
};

const Step& zero_point_step() {
  static const Step step{
      kZeroPointRows,
      kZeroPoint,
      {zero_point_block<1>, zero_point_block<2>, zero_point_block<3>, zero_point_block<4>, zero_point_block<5>}};
  static_assert(kZeroPointRows == 5, "one block per row count");
  return step;
}

const Step& sign_step() {
  static const Step step{kSignRows, 0, {sign_block<1>, sign_block<2>, sign_block<3>}};
  static_assert(kSignRows == 3, "one block per row count");
  return step;
}

/// Writes a block's 16 columns of `rows` rows into rows of contiguous
/// output: out.value() of each sum less the zero point's share, eight
/// columns per instruction.
__attribute__((target("avx2"))) void store_rows(const std::int32_t (*acc)[8], std::size_t rows, int zero_point,
                                                const std::int32_t* col_sums, const float* scales,
                                                const Int8Output& out, std::size_t i, std::size_t j0) {
  const __m256i zp = _mm256_set1_epi32(zero_point);
  for (std::size_t h = 0; h < 2; ++h) {
    const std::size_t j = j0 + 8 * h;
    const __m256i shift =
        _mm256_mullo_epi32(zp, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_sums + 8 * h)));
    const __m256 scale = _mm256_loadu_ps(scales + 8 * h);
    for (std::size_t r = 0; r < rows; ++r) {
      const __m256i sum = _mm256_sub_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc[2 * r + h])), shift);
      // (sum * scale) + bias, two roundings as out.value() does (no FMA).
      __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(sum), scale);
      if (out.bias) v = _mm256_add_ps(v, _mm256_loadu_ps(out.bias + j));
      _mm256_storeu_ps(&out.at(i + r, j), v);
    }
  }
}

}  // namespace

void int8_matmul_avx2(const std::int8_t* a, std::size_t m, const Int8Weights& w, const float* col_scales,
                      const Int8Output& out, bool fewer_multiplies) {
  std::call_once(w.avx2_once, [&] {
    w.avx2 = pack(w);
    w.avx2_held.store(true, std::memory_order_release);
  });
  const Avx2Panels& p = *w.avx2;
  const Step& step = fewer_multiplies ? sign_step() : zero_point_step();
  // Rows padded to the packed k with zeros (the padding's weights are 0 too);
  // a already in that form is used as it is.
  const std::size_t lda = p.groups * kGroup, k = w.k;
  std::vector<std::int8_t> padded;
  const std::int8_t* rows_a = a;
  if (lda != k) {
    padded.assign(m * lda, 0);
    for (std::size_t i = 0; i < m; ++i) std::memcpy(padded.data() + i * lda, a + i * k, k);
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
  const std::size_t tile_rows = ((m + row_tiles - 1) / row_tiles + step.rows - 1) / step.rows * step.rows;
  row_tiles = (m + tile_rows - 1) / tile_rows;
  const auto tiles = static_cast<std::ptrdiff_t>(p.panels * row_tiles);
#pragma omp parallel for schedule(static) num_threads(static_cast <int>(threads))
  for (std::ptrdiff_t tile = 0; tile < tiles; ++tile) {
    const std::size_t panel = static_cast<std::size_t>(tile) / row_tiles;
    const std::size_t first = static_cast<std::size_t>(tile) % row_tiles * tile_rows;
    const std::size_t last = std::min(m, first + tile_rows);
    const std::int8_t* packed = p.data.data() + panel * p.groups * 64;
    const std::size_t columns = std::min(kPanel, w.n - panel * kPanel);
    std::int32_t acc[2 * kMaxRows][8];
    for (std::size_t i = first; i < last; i += step.rows) {
      const std::size_t rows = std::min(step.rows, last - i);
      step.blocks[rows - 1](rows_a + i * lda, lda, packed, p.groups, acc);
      const std::size_t j0 = panel * kPanel;
      if (columns == kPanel && out.col_stride == 1) {
        store_rows(acc, rows, step.zero_point, &p.col_sums[j0], &col_scales[j0], out, i, j0);
        continue;
      }
      if (columns == kPanel) {
        // A convolution's output: each column (channel) takes `rows`
        // adjacent pixels. The values are made eight columns at a time into
        // a block, then copied out column by column.
        float values[kMaxRows][kPanel];
        store_rows(acc, rows, step.zero_point, &p.col_sums[j0], &col_scales[j0],
                   Int8Output{&values[0][0], kPanel, 1, out.bias ? out.bias + j0 : nullptr}, 0, 0);
        for (std::size_t c = 0; c < kPanel; ++c)
          for (std::size_t r = 0; r < rows; ++r) out.at(i + r, j0 + c) = values[r][c];
        continue;
      }
      // A last, partial panel, column by column.
      for (std::size_t c = 0; c < columns; ++c) {
        const std::size_t j = j0 + c;
        const std::int32_t shift = step.zero_point * p.col_sums[j];
        for (std::size_t r = 0; r < rows; ++r)
          out.at(i + r, j) = out.value(acc[2 * r + c / 8][c % 8] - shift, col_scales[j], j);
      }
    }
  }
}

#else  // not x86-64

bool avx2_supported() { return false; }
bool avx2_prefers_fewer_multiplies() { return false; }
void int8_matmul_avx2(const std::int8_t*, std::size_t, const Int8Weights&, const float*, const Int8Output&, bool) {
  throw Error("int8 matmul", "the AVX2 int8 kernel needs an x86-64 CPU");
}

#endif

}  // namespace burn::quant::kernels
