// Family "layout": ops that move elements without computing on them
// (reshape, permute, expand, flip, slice, slice_assign, cat, unfold).
#include <vector>

#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

std::string_view name(const Reshape&) { return "reshape"; }
std::string_view name(const Permute&) { return "permute"; }
std::string_view name(const Expand&) { return "expand"; }
std::string_view name(const Flip&) { return "flip"; }
std::string_view name(const Slice&) { return "slice"; }
std::string_view name(const SliceAssign&) { return "slice_assign"; }
std::string_view name(const Cat&) { return "cat"; }
std::string_view name(const Unfold&) { return "unfold"; }

bool memory_bound(const Reshape&) { return true; }
bool memory_bound(const Permute&) { return true; }
bool memory_bound(const Expand&) { return true; }
bool memory_bound(const Flip&) { return true; }
bool memory_bound(const Slice&) { return true; }
bool memory_bound(const SliceAssign&) { return false; }
bool memory_bound(const Cat&) { return false; }
bool memory_bound(const Unfold&) { return false; }

namespace {

/// The shape `ranges` select from `shape`; each range must lie inside its dim.
Shape sliced_shape(std::string_view op, std::span<const SliceRange> ranges, const Shape& shape) {
  if (ranges.size() != shape.rank()) fail(op, "needs one range per dim ({}), got {}", shape.rank(), ranges.size());
  Shape::Dims out(shape.rank());
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    const auto& r = ranges[i];
    if (r.len > 0) {
      // How far the last element lies from the first, in unsigned arithmetic
      // with overflow checked: a large step or length (a hand-made op, one
      // arriving at burn-server) must not wrap around into bounds.
      const std::uint64_t stride =
          r.step >= 0 ? static_cast<std::uint64_t>(r.step) : std::uint64_t{0} - static_cast<std::uint64_t>(r.step);
      std::uint64_t distance = 0;
      const bool wraps = __builtin_mul_overflow(static_cast<std::uint64_t>(r.len - 1), stride, &distance);
      const bool inside =
          r.start < shape[i] && !wraps && (r.step >= 0 ? distance <= shape[i] - 1 - r.start : distance <= r.start);
      if (!inside)
        fail(op, "range starting at {} with {} elements and step {} is out of bounds for dim {} of size {}", r.start,
             r.len, r.step, i, shape[i]);
    }
    out[i] = r.len;
  }
  return Shape(std::move(out));
}

}  // namespace

SpecList infer(const Reshape& r, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  // Checked first: a wrapped-around count could equal the input's.
  if (r.shape.checked_num_elements(op) != in[0].shape.num_elements())
    fail(op, "cannot reshape {} ({} elements) into {} ({} elements)", in[0].shape.to_string(),
         in[0].shape.num_elements(), r.shape.to_string(), r.shape.num_elements());
  return {{r.shape, in[0].dtype}};
}

SpecList infer(const Permute& p, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  const std::size_t rank = in[0].shape.rank();
  if (p.axes.size() != rank) fail(op, "needs {} axes for a tensor of rank {}, got {}", rank, rank, p.axes.size());
  std::vector<bool> seen(rank, false);
  Shape::Dims out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    expect_dim(op, p.axes[i], rank);
    if (seen[p.axes[i]]) fail(op, "axis {} appears twice", p.axes[i]);
    seen[p.axes[i]] = true;
    out[i] = in[0].shape[p.axes[i]];
  }
  return {{Shape(std::move(out)), in[0].dtype}};
}

SpecList infer(const Expand& e, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  if (e.shape.rank() != in[0].shape.rank())
    fail(op, "cannot expand {} to {}: ranks differ", in[0].shape.to_string(), e.shape.to_string());
  for (std::size_t i = 0; i < e.shape.rank(); ++i)
    if (in[0].shape[i] != e.shape[i] && in[0].shape[i] != 1)
      fail(op, "cannot expand {} to {}: dim {} has size {}, which is not 1", in[0].shape.to_string(),
           e.shape.to_string(), i, in[0].shape[i]);
  return {{e.shape, in[0].dtype}};
}

SpecList infer(const Flip& f, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  std::vector<bool> seen(in[0].shape.rank(), false);
  for (auto a : f.axes) {
    expect_dim(op, a, in[0].shape.rank());
    if (seen[a]) fail(op, "axis {} appears twice", a);
    seen[a] = true;
  }
  return {in[0]};
}

SpecList infer(const Slice& s, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  return {{sliced_shape(op, s.ranges, in[0].shape), in[0].dtype}};
}

SpecList infer(const SliceAssign& s, std::string_view op, Inputs in) {
  expect_inputs(op, in, 2);
  expect_same_dtype(op, in[0], in[1]);
  // The ranges are checked as slice's, with its name in the errors.
  const Shape sliced = sliced_shape(name(Slice{}), s.ranges, in[0].shape);
  if (sliced != in[1].shape)
    fail(op, "values of shape {} do not fit the slice of shape {}", in[1].shape.to_string(), sliced.to_string());
  return {in[0]};
}

SpecList infer(const Cat& c, std::string_view op, Inputs in) {
  if (in.empty()) fail(op, "needs at least one tensor");
  expect_dim(op, c.dim, in[0].shape.rank());
  Shape out = in[0].shape;
  out[c.dim] = 0;
  for (const auto& t : in) {
    expect_same_dtype(op, in[0], t);
    expect_same_rank(op, in[0], t);
    for (std::size_t i = 0; i < out.rank(); ++i)
      if (i != c.dim && t.shape[i] != in[0].shape[i])
        fail(op, "shapes {} and {} differ outside the cat dim {}", in[0].shape.to_string(), t.shape.to_string(), c.dim);
    out[c.dim] += t.shape[c.dim];
  }
  return {{std::move(out), in[0].dtype}};
}

SpecList infer(const Unfold& u, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  expect_dim(op, u.dim, in[0].shape.rank());
  if (u.step == 0) fail(op, "step must be at least 1");
  if (u.size > in[0].shape[u.dim])
    fail(op, "window size {} is larger than dim {} of size {}", u.size, u.dim, in[0].shape[u.dim]);
  Shape::Dims out = in[0].shape.dims();
  out[u.dim] = (in[0].shape[u.dim] - u.size) / u.step + 1;
  out.push_back(u.size);
  return {{Shape(std::move(out)), in[0].dtype}};
}

}  // namespace burn::ir
