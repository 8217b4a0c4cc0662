// Shape-changing ops: reshape, permute, flip, expand, (un)squeeze, cat, stack,
// repeat, unfold. Slicing and splitting live in slice.cpp.
#include <cstdint>
#include <limits>
#include <string>
#include <variant>

#include <fmt/ranges.h>

#include <burn/detail/ops.hpp>

#include "tensor/normalize.hpp"

namespace burn::detail {

TensorRef reshape_exact(const TensorRef& t, Shape shape) {
  if (shape == t->spec.shape) return t;
  return execute1(ir::Reshape{std::move(shape)}, {t});
}

namespace {

/// Resolves reshape dims to a shape, or returns why it cannot. `keep_zero`:
/// Burn's rule that 0 keeps the input's size at that position.
std::variant<Shape, std::string> resolve_reshape(const Shape& in, std::span<const std::int64_t> dims, bool keep_zero) {
  std::vector<std::size_t> out(dims.size());
  std::optional<std::size_t> inferred;
  std::size_t known = 1;
  bool overflow = false;
  bool empty = false;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = dims[i];
    if (d == -1) {
      if (inferred) return std::string("only one dim can be -1");
      inferred = i;
      continue;
    }
    if (d < -1) return fmt::format("dim {} is negative (only -1, meaning inferred, is allowed)", i);
    // Past the input's rank there is nothing to keep: 0 is a literal empty dim.
    out[i] = keep_zero && d == 0 && i < in.rank() ? in[i] : static_cast<std::size_t>(d);
    overflow |= __builtin_mul_overflow(known, out[i], &known);
    empty = empty || out[i] == 0;
  }
  // A wrapped-around product could match the input's count and let a shape
  // through whose size no later computation can hold.
  if (empty) known = 0;
  else if (overflow || known > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))
    return std::string("the dims' element count overflows 64 bits");
  if (inferred) {
    if (known == 0) return std::string("the -1 dim cannot be inferred when the other dims hold no elements");
    if (in.num_elements() % known != 0) return std::string("the element count is not divisible by the other dims");
    out[*inferred] = in.num_elements() / known;
  } else if (known != in.num_elements()) {
    return std::string("the element counts differ");
  }
  return Shape(out);
}

}  // namespace

TensorRef reshape(const TensorRef& t, std::span<const std::int64_t> dims) {
  const Shape& in = shape_of(t);
  auto resolved = resolve_reshape(in, dims, true);
  // An empty input may also mean 0 literally (flatten of [3, 0] passes [0]);
  // that reading is only tried where Burn's "keep" reading fails.
  if (std::holds_alternative<std::string>(resolved) && in.num_elements() == 0) {
    auto literal = resolve_reshape(in, dims, false);
    if (std::holds_alternative<Shape>(literal)) resolved = std::move(literal);
  }
  if (auto* why = std::get_if<std::string>(&resolved))
    throw Error("reshape", fmt::format("cannot reshape {} ({} elements) into [{}]: {}", in.to_string(),
                                       in.num_elements(), fmt::join(dims, ", "), *why));
  return reshape_exact(t, std::get<Shape>(std::move(resolved)));
}

TensorRef permute(const TensorRef& t, std::span<const std::int64_t> axes) {
  const std::size_t rank = rank_of(t);
  if (axes.size() != rank)
    throw Error("permute", fmt::format("needs {} axes for shape {}, got [{}]", rank, shape_of(t).to_string(),
                                       fmt::join(axes, ", ")));
  std::vector<std::size_t> norm(rank);
  std::vector<bool> seen(rank, false);
  bool identity = true;
  for (std::size_t i = 0; i < rank; ++i) {
    norm[i] = normalize_dim("permute", axes[i], rank);
    if (seen[norm[i]])
      throw Error("permute",
                  fmt::format("axes [{}] are not a permutation: dim {} appears twice", fmt::join(axes, ", "), norm[i]));
    seen[norm[i]] = true;
    identity = identity && norm[i] == i;
  }
  if (identity) return t;
  return execute1(ir::Permute{std::move(norm)}, {t});
}

TensorRef swap_dims(const TensorRef& t, std::int64_t a, std::int64_t b) {
  const std::size_t rank = rank_of(t);
  const std::size_t x = normalize_dim("swap_dims", a, rank);
  const std::size_t y = normalize_dim("swap_dims", b, rank);
  std::vector<std::int64_t> axes(rank);
  for (std::size_t i = 0; i < rank; ++i) axes[i] = static_cast<std::int64_t>(i);
  std::swap(axes[x], axes[y]);
  return permute(t, axes);
}

TensorRef flip(const TensorRef& t, std::span<const std::int64_t> axes) {
  if (axes.empty()) return t;
  std::vector<std::size_t> norm;
  norm.reserve(axes.size());
  for (auto a : axes) norm.push_back(normalize_dim("flip", a, rank_of(t)));
  return execute1(ir::Flip{std::move(norm)}, {t});
}

TensorRef expand(const TensorRef& t, std::span<const std::int64_t> shape) {
  const Shape& in = shape_of(t);
  const std::size_t rank = shape.size();
  auto fail = [&](std::string_view why) {
    throw Error("expand", fmt::format("cannot expand {} to [{}]: {}", in.to_string(), fmt::join(shape, ", "), why));
  };
  if (rank < in.rank()) fail("the target has fewer dims than the tensor");
  const std::size_t lead = rank - in.rank();
  std::vector<std::size_t> padded(lead, 1), target(rank);
  padded.insert(padded.end(), in.begin(), in.end());
  for (std::size_t i = 0; i < rank; ++i) {
    if (shape[i] == -1) {
      if (i < lead) fail(fmt::format("-1 (keep) is not allowed for the new leading dim {}", i));
      target[i] = padded[i];
    } else if (shape[i] < 0) {
      fail(fmt::format("dim {} is negative", i));
    } else {
      target[i] = static_cast<std::size_t>(shape[i]);
    }
  }
  TensorRef r = reshape_exact(t, Shape(padded));
  if (Shape(target) == shape_of(r)) return r;
  return execute1(ir::Expand{Shape(target)}, {r});
}

TensorRef unsqueeze_dim(const TensorRef& t, std::int64_t dim) {
  const std::size_t d = normalize_insert_dim("unsqueeze_dim", dim, rank_of(t));
  std::vector<std::size_t> out = shape_of(t).dims();
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(d), 1);
  return reshape_exact(t, Shape(out));
}

TensorRef squeeze_dim(const TensorRef& t, std::int64_t dim) {
  const std::size_t d = normalize_dim("squeeze", dim, rank_of(t));
  if (shape_of(t)[d] != 1)
    throw Error("squeeze", fmt::format("dim {} of shape {} has size {}; only a size-1 dim can be squeezed", dim,
                                       shape_of(t).to_string(), shape_of(t)[d]));
  std::vector<std::size_t> out = shape_of(t).dims();
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(d));
  return reshape_exact(t, Shape(out));
}

TensorRef cat(std::span<const TensorRef> tensors, std::int64_t dim) {
  if (tensors.empty()) throw Error("cat", "needs at least one tensor");
  const std::size_t d = normalize_dim("cat", dim, rank_of(tensors[0]));
  if (tensors.size() == 1) return tensors[0];
  return execute1(ir::Cat{d}, tensors);
}

TensorRef stack(std::span<const TensorRef> tensors, std::int64_t dim) {
  if (tensors.empty()) throw Error("stack", "needs at least one tensor");
  const std::size_t rank = rank_of(tensors[0]);
  const auto d = static_cast<std::int64_t>(normalize_insert_dim("stack", dim, rank));
  std::vector<TensorRef> parts;
  parts.reserve(tensors.size());
  for (const auto& t : tensors) {
    // cat would also catch this, but only after the unsqueeze changed the shapes it reports.
    if (shape_of(t) != shape_of(tensors[0]))
      throw Error("stack", fmt::format("all tensors must have the same shape, got {} and {}",
                                       shape_of(tensors[0]).to_string(), shape_of(t).to_string()));
    parts.push_back(unsqueeze_dim(t, d));
  }
  return execute1(ir::Cat{static_cast<std::size_t>(d)}, parts);
}

TensorRef repeat_dim(const TensorRef& t, std::int64_t dim, std::size_t times) {
  const std::size_t d = normalize_dim("repeat_dim", dim, rank_of(t));
  std::vector<std::size_t> sizes(rank_of(t), 1);
  sizes[d] = times;
  return repeat(t, sizes);
}

TensorRef repeat(const TensorRef& t, std::span<const std::size_t> sizes) {
  const Shape& in = shape_of(t);
  if (sizes.size() != in.rank())
    throw Error("repeat", fmt::format("needs one repeat count per dim ({}) of shape {}, got [{}]", in.rank(),
                                      in.to_string(), fmt::join(sizes, ", ")));
  bool trivial = true;
  for (auto s : sizes) trivial = trivial && s == 1;
  if (trivial) return t;
  // Tile whole dims: [a, b] -> [1, a, 1, b] -> expand to [ra, a, rb, b] -> [ra*a, rb*b].
  std::vector<std::size_t> split_shape, tiled_shape, out_shape;
  for (std::size_t i = 0; i < in.rank(); ++i) {
    split_shape.insert(split_shape.end(), {1, in[i]});
    tiled_shape.insert(tiled_shape.end(), {sizes[i], in[i]});
    out_shape.push_back(sizes[i] * in[i]);
  }
  // Checked here so the error names repeat; the count bounds every product above.
  Shape(tiled_shape).checked_num_elements("repeat", dtype_size(t->spec.dtype));
  TensorRef r = reshape_exact(t, Shape(split_shape));
  r = execute1(ir::Expand{Shape(tiled_shape)}, {r});
  return reshape_exact(r, Shape(out_shape));
}

TensorRef unfold(const TensorRef& t, std::int64_t dim, std::size_t size, std::size_t step) {
  return execute1(ir::Unfold{normalize_dim("unfold", dim, rank_of(t)), size, step}, {t});
}

}  // namespace burn::detail
