// Winograd F(4x4, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016): with d a 6x6 input tile and g a 3x3 filter, the
// 4x4 output tile is A^T [(G g G^T) . (B^T d B)] A, the product elementwise.
// Over channels the elementwise products become 36 matrix products
// (tiles x IC by IC x OC), which is where the time goes.
//
// The output tiles are processed in chunks small enough that a chunk's
// transformed inputs (V) and products (M) stay in the caches; each chunk
// runs three phases:
//   1. V[pos][tile][ic] = B^T d B of each tile and 8-channel block;
//   2. M[pos] = V[pos] x U[pos] for the 36 positions, U the transformed
//      weights in panels of 16 output channels;
//   3. y = A^T M A (+ bias, then the fused epilogue) of each tile and
//      8-channel block.
// With few tiles the threads share each phase of one chunk; with many each
// thread runs whole chunks of its own (geometry()).
#include "backends/flex/winograd.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <omp.h>

#include "backends/flex/parallel.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define BURN_WINOGRAD_AVX2 1
#define BURN_AVX2 __attribute__((target("avx2,fma")))
#else
#define BURN_WINOGRAD_AVX2 0
#endif

namespace burn::flex::winograd {
namespace {

constexpr std::size_t kAlpha = 6;  // input tile side
constexpr std::size_t kPositions = kAlpha * kAlpha;
constexpr std::size_t kTile = 4;    // output tile side
constexpr std::size_t kBlock = 8;   // channels per nChw8c block (one AVX2 vector)
constexpr std::size_t kPanel = 16;  // output channels per weight panel
constexpr std::size_t kRows = 6;    // tiles per register block of the products
// Bytes of transformed inputs per chunk: with the products beside them, a
// few MB, so a chunk stays in the last-level cache between the phases.
constexpr std::size_t kChunkBytes = std::size_t(2) << 20;
constexpr std::size_t kMinChunkTiles = 2 * kRows;
// Fewest output tiles worth transforming for (see takes()); measured on a
// 2-core AVX2 EPYC: 4 tiles ran as fast as the direct kernel, 16 twice as fast.
constexpr std::size_t kMinTiles = 8;
// Fewest tiles per thread for threads to take whole chunks each; below it
// they share the phases of one chunk, which streams the weights once for
// all of them rather than once per thread.
constexpr std::size_t kMinThreadTiles = 32;

struct Geometry {
  std::size_t tiles_h, tiles_w, tiles;
  std::size_t chunk;  // tiles per chunk
  std::size_t slots;  // chunks in flight at once, each with its own workspace
};

Geometry geometry(const Problem& p) {
  Geometry g{};
  g.tiles_h = (p.out_h + kTile - 1) / kTile;
  g.tiles_w = (p.out_w + kTile - 1) / kTile;
  g.tiles = p.batch * g.tiles_h * g.tiles_w;
  const std::size_t widest = std::max(p.in_channels, p.out_channels);
  const std::size_t fit = std::max(kMinChunkTiles, kChunkBytes / (kPositions * widest * sizeof(float)));
  const std::size_t threads = std::max<std::size_t>(p.threads, 1);
  if (threads > 1 && g.tiles >= threads * kMinThreadTiles) {
    // Each thread runs whole chunks on its own: no barrier between the
    // phases, and its chunk stays in its own caches. As many chunks per
    // thread, so none waits for another's last one; the threads' chunks
    // together no larger than one shared chunk.
    const std::size_t fit_each = std::max(kMinChunkTiles, fit / threads);
    std::size_t chunks = (g.tiles + fit_each - 1) / fit_each;
    chunks = (chunks + threads - 1) / threads * threads;
    g.chunk = (g.tiles + chunks - 1) / chunks;
    g.slots = threads;
  } else {
    // Few tiles: the threads share each phase of one chunk at a time.
    g.chunk = std::min(g.tiles, fit);
    g.slots = 1;
  }
  return g;
}

}  // namespace

bool takes(const Problem& p) {
  const bool channels =
      p.in_channels > 0 && p.out_channels > 0 && p.in_channels % kBlock == 0 && p.out_channels % kPanel == 0;
  return channels && p.in_h > 0 && p.in_w > 0 && geometry(p).tiles >= kMinTiles;
}

std::size_t transformed_weight_floats(std::size_t in_channels, std::size_t out_channels) {
  return kPositions * in_channels * out_channels;
}

void transform_weights(const float* w, std::size_t in_channels, std::size_t out_channels, float* u) {
  // G g G^T with G = [[1/4, 0, 0], [-1/6, -1/6, -1/6], [-1/6, 1/6, -1/6],
  // [1/24, 1/12, 1/6], [1/24, -1/12, 1/6], [0, 0, 1]], computed in double so
  // the transform adds no error of its own beyond the final rounding.
  static constexpr std::array<std::array<double, 3>, kAlpha> G{{{1.0 / 4, 0, 0},
                                                                {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                                                {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                                                {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                                                {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                                                {0, 0, 1}}};
  const std::size_t panels = out_channels / kPanel;
  // By (panel, input channel): the 16 lanes of a panel are written together,
  // a cache line per position, rather than 36 scattered floats per filter.
  parallel_for(
      panels * in_channels,
      [&](std::size_t begin, std::size_t end) {
        std::array<std::array<float, kPanel>, kPositions> lanes{};
        for (std::size_t item = begin; item < end; ++item) {
          const std::size_t panel = item / in_channels, ic = item % in_channels;
          for (std::size_t lane = 0; lane < kPanel; ++lane) {
            const float* g = w + ((panel * kPanel + lane) * in_channels + ic) * 9;
            std::array<std::array<double, 3>, kAlpha> gg{};  // G g
            for (std::size_t i = 0; i < kAlpha; ++i)
              for (std::size_t j = 0; j < 3; ++j) gg[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
            for (std::size_t i = 0; i < kAlpha; ++i)
              for (std::size_t j = 0; j < kAlpha; ++j)
                lanes[i * kAlpha + j][lane] =
                    static_cast<float>(gg[i][0] * G[j][0] + gg[i][1] * G[j][1] + gg[i][2] * G[j][2]);
          }
          // U[pos][panel][ic][lane]
          for (std::size_t pos = 0; pos < kPositions; ++pos)
            std::copy(lanes[pos].begin(), lanes[pos].end(), u + ((pos * panels + panel) * in_channels + ic) * kPanel);
        }
      },
      64);
}

#if BURN_WINOGRAD_AVX2

bool available() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

namespace {

// __m256 as an element type of std::array (its may_alias attribute would be
// dropped there, with a warning).
using Vec = float __attribute__((vector_size(32)));

/// One step of B^T applied to six vectors (a column or a row of a tile).
BURN_AVX2 inline void input_step(const Vec* d, std::size_t stride, Vec* r, std::size_t rstride) {
  const __m256 four = _mm256_set1_ps(4.0f), five = _mm256_set1_ps(5.0f), two = _mm256_set1_ps(2.0f);
  const __m256 d0 = d[0], d1 = d[stride], d2 = d[2 * stride], d3 = d[3 * stride], d4 = d[4 * stride],
               d5 = d[5 * stride];
  // r0 = 4 d0 - 5 d2 + d4
  r[0] = _mm256_fmadd_ps(four, d0, _mm256_fnmadd_ps(five, d2, d4));
  // r1 = -4 d1 - 4 d2 + d3 + d4 = a + b, r2 = 4 d1 - 4 d2 - d3 + d4 = a - b
  const __m256 a = _mm256_fnmadd_ps(four, d2, d4);  // d4 - 4 d2
  const __m256 b = _mm256_fnmadd_ps(four, d1, d3);  // d3 - 4 d1
  r[rstride] = _mm256_add_ps(a, b);
  r[2 * rstride] = _mm256_sub_ps(a, b);
  // r3 = -2 d1 - d2 + 2 d3 + d4, r4 = 2 d1 - d2 - 2 d3 + d4
  const __m256 c = _mm256_sub_ps(d4, d2);
  const __m256 e = _mm256_mul_ps(two, _mm256_sub_ps(d3, d1));
  r[3 * rstride] = _mm256_add_ps(c, e);
  r[4 * rstride] = _mm256_sub_ps(c, e);
  // r5 = 4 d1 - 5 d3 + d5
  r[5 * rstride] = _mm256_fmadd_ps(four, d1, _mm256_fnmadd_ps(five, d3, d5));
}

/// One step of A^T applied to six vectors, giving four.
BURN_AVX2 inline void output_step(const Vec* m, std::size_t stride, Vec* o, std::size_t ostride) {
  const __m256 two = _mm256_set1_ps(2.0f), four = _mm256_set1_ps(4.0f), eight = _mm256_set1_ps(8.0f);
  const __m256 m0 = m[0], m1 = m[stride], m2 = m[2 * stride], m3 = m[3 * stride], m4 = m[4 * stride],
               m5 = m[5 * stride];
  const __m256 s12 = _mm256_add_ps(m1, m2), d12 = _mm256_sub_ps(m1, m2);
  const __m256 s34 = _mm256_add_ps(m3, m4), d34 = _mm256_sub_ps(m3, m4);
  o[0] = _mm256_add_ps(_mm256_add_ps(m0, s12), s34);                     // m0 + m1 + m2 + m3 + m4
  o[ostride] = _mm256_fmadd_ps(two, d34, d12);                           // m1 - m2 + 2 (m3 - m4)
  o[2 * ostride] = _mm256_fmadd_ps(four, s34, s12);                      // m1 + m2 + 4 (m3 + m4)
  o[3 * ostride] = _mm256_add_ps(_mm256_fmadd_ps(eight, d34, d12), m5);  // m1 - m2 + 8 (m3 - m4) + m5
}

struct Layout {
  const Problem& p;
  Geometry g;
  std::size_t in_blocks, out_blocks;
  std::span<const EpilogueStep> epilogue;
};

/// Where output tile `tile` (numbered over the batch, row by row) starts.
struct TilePlace {
  std::size_t n, y0, x0;  // image, first output row and column
};
inline TilePlace place(const Layout& l, std::size_t tile) {
  const std::size_t per_image = l.g.tiles_h * l.g.tiles_w, rest = tile % per_image;
  return {tile / per_image, (rest / l.g.tiles_w) * kTile, (rest % l.g.tiles_w) * kTile};
}

/// The epilogue's steps on v, the output vector at `offset` floats into y
/// (output channel block ob).
BURN_AVX2 inline __m256 apply_epilogue(std::span<const EpilogueStep> steps, __m256 v, std::size_t ob,
                                       std::size_t offset) {
  for (const EpilogueStep& s : steps) {
    if (s.op == EpilogueStep::Op::Relu) {
      // max_ps returns its second operand where either is NaN: NaN stays
      // NaN, as relu keeps it elsewhere.
      v = _mm256_max_ps(_mm256_setzero_ps(), v);
      continue;
    }
    __m256 r = _mm256_setzero_ps();
    switch (s.operand) {
      case EpilogueStep::Operand::Scalar: r = _mm256_broadcast_ss(s.data); break;
      case EpilogueStep::Operand::PerChannel: r = _mm256_loadu_ps(s.data + ob * kBlock); break;
      case EpilogueStep::Operand::Full: r = _mm256_loadu_ps(s.data + offset); break;
      case EpilogueStep::Operand::None: break;
    }
    switch (s.op) {
      case EpilogueStep::Op::Add: v = _mm256_add_ps(v, r); break;
      case EpilogueStep::Op::Sub: v = _mm256_sub_ps(v, r); break;
      case EpilogueStep::Op::Mul: v = _mm256_mul_ps(v, r); break;
      case EpilogueStep::Op::Div: v = _mm256_div_ps(v, r); break;
      case EpilogueStep::Op::Relu: break;
    }
  }
  return v;
}

/// Phase 1 for the items [item_begin, item_end), each a tile of the chunk
/// starting at tile `first` and an 8-channel input block: V[pos][t][ic].
BURN_AVX2 void transform_inputs(const Layout& l, const float* x, std::size_t first, std::size_t item_begin,
                                std::size_t item_end, std::size_t chunk, float* v) {
  const Problem& p = l.p;
  const std::size_t ic = p.in_channels;
  for (std::size_t item = item_begin; item < item_end; ++item) {
    const std::size_t t = item / l.in_blocks, cb = item % l.in_blocks;
    const TilePlace at = place(l, first + t);
    const auto iy0 = static_cast<std::ptrdiff_t>(at.y0) - static_cast<std::ptrdiff_t>(p.pad_top);
    const auto ix0 = static_cast<std::ptrdiff_t>(at.x0) - static_cast<std::ptrdiff_t>(p.pad_left);
    const float* plane = x + (at.n * l.in_blocks + cb) * p.in_h * p.in_w * kBlock;
    const auto h = static_cast<std::ptrdiff_t>(p.in_h), w = static_cast<std::ptrdiff_t>(p.in_w);
    std::array<Vec, kPositions> d, tmp;
    const bool inside = iy0 >= 0 && ix0 >= 0 && iy0 + static_cast<std::ptrdiff_t>(kAlpha) <= h &&
                        ix0 + static_cast<std::ptrdiff_t>(kAlpha) <= w;
    for (std::size_t i = 0; i < kAlpha; ++i) {
      const std::ptrdiff_t iy = iy0 + static_cast<std::ptrdiff_t>(i);
      for (std::size_t j = 0; j < kAlpha; ++j) {
        const std::ptrdiff_t ix = ix0 + static_cast<std::ptrdiff_t>(j);
        d[i * kAlpha + j] = inside || (iy >= 0 && iy < h && ix >= 0 && ix < w)
                                ? _mm256_loadu_ps(plane + (iy * w + ix) * static_cast<std::ptrdiff_t>(kBlock))
                                : _mm256_setzero_ps();
      }
    }
    for (std::size_t j = 0; j < kAlpha; ++j) input_step(d.data() + j, kAlpha, tmp.data() + j, kAlpha);  // B^T d
    for (std::size_t i = 0; i < kAlpha; ++i)
      input_step(tmp.data() + i * kAlpha, 1, d.data() + i * kAlpha, 1);  // (B^T d) B
    float* out = v + t * ic + cb * kBlock;
    for (std::size_t pos = 0; pos < kPositions; ++pos) _mm256_storeu_ps(out + pos * chunk * ic, d[pos]);
  }
}

/// c[r][0..16) = sum_k a[r][k] * b[k][0..16) for R rows (b one weight panel).
/// The accumulators are named registers: held in an array, GCC kept them in
/// memory and stored all twelve on every step of k.
template <std::size_t R>
BURN_AVX2 void product_block(const float* a, std::size_t lda, const float* b, std::size_t k, float* c,
                             std::size_t ldc) {
  static_assert(R >= 1 && R <= 6);
  const __m256 zero = _mm256_setzero_ps();
  __m256 l0 = zero, h0 = zero, l1 = zero, h1 = zero, l2 = zero, h2 = zero;
  __m256 l3 = zero, h3 = zero, l4 = zero, h4 = zero, l5 = zero, h5 = zero;
// (Macros rather than lambdas: a lambda does not inherit the target.)
#define BURN_WINOGRAD_STEP(r, l, h)                          \
  do {                                                       \
    const __m256 av = _mm256_broadcast_ss(a + (r)*lda + kk); \
    (l) = _mm256_fmadd_ps(av, b0, l);                        \
    (h) = _mm256_fmadd_ps(av, b1, h);                        \
  } while (false)
#define BURN_WINOGRAD_STORE(r, l, h)      \
  do {                                    \
    _mm256_storeu_ps(c + (r)*ldc, l);     \
    _mm256_storeu_ps(c + (r)*ldc + 8, h); \
  } while (false)
  for (std::size_t kk = 0; kk < k; ++kk) {
    const __m256 b0 = _mm256_loadu_ps(b + kk * kPanel), b1 = _mm256_loadu_ps(b + kk * kPanel + 8);
    BURN_WINOGRAD_STEP(0, l0, h0);
    if constexpr (R > 1) BURN_WINOGRAD_STEP(1, l1, h1);
    if constexpr (R > 2) BURN_WINOGRAD_STEP(2, l2, h2);
    if constexpr (R > 3) BURN_WINOGRAD_STEP(3, l3, h3);
    if constexpr (R > 4) BURN_WINOGRAD_STEP(4, l4, h4);
    if constexpr (R > 5) BURN_WINOGRAD_STEP(5, l5, h5);
  }
  BURN_WINOGRAD_STORE(0, l0, h0);
  if constexpr (R > 1) BURN_WINOGRAD_STORE(1, l1, h1);
  if constexpr (R > 2) BURN_WINOGRAD_STORE(2, l2, h2);
  if constexpr (R > 3) BURN_WINOGRAD_STORE(3, l3, h3);
  if constexpr (R > 4) BURN_WINOGRAD_STORE(4, l4, h4);
  if constexpr (R > 5) BURN_WINOGRAD_STORE(5, l5, h5);
#undef BURN_WINOGRAD_STEP
#undef BURN_WINOGRAD_STORE
}

template <std::size_t... R>
BURN_AVX2 void product_rows(std::size_t rows, const float* a, std::size_t lda, const float* b, std::size_t k, float* c,
                            std::size_t ldc, std::index_sequence<R...>) {
  // The rows left after whole blocks of kRows: one block of that many.
  ((rows == R + 1 ? product_block<R + 1>(a, lda, b, k, c, ldc) : void()), ...);
}

/// Phase 2 for the (position, panel) items [item_begin, item_end).
BURN_AVX2 void multiply(const Layout& l, const float* v, const float* u, std::size_t tiles, std::size_t chunk,
                        std::size_t item_begin, std::size_t item_end, float* m) {
  const std::size_t ic = l.p.in_channels, oc = l.p.out_channels, panels = oc / kPanel;
  for (std::size_t item = item_begin; item < item_end; ++item) {
    const std::size_t pos = item / panels, panel = item % panels;
    const float* a = v + pos * chunk * ic;
    const float* b = u + (pos * panels + panel) * ic * kPanel;
    float* c = m + pos * chunk * oc + panel * kPanel;
    std::size_t t = 0;
    for (; t + kRows <= tiles; t += kRows) product_block<kRows>(a + t * ic, ic, b, ic, c + t * oc, oc);
    if (t < tiles)
      product_rows(tiles - t, a + t * ic, ic, b, ic, c + t * oc, oc, std::make_index_sequence<kRows - 1>());
  }
}

/// Phase 3: y tiles from M, for items (tile, 8-channel output block).
BURN_AVX2 void transform_outputs(const Layout& l, const float* m, const float* bias, std::size_t first,
                                 std::size_t item_begin, std::size_t item_end, std::size_t chunk, float* y) {
  const Problem& p = l.p;
  const std::size_t oc = p.out_channels;
  for (std::size_t item = item_begin; item < item_end; ++item) {
    const std::size_t t = item / l.out_blocks, ob = item % l.out_blocks;
    const TilePlace at = place(l, first + t);
    const std::size_t oy0 = at.y0, ox0 = at.x0;
    std::array<Vec, kPositions> mm;
    std::array<Vec, kTile * kAlpha> s;
    std::array<Vec, kTile * kTile> o;
    const float* in = m + t * oc + ob * kBlock;
    for (std::size_t pos = 0; pos < kPositions; ++pos) mm[pos] = _mm256_loadu_ps(in + pos * chunk * oc);
    for (std::size_t j = 0; j < kAlpha; ++j) output_step(mm.data() + j, kAlpha, s.data() + j, kAlpha);  // A^T M
    for (std::size_t i = 0; i < kTile; ++i)
      output_step(s.data() + i * kAlpha, 1, o.data() + i * kTile, 1);  // (A^T M) A
    const __m256 b = bias ? _mm256_loadu_ps(bias + ob * kBlock) : _mm256_setzero_ps();
    const std::size_t plane = (at.n * l.out_blocks + ob) * p.out_h * p.out_w * kBlock;
    const std::size_t rows = std::min(kTile, p.out_h - oy0), cols = std::min(kTile, p.out_w - ox0);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        const std::size_t offset = plane + ((oy0 + i) * p.out_w + ox0 + j) * kBlock;
        __m256 v = _mm256_add_ps(o[i * kTile + j], b);
        if (!l.epilogue.empty()) v = apply_epilogue(l.epilogue, v, ob, offset);
        _mm256_storeu_ps(y + offset, v);
      }
  }
}

}  // namespace

std::size_t workspace_floats(const Problem& p) {
  const Geometry g = geometry(p);
  return g.slots * kPositions * g.chunk * (p.in_channels + p.out_channels);
}

void convolve(const Problem& p, const float* x, const float* u, const float* bias, float* y, float* workspace,
              std::span<const EpilogueStep> epilogue) {
  const Layout l{p, geometry(p), p.in_channels / kBlock, p.out_channels / kBlock, epilogue};
  const std::size_t chunk = l.g.chunk, chunks = (l.g.tiles + chunk - 1) / chunk;
  const std::size_t panels = p.out_channels / kPanel;
  const std::size_t slot_floats = kPositions * chunk * (p.in_channels + p.out_channels);
  // The three phases of chunk c in the workspace of `slot`, each phase split
  // over the threads (shared) or run by the calling one.
  auto run_chunk = [&](std::size_t c, std::size_t slot, bool shared) {
    const std::size_t first = c * chunk, tiles = std::min(chunk, l.g.tiles - first);
    float* v = workspace + slot * slot_floats;
    float* m = v + kPositions * chunk * p.in_channels;
    auto phase = [&](std::size_t items, std::size_t grain, auto&& body) {
      if (shared) {
        parallel_for(items, body, grain);
      } else {
        body(std::size_t{0}, items);
      }
    };
    phase(tiles * l.in_blocks, 16,
          [&](std::size_t b, std::size_t e) { transform_inputs(l, x, first, b, e, chunk, v); });
    phase(kPositions * panels, 1, [&](std::size_t b, std::size_t e) { multiply(l, v, u, tiles, chunk, b, e, m); });
    phase(tiles * l.out_blocks, 16,
          [&](std::size_t b, std::size_t e) { transform_outputs(l, m, bias, first, b, e, chunk, y); });
  };
  if (l.g.slots == 1) {
    for (std::size_t c = 0; c < chunks; ++c) run_chunk(c, 0, true);
    return;
  }
  // A thread's slot is its number in this region, which has at most `slots`
  // threads (the grain); inside an enclosing parallel region parallel_for
  // runs serially, in slot 0.
  const int level = omp_get_level();
  parallel_for(
      chunks,
      [&](std::size_t b, std::size_t e) {
        const std::size_t slot = omp_get_level() > level ? static_cast<std::size_t>(omp_get_thread_num()) : 0;
        for (std::size_t c = b; c < e; ++c) run_chunk(c, slot, false);
      },
      chunks / l.g.slots);
}

#else

bool available() { return false; }
std::size_t workspace_floats(const Problem&) { return 0; }
void convolve(const Problem&, const float*, const float*, const float*, float*, float*, std::span<const EpilogueStep>) {
}

#endif

}  // namespace burn::flex::winograd
