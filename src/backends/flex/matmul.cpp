// Batched matmul with broadcast batch dims. Float types go to oneDNN, which
// reads strided operands in place (transposed views need no copy): small f32
// products through its dnnl_sgemm (is_small_product), the rest through a
// matmul primitive; f64, ints and layouts oneDNN cannot describe use the
// strided loop in gemm.hpp.
#include <algorithm>
#include <cstring>

#include "backends/flex/dnnl_engine.hpp"
#include "backends/flex/gemm.hpp"
#include "backends/flex/matmul_post_ops.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::flex {
namespace {

using host::CpuTensor;
using host::CpuTensorPtr;

/// Products with at least this many rows and a right operand of at least
/// this many elements read it packed (dnnl_matmul).
constexpr std::size_t kPackedRightMinRows = 512;
constexpr std::size_t kPackedRightMinElements = std::size_t{1} << 20;

/// Right operands padded against oneDNN's no-copy kernels (pads_right_rows):
/// rows at least this many elements long, whose stride is a multiple of
/// kBadRowStride elements, get kRowPadding more.
constexpr std::int64_t kBadRowStride = 512;
constexpr std::int64_t kRowPadding = 16;
/// Fewer rows than this gain less from the padding than copying the operand
/// costs (unless the copy is cached).
constexpr std::size_t kPaddedRightMinRows = 64;

/// An operand as oneDNN will see it: dims (1 where broadcast) and strides.
struct Operand {
  CpuTensorPtr t;
  std::vector<std::size_t> dims;
  std::vector<std::int64_t> strides;
};

/// Makes the matrix part (last two dims) a layout oneDNN's gemm reads
/// directly: one unit stride and a leading dimension covering the other.
bool normalise_matrix(Operand& o) {
  const std::size_t r = o.dims.size();
  const std::size_t rows = o.dims[r - 2], cols = o.dims[r - 1];
  auto& rs = o.strides[r - 2];
  auto& cs = o.strides[r - 1];
  if (rows == 1 && cols == 1) rs = cs = 1;
  else if (rows == 1) rs = (cs == 1) ? static_cast<std::int64_t>(cols) : 1;
  else if (cols == 1) cs = (rs == 1) ? static_cast<std::int64_t>(rows) : 1;
  if (cs == 1 && rs >= static_cast<std::int64_t>(std::max<std::size_t>(cols, 1))) return true;
  if (rs == 1 && cs >= static_cast<std::int64_t>(std::max<std::size_t>(rows, 1))) return true;
  return false;
}

Operand make_operand(const Context& ctx, CpuTensorPtr t, bool force_copy) {
  if (force_copy) t = host::contiguous(ctx.alloc, t, true);
  Operand o{t, t->shape, t->strides};
  for (std::size_t i = 0; i + 2 < o.dims.size(); ++i)
    if (o.strides[i] == 0) o.dims[i] = 1;  // an expanded dim: oneDNN broadcasts it instead
  return o;
}

bool has_negative_stride(const CpuTensor& t) {
  for (std::size_t i = 0; i < t.rank(); ++i)
    if (t.shape[i] > 1 && t.strides[i] < 0) return true;
  return false;
}

/// Describes both operands and the output for oneDNN with batch dims of size
/// one in the output dropped and mergeable neighbours fused (fewer, larger
/// batch dims keep oneDNN on its batched-gemm path). False if the case
/// cannot be described.
bool describe(const Context& ctx, const CpuTensorPtr& a_t, const CpuTensorPtr& b_t, const std::vector<std::size_t>& out,
              Operand& a, Operand& b, std::vector<std::size_t>& out_dims) {
  const std::size_t r = out.size();
  a = make_operand(ctx, a_t, has_negative_stride(*a_t));
  b = make_operand(ctx, b_t, has_negative_stride(*b_t));
  // A layout gemm cannot read (both matrix strides non-unit, a zero row
  // stride): copy to row-major, which always can.
  if (!normalise_matrix(a)) {
    a = make_operand(ctx, a_t, true);
    normalise_matrix(a);
  }
  if (!normalise_matrix(b)) {
    b = make_operand(ctx, b_t, true);
    normalise_matrix(b);
  }
  // A dim that both operands broadcast but the output does not (an expanded
  // operand): materialise that operand.
  for (std::size_t i = 0; i + 2 < r; ++i) {
    if (out[i] > 1 && a.dims[i] == 1 && b.dims[i] == 1) {
      Operand& x = (a_t->shape[i] == out[i]) ? a : b;
      const CpuTensorPtr& src = (a_t->shape[i] == out[i]) ? a_t : b_t;
      x = make_operand(ctx, src, true);
      normalise_matrix(x);
    }
  }
  // Batch dims, outermost first, without the output's unit dims.
  struct Dim {
    std::size_t size;
    bool a_full, b_full;
    std::int64_t as, bs;
  };
  std::vector<Dim> batch;
  for (std::size_t i = 0; i + 2 < r; ++i) {
    if (out[i] == 1) continue;
    batch.push_back({out[i], a.dims[i] != 1, b.dims[i] != 1, a.strides[i], b.strides[i]});
  }
  std::vector<Dim> merged;
  for (const Dim& d : batch) {
    if (!merged.empty()) {
      Dim& p = merged.back();
      const bool fits_a = p.a_full == d.a_full && (!d.a_full || p.as == d.as * static_cast<std::int64_t>(d.size));
      const bool fits_b = p.b_full == d.b_full && (!d.b_full || p.bs == d.bs * static_cast<std::int64_t>(d.size));
      if (fits_a && fits_b) {
        p.size *= d.size;
        p.as = d.as;
        p.bs = d.bs;
        continue;
      }
    }
    merged.push_back(d);
  }
  if (merged.size() + 2 > DNNL_MAX_NDIMS) return false;
  auto rebuild = [&](Operand& o, bool is_a) {
    std::vector<std::size_t> dims;
    std::vector<std::int64_t> strides;
    for (const Dim& d : merged) {
      const bool full = is_a ? d.a_full : d.b_full;
      dims.push_back(full ? d.size : 1);
      strides.push_back(full ? (is_a ? d.as : d.bs) : 0);
    }
    dims.push_back(o.dims[r - 2]);
    dims.push_back(o.dims[r - 1]);
    strides.push_back(o.strides[r - 2]);
    strides.push_back(o.strides[r - 1]);
    // Broadcast dims get the stride a dense layout would have; oneDNN ignores
    // it but validates it.
    for (std::size_t i = dims.size() - 2; i-- > 0;) {
      if (dims[i] != 1) continue;
      std::int64_t span = 1;
      for (std::size_t j = i + 1; j < dims.size(); ++j)
        span = std::max(span, strides[j] * static_cast<std::int64_t>(dims[j]));
      strides[i] = span;
    }
    o.dims = std::move(dims);
    o.strides = std::move(strides);
  };
  rebuild(a, true);
  rebuild(b, false);
  out_dims.clear();
  for (const Dim& d : merged) out_dims.push_back(d.size);
  out_dims.push_back(out[r - 2]);
  out_dims.push_back(out[r - 1]);
  return true;
}

/// dnnl_sgemm (see is_small_product) on f32 matrices as describe() leaves
/// them (no batch dims): each operand has one unit stride, so it is
/// row-major ('N') or a transposed row-major view ('T') with the other
/// stride as leading dimension. False if oneDNN declines; the caller then
/// builds a primitive.
bool small_sgemm(const Operand& a, const Operand& b, CpuTensor& c) {
  const auto m = static_cast<dnnl_dim_t>(a.dims[0]), k = static_cast<dnnl_dim_t>(a.dims[1]),
             n = static_cast<dnnl_dim_t>(b.dims[1]);
  auto layout = [](const Operand& o, char& trans, dnnl_dim_t& ld) {
    if (o.strides[1] == 1) {
      trans = 'N';
      ld = o.strides[0];
    } else {
      trans = 'T';
      ld = o.strides[1];
    }
  };
  char ta = 'N', tb = 'N';
  dnnl_dim_t lda = 1, ldb = 1;
  layout(a, ta, lda);
  layout(b, tb, ldb);
  return dnnl_sgemm(ta, tb, m, n, k, 1.0f, a.t->data<float>(), lda, b.t->data<float>(), ldb, 0.0f, c.data<float>(),
                    n) == dnnl_success;
}

/// Whether an f32 product reads its right operand through a copy with
/// longer rows. Without AVX-512, oneDNN 2.6's gemm reads the right operand
/// in place (its "no-copy" kernels) whenever the output has few rows or
/// columns (1/M + 1/N >= 0.0038 in its driver: a batch of up to 263), and
/// those kernels run at half speed when the operand's rows lie a multiple
/// of 2 KiB apart, as they do in every Linear layer 512, 1024 or 4096 wide.
/// On an AMD EPYC (Zen 3, AVX2): [256,1024] x [1024,1024] 5.9 ms, 2.9 ms with
/// rows 1040 floats apart; [64,4096] x [4096,4096] 25 ms against 11.6; a
/// transposed right operand, or a product with more rows and columns (its
/// copy-based path), runs at full speed as it is. The copy is oneDNN's
/// reorder into a strided layout: kept with the weights when they come
/// again (execute_with_layouts), else made per call, which pays from
/// kPaddedRightMinRows rows on (the operand is read once more and written
/// once; the product reads it M times). A choice by shape and CPU alone:
/// the kernel and its summation order are the same either way.
bool pads_right_rows(const Operand& b, const std::vector<std::size_t>& out_dims) {
  const std::size_t r = out_dims.size();
  const std::size_t m = out_dims[r - 2], n = out_dims[r - 1];
  const std::int64_t row_stride = b.strides[r - 2];
  if (m < kPaddedRightMinRows || b.dims[r - 2] < 2 || b.strides[r - 1] != 1) return false;
  if (row_stride < kBadRowStride || row_stride % kBadRowStride != 0) return false;
  return 1.0 / static_cast<double>(m) + 1.0 / static_cast<double>(n) >= 0.0038 && dnn::isa_below_avx512();
}

/// `b_md` with each row kRowPadding elements longer and the batch dims dense
/// over the longer rows.
dnnl::memory::desc padded_rows(const Operand& b, dnnl::memory::data_type dt) {
  const std::size_t r = b.dims.size();
  dnnl::memory::dims strides(r);
  strides[r - 1] = 1;
  strides[r - 2] = static_cast<dnnl_dim_t>(b.dims[r - 1]) + kRowPadding;
  for (std::size_t i = r - 2; i-- > 0;) strides[i] = strides[i + 1] * static_cast<dnnl_dim_t>(b.dims[i + 1]);
  return dnnl::memory::desc(dnn::to_dims(b.dims), dt, strides);
}

/// oneDNN matmul of float operands into the contiguous `c`, plus `bias` (a
/// row of the output's last-dim length, added to every row) and then
/// `attr`'s post-ops (their arguments in `post_args`) when given; false when
/// oneDNN has no implementation for this dtype or layout.
bool dnnl_matmul(const Context& ctx, const CpuTensorPtr& a_t, const CpuTensorPtr& b_t, CpuTensor& c,
                 dnnl::memory::data_type dt, const dnnl::primitive_attr* attr = nullptr,
                 const std::unordered_map<int, dnnl::memory>* post_args = nullptr, const CpuTensor* bias = nullptr) {
  Operand a, b;
  std::vector<std::size_t> out_dims;
  if (!describe(ctx, a_t, b_t, c.shape, a, b, out_dims)) return false;
  if (dt == dnnl::memory::data_type::f32 && !attr && !bias && out_dims.size() == 2 &&
      is_small_product(out_dims[0], a.dims[1], out_dims[1]) && small_sgemm(a, b, c))
    return true;
  auto md = [&](const Operand& o) {
    return dnnl::memory::desc(dnn::to_dims(o.dims), dt, dnnl::memory::dims(o.strides.begin(), o.strides.end()));
  };
  const auto a_md = md(a), b_md = md(b);
  const auto c_md = dnn::plain_desc(out_dims, dt);
  dnnl::memory::desc bias_md;
  if (bias) {
    // [1, ..., 1, n] in the output's (merged) rank, dense (the caller
    // passes a bias with unit stride), read in place.
    std::vector<std::size_t> dims(out_dims.size(), 1);
    dims.back() = out_dims.back();
    bias_md = dnn::plain_desc(dims, dt);
  }
  // A large right operand of a product with many rows is read in the
  // blocked layout oneDNN's kernels pack it into: kept packed while it lives
  // when it comes again (a layer's weights in inference), else reordered for
  // this call. That beats oneDNN copying a plain operand inside the kernel
  // (a 2048^3 bf16 product on AMX: 14.6-15.2 ms plain, 12.2-12.9
  // reordering each call, 9 packed); with few rows (a Linear layer on a
  // batch of 64) reordering costs more than it saves. The choice depends on
  // the shape alone, so a product's bits do not depend on what the cache
  // holds.
  const bool pack_right =
      out_dims.size() == 2 && out_dims[0] >= kPackedRightMinRows && a.dims[1] * out_dims[1] >= kPackedRightMinElements;
  const bool pad_right = dt == dnnl::memory::data_type::f32 && pads_right_rows(b, out_dims);
  const auto b_want = pad_right ? padded_rows(b, dt) : pack_right ? dnn::any_layout(b_md) : b_md;
  const auto op_desc = bias ? dnnl::matmul::desc(a_md, b_want, bias_md, c_md) : dnnl::matmul::desc(a_md, b_want, c_md);
  auto pd = attr ? dnn::try_create<dnnl::matmul::primitive_desc>(op_desc, *attr, dnn::engine())
                 : dnn::try_create<dnnl::matmul::primitive_desc>(op_desc, dnn::engine());
  if (!pd || dnn::slow_half(*pd, dt)) return false;
  std::vector<dnn::PlainArg> args{{DNNL_ARG_SRC, a_md, a.t.get()},
                                  {DNNL_ARG_WEIGHTS, b_md, b.t.get()},
                                  {DNNL_ARG_DST, c_md, &c, true}};
  if (bias) args.push_back({DNNL_ARG_BIAS, bias_md, bias});
  dnn::execute_with_layouts(ctx, dnnl::matmul(*pd), *pd, args, post_args);
  return true;
}

/// The fallback: strided loops over output rows, batch dims broadcast by
/// giving size-1 operand dims a zero stride.
template <class T>
void loop_matmul(const CpuTensor& a, const CpuTensor& b, CpuTensor& c) {
  const std::size_t r = c.rank();
  const std::size_t m = c.shape[r - 2], n = c.shape[r - 1], k = a.shape[r - 1];
  std::size_t batch = 1;
  for (std::size_t i = 0; i + 2 < r; ++i) batch *= c.shape[i];
  auto batch_offset = [&](const CpuTensor& t, std::size_t bi) {
    std::int64_t off = 0;
    for (std::size_t i = r - 2; i-- > 0;) {
      const std::size_t idx = bi % c.shape[i];
      bi /= c.shape[i];
      if (t.shape[i] != 1) off += static_cast<std::int64_t>(idx) * t.strides[i];
    }
    return off;
  };
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  T* cp = c.data<T>();
  parallel_for(
      batch * m,
      [&](std::size_t begin, std::size_t end) {
        while (begin < end) {
          const std::size_t bi = begin / m, row = begin % m;
          const std::size_t stop = std::min(end - begin, m - row) + row;
          dnn::MatRef<T> am{ap + batch_offset(a, bi), a.strides[r - 2], a.strides[r - 1]};
          dnn::MatRef<T> bm{bp + batch_offset(b, bi), b.strides[r - 2], b.strides[r - 1]};
          dnn::gemm_rows<T>(row, stop, n, k, am, bm, cp + bi * m * n, static_cast<std::int64_t>(n));
          begin += stop - row;
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, n * k)));
}

}  // namespace

bool matmul_f32_with_post_ops(const Context& ctx, const host::CpuTensorPtr& a, const host::CpuTensorPtr& b,
                              host::CpuTensor& c, const dnnl::primitive_attr& attr,
                              const std::unordered_map<int, dnnl::memory>& post_args, const host::CpuTensor* bias) {
  if (a->dtype != DType::F32 || b->dtype != DType::F32 || c.dtype != DType::F32 || c.num_elements() == 0 ||
      a->shape.back() == 0)
    return false;
  return dnnl_matmul(ctx, a, b, c, dnnl::memory::data_type::f32, &attr, &post_args, bias);
}

Result kernel(const Context& ctx, const ir::Matmul&, Inputs in, Outputs out) {
  auto a = host::as_cpu_ptr(in[0].primitive);
  auto b = host::as_cpu_ptr(in[1].primitive);
  auto c = ctx.output(out[0]);
  const std::size_t r = c->rank();
  if (c->num_elements() == 0) return {c};
  if (a->shape[r - 1] == 0) {  // empty inner dim: every sum is empty
    std::memset(c->base(), 0, c->num_elements() * dtype_size(c->dtype));
    return {c};
  }
  const DType dtype = out[0].dtype;
  if (const auto dt = dnn::float_type(dtype)) {
    if (dnnl_matmul(ctx, a, b, *c, *dt)) return {c};
  }
  if (is_half(dtype)) {
    // No native half kernel on this CPU: run f32 and round once at the end.
    auto a32 = dnn::to_f32(ctx, *a), b32 = dnn::to_f32(ctx, *b);
    auto c32 = ctx.output({out[0].shape, DType::F32});
    if (!dnnl_matmul(ctx, a32, b32, *c32, dnnl::memory::data_type::f32)) loop_matmul<float>(*a32, *b32, *c32);
    dnn::narrow_from_f32(*c32, *c);
    return {c};
  }
  visit_numeric_dtype("matmul", dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, f16> && !std::is_same_v<T, bf16>) loop_matmul<T>(*a, *b, *c);
  });
  return {c};
}

}  // namespace burn::flex
