// Random host inputs, the views that present them non-contiguously, and the
// specs a case presents to the op.
#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace burn::differential {

std::string_view view_name(View v) {
  switch (v) {
    case View::Contiguous: return "contiguous";
    case View::Permuted: return "permuted";
    case View::Strided: return "strided";
    case View::Expanded: return "expanded";
    case View::Flipped: return "flipped";
  }
  return "?";
}

std::string layout_label(const Shape& shape, View view) {
  return shape.to_string() + " " + std::string(view_name(view));
}

ViewPlan plan_view(const Shape& logical, View view) {
  const std::size_t rank = logical.rank();
  if (view == View::Permuted && rank < 2) view = View::Strided;
  switch (view) {
    case View::Contiguous: return {logical, {}};
    case View::Permuted: {
      // Upload the dims reversed; permuting them back yields a transposed layout.
      std::vector<std::size_t> base(logical.dims().rbegin(), logical.dims().rend());
      std::vector<std::size_t> axes(rank);
      for (std::size_t i = 0; i < rank; ++i) axes[i] = rank - 1 - i;
      return {Shape(std::move(base)), {ir::Permute{std::move(axes)}}};
    }
    case View::Strided: {
      // Every other element of a 2n+1 upload; odd dims walk backwards (step -2).
      std::vector<std::size_t> base(rank);
      std::vector<ir::SliceRange> ranges(rank);
      for (std::size_t i = 0; i < rank; ++i) {
        const std::size_t n = logical[i];
        base[i] = 2 * n + 1;
        if (n == 0) ranges[i] = {0, 0, 1};
        else if (i % 2 == 0) ranges[i] = {1, n, 2};
        else ranges[i] = {2 * n, n, -2};
      }
      return {Shape(std::move(base)), {ir::Slice{std::move(ranges)}}};
    }
    case View::Expanded: {
      // Broadcast the first dim whose size is not 1 from an upload of size 1.
      for (std::size_t i = 0; i < rank; ++i)
        if (logical[i] != 1) {
          Shape base = logical;
          base[i] = 1;
          return {base, {ir::Expand{logical}}};
        }
      return {logical, {}};
    }
    case View::Flipped: {
      std::vector<std::size_t> axes(rank);
      std::iota(axes.begin(), axes.end(), std::size_t{0});
      return {logical, {ir::Flip{std::move(axes)}}};
    }
  }
  return {logical, {}};
}

namespace {

std::pair<double, double> int_limits(DType dtype) {
  return visit_int_dtype("random_data", dtype, [&]<class T>() {
    return std::pair<double, double>{static_cast<double>(std::numeric_limits<T>::lowest()),
                                     static_cast<double>(std::numeric_limits<T>::max())};
  });
}

double draw_float(const Dist& d, Rng& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (d.non_finite) {
    const auto pick = rng() % 18;
    if (pick == 0) return std::numeric_limits<double>::quiet_NaN();
    if (pick == 1) return std::numeric_limits<double>::infinity();
    if (pick == 2) return -std::numeric_limits<double>::infinity();
  }
  for (;;) {
    double v = d.lo + (d.hi - d.lo) * unit(rng);
    if (d.grid > 0) v = std::clamp(std::round(v / d.grid) * d.grid, d.lo, d.hi);
    if (!d.nonzero || std::abs(v) >= 0.1) return v;
  }
}

std::int64_t draw_int(const Dist& d, double lo, double hi, Rng& rng) {
  const auto a = static_cast<std::int64_t>(std::ceil(std::max(d.lo, lo)));
  const auto b = static_cast<std::int64_t>(std::floor(std::min(d.hi, hi)));
  if (a > b || (d.nonzero && a == 0 && b == 0))
    throw Error("random_data", "the distribution has no valid integer (test table bug)");
  std::uniform_int_distribution<std::int64_t> pick(a, b);
  for (;;) {
    const std::int64_t v = pick(rng);
    if (!d.nonzero || v != 0) return v;
  }
}

}  // namespace

TensorData random_data(const Shape& shape, DType dtype, const Dist& dist, Rng& rng) {
  const std::size_t n = shape.num_elements();
  if (is_bool(dtype)) {
    std::bernoulli_distribution coin(dist.p_true);
    std::vector<bool> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = coin(rng);
    return TensorData(v, shape);
  }
  if (is_int(dtype)) {
    const auto [lo, hi] = int_limits(dtype);
    std::vector<std::int64_t> v(n);
    for (auto& x : v) x = draw_int(dist, lo, hi, rng);
    return TensorData(v, shape).convert(dtype);
  }
  std::vector<double> v(n);
  for (auto& x : v) x = draw_float(dist, rng);
  // Rounded once here, so both devices receive identical bits.
  return TensorData(v, shape).convert(dtype);
}

Input random_input(const Shape& shape, DType dtype, const Dist& dist, View view, Rng& rng) {
  ViewPlan plan = plan_view(shape, view);
  return {random_data(plan.base, dtype, dist, rng), std::move(plan.ops)};
}

Input index_input(const Shape& shape, DType dtype, std::size_t bound, View view, Rng& rng) {
  if (bound == 0 && shape.num_elements() != 0) throw Error("index_input", "no valid index below 0 (test table bug)");
  return random_input(shape, dtype, Dist::range(0, static_cast<double>(bound) - 1), view, rng);
}

Input unique_index_input(const Shape& shape, std::size_t dim, DType dtype, std::size_t bound, View view, Rng& rng) {
  if (view != View::Contiguous && view != View::Flipped)
    throw Error("unique_index_input", "only contiguous or flipped layouts keep lines distinct (test table bug)");
  if (shape[dim] > bound) throw Error("unique_index_input", "more distinct indices than the bound (test table bug)");
  // Each line along `dim` is a prefix of a random permutation of [0, bound).
  const std::size_t len = shape[dim];
  std::size_t inner = 1;
  for (std::size_t i = dim + 1; i < shape.rank(); ++i) inner *= shape[i];
  const std::size_t outer = len == 0 ? 0 : shape.num_elements() / (len * inner);
  std::vector<std::int64_t> v(shape.num_elements());
  std::vector<std::int64_t> perm(bound);
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t in = 0; in < inner; ++in) {
      std::iota(perm.begin(), perm.end(), std::int64_t{0});
      std::shuffle(perm.begin(), perm.end(), rng);
      for (std::size_t k = 0; k < len; ++k) v[(o * len + k) * inner + in] = perm[k];
    }
  ViewPlan plan = plan_view(shape, view);
  return {TensorData(v, shape).convert(dtype), std::move(plan.ops)};
}

CaseSpecs case_specs(const Case& c) {
  CaseSpecs specs;
  for (const auto& in : c.inputs) {
    ir::TensorSpec s{in.base.shape(), in.base.dtype()};
    for (const auto& op : in.view) s = ir::infer_outputs(op, std::span<const ir::TensorSpec>(&s, 1)).at(0);
    specs.inputs.push_back(s);
  }
  specs.outputs = ir::infer_outputs(c.op, specs.inputs);
  return specs;
}

const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> d{DType::F32, DType::F64, DType::F16, DType::BF16};
  return d;
}
const std::vector<DType>& int_dtypes() {
  static const std::vector<DType> d{DType::I64, DType::I32, DType::I16, DType::I8,
                                    DType::U64, DType::U32, DType::U16, DType::U8};
  return d;
}
const std::vector<DType>& numeric_dtypes() {
  static const std::vector<DType> d = [] {
    auto v = float_dtypes();
    v.insert(v.end(), int_dtypes().begin(), int_dtypes().end());
    return v;
  }();
  return d;
}
const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> d = [] {
    auto v = numeric_dtypes();
    v.push_back(DType::Bool);
    return v;
  }();
  return d;
}

Scalar scalar_for(DType dtype, double f, std::int64_t i, bool b) {
  if (is_float(dtype)) return Scalar(f);
  if (is_int(dtype)) return Scalar(i);
  return Scalar(b);
}

}  // namespace burn::differential
