// The ONNX operators import runs that move or create values without
// arithmetic: shape and layout (Reshape, Transpose, Concat, Slice, ...),
// indexing (Gather, Scatter*), and creation (ConstantOfShape, Range).
#include <algorithm>
#include <cmath>

#include <burn/detail/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_common.hpp"

namespace burn::onnx {
namespace {

// ---- shape and layout -------------------------------------------------------------------------

std::vector<TensorRef> reshape(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  I64s dims = a.ints(1);
  const bool allowzero = a.attr_int("allowzero", 0) != 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allowzero) {
      if (i >= rank_of(x)) a.fail(fmt::format("shape entry {} is 0 (copy) past the input's rank", i));
      dims[i] = static_cast<std::int64_t>(shape_of(x)[i]);
    }
  }
  // burn's reshape reads 0 as "keep": with allowzero, an empty dim is given as an exact shape.
  if (allowzero && std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    std::vector<std::size_t> exact;
    for (auto d : dims) {
      if (d < 0) a.fail("allowzero with -1 in the shape is ambiguous");
      exact.push_back(static_cast<std::size_t>(d));
    }
    return one(detail::reshape_exact(x, Shape(exact)));
  }
  return one(detail::reshape(x, dims));
}

std::vector<TensorRef> flatten(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  const auto ax = a.attr_int("axis", 1);
  const std::size_t split = ax == static_cast<std::int64_t>(r) ? r : axis(a, ax, r);
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < r; ++d) (d < split ? outer : inner) *= static_cast<std::int64_t>(shape_of(x)[d]);
  return one(detail::reshape(x, I64s{outer, inner}));
}

std::vector<TensorRef> transpose(const NodeArgs& a) {
  const std::size_t r = rank_of(a.in(0));
  I64s perm;
  if (auto p = a.attr_ints("perm")) {
    perm = *p;
  } else {
    for (std::size_t d = r; d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  }
  return one(detail::permute(a.in(0), perm));
}

std::vector<TensorRef> expand(const NodeArgs& a) {
  const I64s target = a.ints(1);
  Shape t;
  for (auto d : target) {
    if (d < 0) a.fail("the shape must not be negative");
    t.dims().push_back(static_cast<std::size_t>(d));
  }
  const std::size_t r = std::max(rank_of(a.in(0)), t.rank());
  const TensorRef x = with_rank(a.in(0), r);
  while (t.rank() < r) t.dims().insert(t.dims().begin(), 1);
  const Shape out = ir::broadcast_shapes("Expand", shape_of(x), t);
  return one(detail::expand(x, I64s(out.dims().begin(), out.dims().end())));
}

std::vector<TensorRef> squeeze(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  std::vector<bool> drop(rank_of(x), false);
  if (a.has(1)) {
    for (auto ax : a.ints(1)) {
      const std::size_t d = axis(a, ax, rank_of(x));
      if (shape_of(x)[d] != 1) a.fail(fmt::format("cannot squeeze dim {} of size {}", d, shape_of(x)[d]));
      drop[d] = true;
    }
  } else {
    for (std::size_t d = 0; d < drop.size(); ++d) drop[d] = shape_of(x)[d] == 1;
  }
  I64s dims;
  for (std::size_t d = 0; d < drop.size(); ++d)
    if (!drop[d]) dims.push_back(static_cast<std::int64_t>(shape_of(x)[d]));
  return one(detail::reshape(x, dims));
}

std::vector<TensorRef> unsqueeze(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const I64s axes = a.ints(1);
  const std::size_t out_rank = rank_of(x) + axes.size();
  std::vector<bool> inserted(out_rank, false);
  for (auto ax : axes) {
    const std::size_t d = axis(a, ax, out_rank);
    if (inserted[d]) a.fail("an axis is listed twice");
    inserted[d] = true;
  }
  I64s dims;
  std::size_t next = 0;
  for (std::size_t d = 0; d < out_rank; ++d)
    dims.push_back(inserted[d] ? 1 : static_cast<std::int64_t>(shape_of(x)[next++]));
  return one(detail::reshape(x, dims));
}

std::vector<TensorRef> concat(const NodeArgs& a) {
  std::vector<TensorRef> parts;
  for (std::size_t i = 0; i < a.num_inputs(); ++i) parts.push_back(a.in(i));
  return one(detail::cat(parts, static_cast<std::int64_t>(axis(a, a.attr_int("axis", 0), rank_of(parts[0])))));
}

std::vector<TensorRef> split(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t d = axis(a, a.attr_int("axis", 0), rank_of(x));
  const std::size_t n = a.num_outputs();
  if (a.has_attr("num_outputs") && a.attr_int("num_outputs", 0) != static_cast<std::int64_t>(n))
    a.fail(fmt::format("num_outputs is {} but the node has {} outputs", a.attr_int("num_outputs", 0), n));
  std::vector<std::size_t> sizes;
  if (a.has(1)) {
    for (auto s : a.ints(1)) {
      if (s < 0) a.fail("split sizes must not be negative");
      sizes.push_back(static_cast<std::size_t>(s));
    }
  } else {
    const std::size_t len = shape_of(x)[d];
    const std::size_t each = (len + n - 1) / n;  // the last part may be smaller
    for (std::size_t i = 0, left = len; i < n; ++i) {
      sizes.push_back(std::min(each, left));
      left -= sizes.back();
    }
  }
  if (sizes.size() != n) a.fail(fmt::format("{} split sizes for {} outputs", sizes.size(), n));
  return detail::split_with_sizes(x, sizes, static_cast<std::int64_t>(d));
}

std::vector<TensorRef> slice(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  const I64s starts = a.ints(1), ends = a.ints(2);
  I64s axes, steps;
  if (a.has(3)) {
    axes = a.ints(3);
  } else {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  steps = a.has(4) ? a.ints(4) : I64s(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    a.fail("starts, ends, axes and steps must have one entry each per sliced axis");
  ir::Slice op;
  for (std::size_t d = 0; d < r; ++d) op.ranges.push_back({0, shape_of(x)[d], 1});
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::size_t d = axis(a, axes[i], r);
    const auto dim = static_cast<std::int64_t>(shape_of(x)[d]);
    const std::int64_t step = steps[i];
    if (step == 0) a.fail("a step is 0");
    // ONNX's clamping: negative positions count from the end; then starts
    // and ends clamp to [0, dim] (step > 0) or [-1, dim - 1] (step < 0).
    std::int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    std::int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      s = std::clamp<std::int64_t>(s, 0, dim);
      e = std::clamp<std::int64_t>(e, 0, dim);
    } else {
      s = std::clamp<std::int64_t>(s, -1, dim - 1);
      e = std::clamp<std::int64_t>(e, -1, dim - 1);
    }
    const std::int64_t span = step > 0 ? e - s : s - e;
    const std::int64_t mag = step > 0 ? step : -step;
    const std::int64_t len = span <= 0 ? 0 : (span + mag - 1) / mag;
    op.ranges[d] = {len == 0 ? 0 : static_cast<std::size_t>(s), static_cast<std::size_t>(len), step};
  }
  return one(detail::execute1(op, {x}));
}

// ---- indexing ---------------------------------------------------------------------------------

/// Negative indices count from the end of `dim_size`.
TensorRef wrap_indices(const TensorRef& idx, std::size_t dim_size) {
  TensorRef i = dtype_of(idx) == DType::I64 ? idx : detail::cast(idx, DType::I64);
  const TensorRef negative = detail::binary_scalar(ir::BinaryOp::Less, i, std::int64_t{0});
  const TensorRef shifted = detail::binary_scalar(ir::BinaryOp::Add, i, static_cast<std::int64_t>(dim_size));
  return detail::mask_where(i, negative, shifted);
}

std::vector<TensorRef> gather(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t d = axis(a, a.attr_int("axis", 0), rank_of(x));
  const TensorRef& idx = a.in(1);
  const std::size_t n = shape_of(idx).num_elements();
  const TensorRef flat = detail::reshape(wrap_indices(idx, shape_of(x)[d]), I64s{static_cast<std::int64_t>(n)});
  const TensorRef picked = detail::select(x, static_cast<std::int64_t>(d), flat);
  // data.shape[:axis] + indices.shape + data.shape[axis + 1:]
  I64s dims;
  for (std::size_t i = 0; i < d; ++i) dims.push_back(static_cast<std::int64_t>(shape_of(x)[i]));
  for (auto s : shape_of(idx).dims()) dims.push_back(static_cast<std::int64_t>(s));
  for (std::size_t i = d + 1; i < rank_of(x); ++i) dims.push_back(static_cast<std::int64_t>(shape_of(x)[i]));
  return one(detail::reshape(picked, dims));
}

std::vector<TensorRef> gather_elements(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t d = axis(a, a.attr_int("axis", 0), rank_of(x));
  return one(detail::gather(x, static_cast<std::int64_t>(d), wrap_indices(a.in(1), shape_of(x)[d])));
}

/// A scatter's `reduction` attribute: none (assign) or add.
ir::IndexReduce scatter_reduction(const NodeArgs& a) {
  const std::string reduction = a.attr_string("reduction", "none");
  if (reduction == "add") return ir::IndexReduce::Add;
  if (reduction != "none") a.fail(fmt::format("reduction '{}' is not supported (none and add are)", reduction));
  return ir::IndexReduce::Assign;
}

std::vector<TensorRef> scatter_elements(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t d = axis(a, a.attr_int("axis", 0), rank_of(x));
  const ir::IndexReduce mode = scatter_reduction(a);
  return one(detail::scatter(x, static_cast<std::int64_t>(d), wrap_indices(a.in(1), shape_of(x)[d]), a.in(2), mode));
}

/// ScatterND: data with the slices indices[..., :] name replaced by (or, with
/// reduction add, increased by) updates. The indices are read on the host
/// (checked against data's dims, negatives wrapped) and become one scatter
/// along the flattened leading dims.
std::vector<TensorRef> scatter_nd(const NodeArgs& a) {
  const TensorRef& data = a.in(0);
  const Shape& ds = shape_of(data);
  const Shape& is = shape_of(a.in(1));
  if (is.rank() == 0) a.fail("indices need at least one dim");
  const std::size_t k = is[is.rank() - 1];
  if (k == 0 || k > ds.rank()) a.fail(fmt::format("index tuples of {} entries for a rank-{} input", k, ds.rank()));
  const ir::IndexReduce mode = scatter_reduction(a);
  const I64s tuples = a.ints(1);
  const std::size_t count = tuples.size() / k;
  std::size_t slice = 1;  // elements per indexed slice
  for (std::size_t d = k; d < ds.rank(); ++d) slice *= ds[d];
  std::size_t leading = 1;
  for (std::size_t d = 0; d < k; ++d) leading *= ds[d];
  std::vector<std::int64_t> rows(count);
  for (std::size_t t = 0; t < count; ++t) {
    std::int64_t row = 0;
    for (std::size_t d = 0; d < k; ++d) {
      std::int64_t i = tuples[t * k + d];
      const auto size = static_cast<std::int64_t>(ds[d]);
      if (i < -size || i >= size) a.fail(fmt::format("index {} is out of range for dim {} of size {}", i, d, size));
      if (i < 0) i += size;
      row = row * size + i;
    }
    rows[t] = row;
  }
  // updates: indices.shape[:-1] + data.shape[k:], as [count, slice].
  const TensorRef& updates = a.in(2);
  if (shape_of(updates).num_elements() != count * slice)
    a.fail(fmt::format("updates have shape {}; indices {} and data {} need {} values", shape_of(updates).to_string(),
                       is.to_string(), ds.to_string(), count * slice));
  const auto c = static_cast<std::int64_t>(count), sl = static_cast<std::int64_t>(slice);
  const TensorRef index =
      detail::expand(detail::from_data(TensorData(rows, Shape{count, 1}), TensorCreationOptions(a.device(), DType::I64),
                                       TensorKind::Int),
                     I64s{c, sl});
  const TensorRef flat = detail::reshape(data, I64s{static_cast<std::int64_t>(leading), sl});
  const TensorRef y = detail::scatter(flat, 0, index, detail::reshape(updates, I64s{c, sl}), mode);
  const I64s back(ds.dims().begin(), ds.dims().end());
  return one(detail::reshape(y, back));
}

// ---- creation ---------------------------------------------------------------------------------

/// Tile: each dim repeated whole `repeats[d]` times.
std::vector<TensorRef> tile(const NodeArgs& a) {
  const I64s repeats = a.ints(1);
  if (repeats.size() != rank_of(a.in(0)))
    a.fail(fmt::format("repeats has {} entries for a rank-{} input", repeats.size(), rank_of(a.in(0))));
  std::vector<std::size_t> sizes;
  for (const auto r : repeats) {
    if (r < 0) a.fail("repeats must not be negative");
    sizes.push_back(static_cast<std::size_t>(r));
  }
  return one(detail::repeat(a.in(0), sizes));
}

/// Trilu: the upper (or lower) triangle of the last two dims from diagonal
/// k on, zeros elsewhere.
std::vector<TensorRef> trilu(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  if (r < 2) a.fail("the input needs at least 2 dims");
  const std::int64_t k = a.has(1) ? a.ints(1).at(0) : 0;
  const bool upper = a.attr_int("upper", 1) != 0;
  const std::size_t rows = shape_of(x)[r - 2], cols = shape_of(x)[r - 1];
  std::vector<std::byte> keep(rows * cols);  // bools, one byte each
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const std::int64_t diagonal = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);
      keep[i * cols + j] = std::byte{upper ? diagonal >= k : diagonal <= k};
    }
  const TensorRef mask = detail::from_data(TensorData(std::move(keep), Shape{rows, cols}, DType::Bool),
                                           TensorCreationOptions(a.device(), DType::Bool), TensorKind::Bool);
  const I64s dims(shape_of(x).dims().begin(), shape_of(x).dims().end());
  const TensorRef zeros = detail::full(shape_of(x), scalar_for(dtype_of(x), 0.0),
                                       TensorCreationOptions(a.device(), dtype_of(x)), kind_for(dtype_of(x)));
  return one(detail::mask_where(zeros, detail::expand(with_rank(mask, r), dims), x));
}

std::vector<TensorRef> constant_of_shape(const NodeArgs& a) {
  Shape shape;
  for (auto d : a.ints(0)) {
    if (d < 0) a.fail("the shape must not be negative");
    shape.dims().push_back(static_cast<std::size_t>(d));
  }
  TensorData value = a.attr_tensor("value").value_or(TensorData(std::vector<float>{0.0F}));
  if (value.num_elements() != 1) a.fail("value must hold one element");
  const DType dtype = value.dtype();
  return one(detail::full(shape, scalar_for(dtype, value.value_as_double(0)), TensorCreationOptions(a.device(), dtype),
                          kind_for(dtype)));
}

std::vector<TensorRef> range(const NodeArgs& a) {
  const DType dtype = dtype_of(a.in(0));
  if (!is_float(dtype)) {
    const auto start = static_cast<std::int64_t>(a.scalar(0)), limit = static_cast<std::int64_t>(a.scalar(1)),
               delta = static_cast<std::int64_t>(a.scalar(2));
    if (delta == 0) a.fail("delta is 0");
    return one(detail::arange(start, limit, delta, TensorCreationOptions(a.device(), dtype), TensorKind::Int));
  }
  const double start = a.scalar(0), limit = a.scalar(1), delta = a.scalar(2);
  if (delta == 0.0) a.fail("delta is 0");
  const double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (count > 1e9) a.fail("the range is too long");
  std::vector<double> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = start + static_cast<double>(i) * delta;
  return one(detail::from_data(TensorData(values).convert(dtype), TensorCreationOptions(a.device(), dtype),
                               TensorKind::Float));
}

}  // namespace

void add_shape_ops(ImportTable& table) {
  table.insert({
      {"Reshape", reshape},
      {"Flatten", flatten},
      {"Transpose", transpose},
      {"Expand", expand},
      {"Squeeze", squeeze},
      {"Unsqueeze", unsqueeze},
      {"Concat", concat},
      {"Tile", tile},
      {"Trilu", trilu},
      {"Split", split},
      {"Slice", slice},
      {"Gather", gather},
      {"GatherElements", gather_elements},
      {"ScatterElements", scatter_elements},
      {"ScatterND", scatter_nd},
      {"ConstantOfShape", constant_of_shape},
      {"Range", range},
  });
}

}  // namespace burn::onnx
