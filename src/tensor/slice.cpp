// Slicing: Range -> ir::SliceRange normalisation, slice/slice_assign/slice_fill,
// narrow, and the splitting ops built on narrow.
#include <algorithm>

#include <burn/detail/ops.hpp>

#include "tensor/normalize.hpp"

namespace burn::detail {
namespace {

/// Burn's Range semantics with PyTorch's clamping: negative bounds count from
/// the end, both bounds are clamped to [0, size], start >= end is empty, and a
/// negative step walks [start, end) backwards from end - 1.
ir::SliceRange to_slice_range(std::string_view op, const Range& r, std::size_t size, std::size_t dim) {
  if (r.step == 0) throw Error(op, fmt::format("the range for dim {} has step 0; use a non-zero step", dim));
  const auto n = static_cast<std::int64_t>(size);
  auto resolve = [n](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + n : v, 0, n); };
  const std::int64_t start = resolve(r.start);
  const std::int64_t end = r.end ? resolve(*r.end) : n;
  if (start >= end) return {0, 0, r.step};
  // Unsigned: a step near the int64 limits (or its negation, for INT64_MIN)
  // does not fit the signed formula's intermediate sums.
  const std::uint64_t stride =
      r.step > 0 ? static_cast<std::uint64_t>(r.step) : std::uint64_t{0} - static_cast<std::uint64_t>(r.step);
  const std::uint64_t len = (static_cast<std::uint64_t>(end - start) - 1) / stride + 1;
  const std::int64_t first = r.step > 0 ? start : end - 1;
  return {static_cast<std::size_t>(first), len, r.step};
}

std::vector<ir::SliceRange> to_slice_ranges(std::string_view op, const Shape& shape, std::span<const Range> ranges) {
  if (ranges.size() > shape.rank())
    throw Error(op, fmt::format("got {} ranges for shape {} of rank {}; pass at most one range per dim", ranges.size(),
                                shape.to_string(), shape.rank()));
  std::vector<ir::SliceRange> out(shape.rank());
  for (std::size_t i = 0; i < shape.rank(); ++i)
    out[i] = i < ranges.size() ? to_slice_range(op, ranges[i], shape[i], i) : ir::SliceRange{0, shape[i], 1};
  return out;
}

bool is_whole(const Shape& shape, const std::vector<ir::SliceRange>& ranges) {
  for (std::size_t i = 0; i < ranges.size(); ++i)
    if (ranges[i].len != shape[i] || (shape[i] > 1 && (ranges[i].start != 0 || ranges[i].step != 1))) return false;
  return true;
}

Shape slice_shape(const std::vector<ir::SliceRange>& ranges) {
  std::vector<std::size_t> dims;
  dims.reserve(ranges.size());
  for (const auto& r : ranges) dims.push_back(r.len);
  return Shape(dims);
}

TensorRef slice_normalized(const TensorRef& t, std::vector<ir::SliceRange> ranges) {
  if (is_whole(shape_of(t), ranges)) return t;
  return execute1(ir::Slice{std::move(ranges)}, {t});
}

}  // namespace

TensorRef slice(const TensorRef& t, std::span<const Range> ranges) {
  return slice_normalized(t, to_slice_ranges("slice", shape_of(t), ranges));
}

TensorRef slice_assign(const TensorRef& t, std::span<const Range> ranges, const TensorRef& values) {
  return execute1(ir::SliceAssign{to_slice_ranges("slice_assign", shape_of(t), ranges)}, {t, values});
}

TensorRef slice_fill(const TensorRef& t, std::span<const Range> ranges, Scalar value) {
  auto norm = to_slice_ranges("slice_fill", shape_of(t), ranges);
  auto values = full_on(t, slice_shape(norm), value);
  return execute1(ir::SliceAssign{std::move(norm)}, {t, values});
}

TensorRef narrow(const TensorRef& t, std::int64_t dim, std::int64_t start, std::size_t length) {
  const std::size_t d = normalize_dim("narrow", dim, rank_of(t));
  const std::size_t size = shape_of(t)[d];
  const auto n = static_cast<std::int64_t>(size);
  if (start < -n || start > n)
    throw Error("narrow", fmt::format("start {} is out of range for dim {} of size {}", start, dim, size));
  const auto first = static_cast<std::size_t>(start < 0 ? start + n : start);
  if (length > size - first)
    throw Error("narrow", fmt::format("start {} + length {} exceeds dim {} of size {} (shape {})", first, length, dim,
                                      size, shape_of(t).to_string()));
  std::vector<ir::SliceRange> ranges;
  for (std::size_t i = 0; i < rank_of(t); ++i) ranges.push_back({0, shape_of(t)[i], 1});
  ranges[d] = {length == 0 ? 0 : first, length, 1};
  return slice_normalized(t, std::move(ranges));
}

std::vector<TensorRef> split_with_sizes(const TensorRef& t, std::span<const std::size_t> sizes, std::int64_t dim) {
  const std::size_t d = normalize_dim("split_with_sizes", dim, rank_of(t));
  std::size_t total = 0;
  for (auto s : sizes) total += s;
  if (total != shape_of(t)[d])
    throw Error("split_with_sizes", fmt::format("sizes sum to {} but dim {} of shape {} has size {}", total, dim,
                                                shape_of(t).to_string(), shape_of(t)[d]));
  std::vector<TensorRef> out;
  out.reserve(sizes.size());
  std::size_t start = 0;
  for (auto s : sizes) {
    out.push_back(narrow(t, static_cast<std::int64_t>(d), static_cast<std::int64_t>(start), s));
    start += s;
  }
  return out;
}

std::vector<TensorRef> split(const TensorRef& t, std::size_t split_size, std::int64_t dim) {
  const std::size_t d = normalize_dim("split", dim, rank_of(t));
  const std::size_t n = shape_of(t)[d];
  // torch.split: an empty dim gives one empty piece; size 0 only splits an empty dim.
  if (split_size == 0 && n != 0)
    throw Error("split", fmt::format("split_size 0 cannot split dim {} of size {}; use a size of at least 1", dim, n));
  if (n == 0) return {t};
  std::vector<std::size_t> sizes;
  for (std::size_t start = 0; start < n; start += split_size) sizes.push_back(std::min(split_size, n - start));
  return split_with_sizes(t, sizes, static_cast<std::int64_t>(d));
}

std::vector<TensorRef> chunk(const TensorRef& t, std::size_t chunks, std::int64_t dim) {
  if (chunks == 0) throw Error("chunk", "the number of chunks must be at least 1");
  const std::size_t d = normalize_dim("chunk", dim, rank_of(t));
  const std::size_t n = shape_of(t)[d];
  // torch.chunk: an empty dim gives `chunks` empty pieces; otherwise pieces of
  // ceil(n / chunks), which may give fewer than `chunks`.
  if (n == 0) return std::vector<TensorRef>(chunks, t);
  return split(t, (n + chunks - 1) / chunks, static_cast<std::int64_t>(d));
}

}  // namespace burn::detail
