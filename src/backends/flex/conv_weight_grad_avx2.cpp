// The product dW = G X^T of conv_weight_grad_avx2.hpp: G is [OC, pixels],
// X^T is [pixels, IC*KH*KW] (the input seen through each tap).
//
// The work is split in tiles of 16 output channels x 6 columns, each owned
// by one thread, so no thread writes another's sums. The register block
// (12 accumulators, two gradient vectors, one broadcast) takes per pixel two
// aligned loads and six broadcasts for twelve FMAs. Vectors along the pixels
// instead (G's rows as they lie) took seven unaligned loads, half of them
// split across cache lines, and ran at 55-75 % of the FMA peak.
//
// The pixels are walked in chunks of 256. For each chunk a thread copies the
// gradient of its tiles' 16 channels into a [pixel][16] buffer (a transpose,
// paid once per chunk and shared by all the columns), which stays in the L1
// cache while the thread runs its tiles over the chunk; each tile's sums
// are added into a column-major copy of dW at the chunk's end.
#include "backends/flex/conv_weight_grad_avx2.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "backends/flex/parallel.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define BURN_WEIGHT_GRAD_AVX2 1
#define BURN_AVX2 __attribute__((target("avx2,fma")))
#else
#define BURN_WEIGHT_GRAD_AVX2 0
#endif

namespace burn::flex::weight_grad_avx2 {
namespace {

constexpr std::size_t kChannels = 16;  // output channels per tile: two vectors
constexpr std::size_t kColumns = 6;    // (ic, kh, kw) columns per tile
constexpr std::size_t kChunk = 256;    // pixels per chunk: a 16 KB transposed gradient
constexpr std::size_t kMinThreadFmas = std::size_t(1) << 17;

/// Sizes derived from a Problem.
struct Geometry {
  std::size_t cols;             // IC * KH * KW
  std::size_t padded_rows;      // rows of each padded input plane
  std::size_t row_floats;       // floats per padded input row
  std::size_t pixels;           // N * OH * OW
  std::size_t channels_padded;  // OC rounded up to kChannels
  std::size_t col_tiles;        // tiles across dW's columns
  std::size_t tiles;
  std::size_t input_floats;  // of the padded input
};

Geometry geometry(const Problem& p) {
  Geometry g{};
  g.cols = p.in_channels * p.kernel_h * p.kernel_w;
  g.padded_rows = p.out_h + p.dilation_h * (p.kernel_h - 1);
  g.row_floats = p.out_w + p.dilation_w * (p.kernel_w - 1);
  g.pixels = p.batch * p.out_h * p.out_w;
  g.channels_padded = (p.out_channels + kChannels - 1) / kChannels * kChannels;
  g.col_tiles = (g.cols + kColumns - 1) / kColumns;
  g.tiles = g.channels_padded / kChannels * g.col_tiles;
  g.input_floats = p.batch * p.in_channels * g.padded_rows * g.row_floats;
  return g;
}

}  // namespace

bool takes(const Problem& p) {
  return p.batch > 0 && p.in_channels > 0 && p.out_channels > 0 && p.in_h > 0 && p.in_w > 0 && p.out_h > 0 &&
         p.out_w > 0 && p.kernel_h > 0 && p.kernel_w > 0 && p.dilation_h > 0 && p.dilation_w > 0;
}

std::size_t workspace_floats(const Problem& p) {
  const Geometry g = geometry(p);
  // The padded input, then dW column-major ([col][channel]), 8-float aligned.
  return (g.input_floats + 7) / 8 * 8 + g.cols * g.channels_padded;
}

#if BURN_WEIGHT_GRAD_AVX2

bool available() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

namespace {

/// x with its zero padding written out: plane (n, ic) has padded_rows rows
/// of row_floats, row r holding input row r - pad_top shifted right by
/// pad_left, zeros around it.
void pad_input(const Problem& p, const Geometry& geo, const float* x, float* xp) {
  const std::size_t planes = p.batch * p.in_channels;
  const std::size_t plane_floats = geo.padded_rows * geo.row_floats;
  parallel_for(
      planes,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t plane = begin; plane < end; ++plane) {
          float* out = xp + plane * plane_floats;
          const float* in = x + plane * p.in_h * p.in_w;
          for (std::size_t r = 0; r < geo.padded_rows; ++r) {
            float* row = out + r * geo.row_floats;
            const bool inside = r >= p.pad_top && r - p.pad_top < p.in_h;
            // Columns of the input row inside the padded row: with a padding
            // wider than the kernel reaches, the last ones are never read.
            const std::size_t first = std::min(p.pad_left, geo.row_floats);
            const std::size_t count = inside ? std::min(p.in_w, geo.row_floats - first) : 0;
            std::fill(row, row + first, 0.0f);
            if (count) std::memcpy(row + first, in + (r - p.pad_top) * p.in_w, count * sizeof(float));
            std::fill(row + first + count, row + geo.row_floats, 0.0f);
          }
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, plane_floats)));
}

/// A run of pixels of one output row: image n, row oh, columns [ow0, ow1).
struct Run {
  std::size_t n, oh, ow0, ow1;
};

/// Calls f(run) for the output rows' pieces covering pixels [p0, p1).
template <class F>
void for_each_run(const Problem& p, std::size_t p0, std::size_t p1, F&& f) {
  while (p0 < p1) {
    const std::size_t row = p0 / p.out_w, ow0 = p0 % p.out_w, ow1 = std::min(p.out_w, ow0 + (p1 - p0));
    f(Run{row / p.out_h, row % p.out_h, ow0, ow1});
    p0 += ow1 - ow0;
  }
}

/// gt[i][c] = g[channel oc0 + c] at the chunk's i-th pixel, 0 for channels
/// past the last.
void transpose_gradient(const Problem& p, const float* g, std::size_t oc0, std::size_t p0, std::size_t p1, float* gt) {
  const std::size_t plane = p.out_h * p.out_w, valid = std::min(kChannels, p.out_channels - oc0);
  std::size_t i = 0;
  for_each_run(p, p0, p1, [&](const Run& r) {
    const float* src = g + (r.n * p.out_channels + oc0) * plane + r.oh * p.out_w;
    for (std::size_t ow = r.ow0; ow < r.ow1; ++ow, ++i) {
      float* dst = gt + i * kChannels;
      for (std::size_t c = 0; c < valid; ++c) dst[c] = src[c * plane + ow];
      for (std::size_t c = valid; c < kChannels; ++c) dst[c] = 0.0f;
    }
  });
}

/// One tile (16 channels x C columns, C <= 6) over a chunk's `pixels`, the
/// i-th of which reads the padded input from pixel_offset[i] (its first
/// tap) and its channels' gradients from gt[i]: the sums are added into
/// dwt[col][channel].
template <std::size_t C>
struct Tile {
  BURN_AVX2 static void run(const Problem& p, const Geometry& geo, const float* gt, const std::size_t* pixel_offset,
                            std::size_t pixels, const float* xp, std::size_t oc0, std::size_t col0, float* dwt) {
    static_assert(C >= 1 && C <= kColumns);
    const std::size_t taps = p.kernel_h * p.kernel_w;
    std::array<std::size_t, kColumns> x_offset{};
    for (std::size_t c = 0; c < C; ++c) {
      const std::size_t col = col0 + c, ic = col / taps, kh = col / p.kernel_w % p.kernel_h, kw = col % p.kernel_w;
      x_offset[c] = (ic * geo.padded_rows + kh * p.dilation_h) * geo.row_floats + kw * p.dilation_w;
    }
    // Named registers: in an array GCC keeps accumulators in memory (see
    // winograd.cpp's product_block).
    const __m256 zero = _mm256_setzero_ps();
    __m256 l0 = zero, h0 = zero, l1 = zero, h1 = zero, l2 = zero, h2 = zero;
    __m256 l3 = zero, h3 = zero, l4 = zero, h4 = zero, l5 = zero, h5 = zero;
    const float* x0 = xp + x_offset[0];
    const float* x1 = xp + x_offset[1];
    const float* x2 = xp + x_offset[2];
    const float* x3 = xp + x_offset[3];
    const float* x4 = xp + x_offset[4];
    const float* x5 = xp + x_offset[5];
    for (std::size_t i = 0; i < pixels; ++i, gt += kChannels) {
      const std::size_t at = pixel_offset[i];
      const __m256 gl = _mm256_load_ps(gt), gh = _mm256_load_ps(gt + 8);
#define BURN_WEIGHT_GRAD_COLUMN(c, l, h)              \
  if constexpr (C > (c)) {                            \
    const __m256 xv = _mm256_broadcast_ss(x##c + at); \
    (l) = _mm256_fmadd_ps(gl, xv, l);                 \
    (h) = _mm256_fmadd_ps(gh, xv, h);                 \
  }
      BURN_WEIGHT_GRAD_COLUMN(0, l0, h0)
      BURN_WEIGHT_GRAD_COLUMN(1, l1, h1)
      BURN_WEIGHT_GRAD_COLUMN(2, l2, h2)
      BURN_WEIGHT_GRAD_COLUMN(3, l3, h3)
      BURN_WEIGHT_GRAD_COLUMN(4, l4, h4)
      BURN_WEIGHT_GRAD_COLUMN(5, l5, h5)
#undef BURN_WEIGHT_GRAD_COLUMN
    }
    const std::size_t ld = geo.channels_padded;
    const auto add = [&](std::size_t c, __m256 l, __m256 h) BURN_AVX2 {
      float* out = dwt + (col0 + c) * ld + oc0;
      _mm256_storeu_ps(out, _mm256_add_ps(_mm256_loadu_ps(out), l));
      _mm256_storeu_ps(out + 8, _mm256_add_ps(_mm256_loadu_ps(out + 8), h));
    };
    add(0, l0, h0);
    if constexpr (C > 1) add(1, l1, h1);
    if constexpr (C > 2) add(2, l2, h2);
    if constexpr (C > 3) add(3, l3, h3);
    if constexpr (C > 4) add(4, l4, h4);
    if constexpr (C > 5) add(5, l5, h5);
  }
};

using TileFn = void (*)(const Problem&, const Geometry&, const float*, const std::size_t*, std::size_t, const float*,
                        std::size_t, std::size_t, float*);

template <std::size_t... I>
constexpr std::array<TileFn, kColumns> tile_table(std::index_sequence<I...>) {
  return {&Tile<I + 1>::run...};
}
constexpr auto kTiles = tile_table(std::make_index_sequence<kColumns>());

}  // namespace

void weight_grad(const Problem& p, const float* x, const float* g, float* dw, float* workspace) {
  const Geometry geo = geometry(p);
  float* xp = workspace;
  float* dwt = workspace + (geo.input_floats + 7) / 8 * 8;
  pad_input(p, geo, x, xp);
  std::fill(dwt, dwt + geo.cols * geo.channels_padded, 0.0f);
  const std::size_t fmas_per_tile = kChannels * kColumns * geo.pixels;
  parallel_for(
      geo.tiles,
      [&](std::size_t begin, std::size_t end) {
        alignas(32) std::array<float, kChunk * kChannels> gt;
        std::array<std::size_t, kChunk> pixel_offset;
        for (std::size_t p0 = 0; p0 < geo.pixels; p0 += kChunk) {
          const std::size_t p1 = std::min(geo.pixels, p0 + kChunk);
          // Where each pixel's first tap lies in the padded input: the tiles
          // then walk the chunk as one run, whatever its rows.
          std::size_t i = 0;
          for_each_run(p, p0, p1, [&](const Run& r) {
            const std::size_t row = (r.n * p.in_channels * geo.padded_rows + r.oh) * geo.row_floats;
            for (std::size_t ow = r.ow0; ow < r.ow1; ++ow) pixel_offset[i++] = row + ow;
          });
          std::size_t transposed = geo.tiles;  // no channel group yet
          // Tiles run channel group by channel group: one transpose each.
          for (std::size_t t = begin; t < end; ++t) {
            const std::size_t group = t / geo.col_tiles, col0 = t % geo.col_tiles * kColumns;
            if (group != transposed) {
              transpose_gradient(p, g, group * kChannels, p0, p1, gt.data());
              transposed = group;
            }
            const std::size_t cols = std::min(kColumns, geo.cols - col0);
            kTiles[cols - 1](p, geo, gt.data(), pixel_offset.data(), p1 - p0, xp, group * kChannels, col0, dwt);
          }
        }
      },
      std::max<std::size_t>(1, kMinThreadFmas / std::max<std::size_t>(1, fmas_per_tile)));
  // dW row-major from its column-major sums (a 512 x 4,608 layer's 2.4M
  // values are worth the threads).
  parallel_for(
      p.out_channels,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t oc = begin; oc < end; ++oc)
          for (std::size_t col = 0; col < geo.cols; ++col)
            dw[oc * geo.cols + col] = dwt[col * geo.channels_padded + oc];
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, geo.cols)));
}

#else

bool available() { return false; }
void weight_grad(const Problem&, const float*, const float*, float*, float*) {}

#endif

}  // namespace burn::flex::weight_grad_avx2
