// Shape and dtype rules of every IR operation, with the validation that makes
// backend kernels free to assume well-formed inputs.
#include <burn/error.hpp>
#include <burn/ir/op.hpp>

#include "ir/spec_list.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace burn::ir {
namespace {

template <class... F> struct overloaded : F... { using F::operator()...; };
template <class... F> overloaded(F...) -> overloaded<F...>;

using Specs = SpecList;

template <class... Args>
[[noreturn]] void fail(std::string_view op, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(op, fmt::format(f, std::forward<Args>(args)...));
}

void expect_inputs(std::string_view op, std::span<const TensorSpec> in, std::size_t n) {
  if (in.size() != n) fail(op, "expects {} input tensor(s), got {}", n, in.size());
}

void expect_same_dtype(std::string_view op, const TensorSpec& a, const TensorSpec& b) {
  if (a.dtype != b.dtype)
    fail(op, "dtypes {} and {} differ; cast one of the tensors first", dtype_name(a.dtype), dtype_name(b.dtype));
}

void expect_same_rank(std::string_view op, const TensorSpec& a, const TensorSpec& b) {
  if (a.shape.rank() != b.shape.rank())
    fail(op, "ranks {} and {} differ (shapes {} and {})", a.shape.rank(), b.shape.rank(), a.shape.to_string(),
         b.shape.to_string());
}

void expect_dim(std::string_view op, std::size_t dim, std::size_t rank) {
  if (dim >= rank) fail(op, "dim {} is out of range for a tensor of rank {}", dim, rank);
}

void expect_float(std::string_view op, DType d) {
  if (!is_float(d)) fail(op, "needs a float tensor, got {}; convert with to_float() or cast()", dtype_name(d));
}
void expect_int(std::string_view op, DType d) {
  if (!is_int(d)) fail(op, "needs an int tensor, got {}", dtype_name(d));
}
void expect_numeric(std::string_view op, DType d) {
  if (is_bool(d)) fail(op, "is not defined for bool tensors; convert with to_int() or to_float()");
}
void expect_index(std::string_view op, const TensorSpec& s) {
  if (!is_int(s.dtype)) fail(op, "indices must be an int tensor, got {}", dtype_name(s.dtype));
}

// Every output: its element count and byte size must fit in a signed 64-bit
// size, or every later size computation would wrap around. Output dims come
// from callers (reshape, full, random, expand, interpolate) or grow from
// valid inputs (broadcast, matmul, cat, unfold), so no op is exempt. This
// runs on every op: the common case is one multiply per dim; Shape's exact
// check (zero dims, the dtype's size, the message) only runs past 2^60.
void expect_addressable(std::string_view op, const TensorSpec& s) {
  constexpr std::size_t kAlwaysFits = std::size_t{1} << 60;  // 2^60 elements of at most 8 bytes
  std::size_t n = 1;
  bool overflow = false;
  for (auto d : s.shape.dims()) overflow |= __builtin_mul_overflow(n, d, &n);
  if (overflow || n > kAlwaysFits) [[unlikely]]
    s.shape.checked_num_elements(op, dtype_size(s.dtype));
}

}  // namespace

Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b) {
  if (a.rank() != b.rank())
    fail(op, "cannot broadcast shapes {} and {}: ranks differ", a.to_string(), b.to_string());
  if (a == b) return a;
  Shape::Dims out(a.rank());
  for (std::size_t i = 0; i < a.rank(); ++i) {
    const std::size_t x = a.dims()[i], y = b.dims()[i];
    if (x == y || y == 1) out[i] = x;
    else if (x == 1) out[i] = y;
    else fail(op, "shapes {} and {} cannot be broadcast together (dim {}: {} vs {})", a.to_string(), b.to_string(), i, x, y);
  }
  return Shape(std::move(out));
}

namespace {

void check_unary_dtype(std::string_view op, UnaryOp u, DType d) {
  switch (u) {
    case UnaryOp::Neg:
    case UnaryOp::Abs:
    case UnaryOp::Sign: return expect_numeric(op, d);
    case UnaryOp::LogicalNot:
      if (!is_bool(d)) fail(op, "needs a bool tensor, got {}", dtype_name(d));
      return;
    case UnaryOp::BitNot: return expect_int(op, d);
    default: return expect_float(op, d);
  }
}

bool is_comparison(BinaryOp b) { return b >= BinaryOp::Equal; }

void check_binary_dtype(std::string_view op, BinaryOp b, DType d) {
  if (b <= BinaryOp::Min) return expect_numeric(op, d);
  if (b == BinaryOp::Atan2) return expect_float(op, d);
  if (b <= BinaryOp::Shr) return expect_int(op, d);
  if (b <= BinaryOp::LogicalXor) {
    if (!is_bool(d)) fail(op, "needs bool tensors, got {}", dtype_name(d));
    return;
  }
  if (b == BinaryOp::Equal || b == BinaryOp::NotEqual) return;
  expect_numeric(op, d);
}

std::size_t conv_out(std::string_view op, std::size_t in, std::size_t k, std::size_t s, std::size_t p, std::size_t d,
                     std::size_t axis) {
  if (s == 0) fail(op, "stride must be at least 1 (axis {})", axis);
  if (d == 0) fail(op, "dilation must be at least 1 (axis {})", axis);
  const std::size_t span = d * (k - 1) + 1;
  if (k == 0 || in + 2 * p < span)
    fail(op, "kernel of size {} (dilation {}) does not fit the input of size {} with padding {} (axis {})", k, d, in, p,
         axis);
  return (in + 2 * p - span) / s + 1;
}

std::size_t pool_out(std::string_view op, std::size_t in, std::size_t k, std::size_t s, std::size_t p, std::size_t d,
                     bool ceil_mode, std::size_t axis) {
  if (p * 2 > k) fail(op, "padding {} must be at most half the kernel size {} (axis {})", p, k, axis);
  if (s == 0) fail(op, "stride must be at least 1 (axis {})", axis);
  const std::size_t span = d * (k - 1) + 1;
  if (k == 0 || in + 2 * p < span)
    fail(op, "kernel of size {} does not fit the input of size {} with padding {} (axis {})", k, in, p, axis);
  std::size_t out = (in + 2 * p - span + (ceil_mode ? s - 1 : 0)) / s + 1;
  // As in PyTorch: the last window must start inside the input or left padding.
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

void expect_spatial(std::string_view op, const TensorSpec& x, std::size_t n) {
  if (x.shape.rank() != n + 2)
    fail(op, "expects an input of rank {} ([batch, channels, {} spatial dims]), got shape {}", n + 2, n,
         x.shape.to_string());
}

template <class V>
void expect_len(std::string_view op, const V& v, std::size_t n, std::string_view what) {
  if (v.size() != n) fail(op, "{} has {} values for {} spatial dims", what, v.size(), n);
}

}  // namespace

SpecList infer_output_list(const Op& op_value, std::span<const TensorSpec> in) {
  const std::string_view op = op_name(op_value);
  SpecList outputs = std::visit(
      overloaded{
          [&](const Full& f) -> Specs {
            expect_inputs(op, in, 0);
            return {{f.shape, f.dtype}};
          },
          [&](const Arange& a) -> Specs {
            expect_inputs(op, in, 0);
            expect_numeric(op, a.dtype);
            if (a.step == 0) fail(op, "step must not be zero");
            // In unsigned 64 bits: end - start overflows int64 for far-apart bounds.
            std::size_t n = 0;
            const auto gap = [](std::int64_t lo, std::int64_t hi) {
              return static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
            };
            const auto count = [](std::uint64_t distance, std::uint64_t step) {
              return distance / step + (distance % step != 0 ? 1 : 0);
            };
            if (a.step > 0 && a.end > a.start) n = count(gap(a.start, a.end), static_cast<std::uint64_t>(a.step));
            if (a.step < 0 && a.end < a.start)
              n = count(gap(a.end, a.start), 0 - static_cast<std::uint64_t>(a.step));
            return {{Shape{n}, a.dtype}};
          },
          [&](const Random& r) -> Specs {
            expect_inputs(op, in, 0);
            if (r.dist == DistributionKind::Uniform && !(r.a <= r.b))
              fail(op, "uniform bounds [{}, {}) are reversed", r.a, r.b);
            if (r.dist == DistributionKind::Normal && !(r.b >= 0)) fail(op, "normal std {} is negative", r.b);
            if (r.dist == DistributionKind::Bernoulli && !(r.a >= 0 && r.a <= 1))
              fail(op, "bernoulli probability {} is outside [0, 1]", r.a);
            return {{r.shape, r.dtype}};
          },
          [&](const Unary& u) -> Specs {
            expect_inputs(op, in, 1);
            check_unary_dtype(op, u.op, in[0].dtype);
            const bool to_bool = u.op == UnaryOp::IsNan || u.op == UnaryOp::IsInf;
            Specs out;  // built in place: one copy of the shape (tiny-op latency)
            out.emplace_back(in[0].shape, to_bool ? DType::Bool : in[0].dtype);
            return out;
          },
          [&](const Binary& b) -> Specs {
            expect_inputs(op, in, b.scalar ? 1 : 2);
            check_binary_dtype(op, b.op, in[0].dtype);
            const DType dtype = is_comparison(b.op) ? DType::Bool : in[0].dtype;
            Specs out;  // built in place: one copy of the shape at most (tiny-op latency)
            if (!b.scalar) expect_same_dtype(op, in[0], in[1]);
            if (b.scalar || in[0].shape == in[1].shape) out.emplace_back(in[0].shape, dtype);
            else out.emplace_back(broadcast_shapes(op, in[0].shape, in[1].shape), dtype);
            return out;
          },
          [&](const Clamp& c) -> Specs {
            expect_inputs(op, in, 1);
            expect_numeric(op, in[0].dtype);
            if (c.min && c.max && c.min->as_double() > c.max->as_double())
              fail(op, "min {} is greater than max {}", c.min->to_string(), c.max->to_string());
            return {in[0]};
          },
          [&](const Cast& c) -> Specs {
            expect_inputs(op, in, 1);
            return {{in[0].shape, c.dtype}};
          },
          [&](const Matmul&) -> Specs {
            expect_inputs(op, in, 2);
            expect_numeric(op, in[0].dtype);
            expect_same_dtype(op, in[0], in[1]);
            expect_same_rank(op, in[0], in[1]);
            const auto& a = in[0].shape;
            const auto& b = in[1].shape;
            const std::size_t r = a.rank();
            if (r < 2) fail(op, "needs tensors of rank 2 or more, got shapes {} and {}", a.to_string(), b.to_string());
            if (a[r - 1] != b[r - 2])
              fail(op, "shapes {} and {} do not match: inner dims {} and {} differ", a.to_string(), b.to_string(),
                   a[r - 1], b[r - 2]);
            std::vector<std::size_t> out(r);
            for (std::size_t i = 0; i + 2 < r; ++i) {
              if (a[i] == b[i] || b[i] == 1) out[i] = a[i];
              else if (a[i] == 1) out[i] = b[i];
              else fail(op, "batch dims of shapes {} and {} cannot be broadcast (dim {})", a.to_string(), b.to_string(), i);
            }
            out[r - 2] = a[r - 2];
            out[r - 1] = b[r - 1];
            return {{Shape(std::move(out)), in[0].dtype}};
          },
          [&](const Reduce& r) -> Specs {
            expect_inputs(op, in, 1);
            expect_dim(op, r.dim, in[0].shape.rank());
            const bool logical = r.op == ReduceOp::Any || r.op == ReduceOp::All;
            if (!logical) expect_numeric(op, in[0].dtype);
            const bool needs_element = r.op == ReduceOp::Max || r.op == ReduceOp::Min || r.op == ReduceOp::ArgMax ||
                                       r.op == ReduceOp::ArgMin || (r.op == ReduceOp::Mean && is_int(in[0].dtype));
            // An empty reduced dim has no identity for these ops; when another
            // dim is empty too, the result has no elements and nothing is reduced.
            Shape reduced = in[0].shape;
            reduced[r.dim] = 1;
            if (needs_element && in[0].shape[r.dim] == 0 && reduced.num_elements() != 0)
              fail(op, "cannot reduce an empty dim {} of shape {}: there is no identity", r.dim,
                   in[0].shape.to_string());
            DType dt = in[0].dtype;
            if (r.op == ReduceOp::ArgMax || r.op == ReduceOp::ArgMin) {
              expect_int(op, r.index_dtype);
              dt = r.index_dtype;
            }
            if (logical) dt = DType::Bool;
            return {{reduced, dt}};
          },
          [&](const Cumulative& c) -> Specs {
            expect_inputs(op, in, 1);
            expect_numeric(op, in[0].dtype);
            expect_dim(op, c.dim, in[0].shape.rank());
            return {in[0]};
          },
          [&](const Sort& s) -> Specs {
            expect_inputs(op, in, 1);
            expect_numeric(op, in[0].dtype);
            expect_dim(op, s.dim, in[0].shape.rank());
            expect_int(op, s.index_dtype);
            return {in[0], {in[0].shape, s.index_dtype}};
          },
          [&](const Reshape& r) -> Specs {
            expect_inputs(op, in, 1);
            // Checked first: a wrapped-around count could equal the input's.
            if (r.shape.checked_num_elements(op) != in[0].shape.num_elements())
              fail(op, "cannot reshape {} ({} elements) into {} ({} elements)", in[0].shape.to_string(),
                   in[0].shape.num_elements(), r.shape.to_string(), r.shape.num_elements());
            return {{r.shape, in[0].dtype}};
          },
          [&](const Permute& p) -> Specs {
            expect_inputs(op, in, 1);
            const std::size_t rank = in[0].shape.rank();
            if (p.axes.size() != rank) fail(op, "needs {} axes for a tensor of rank {}, got {}", rank, rank, p.axes.size());
            std::vector<bool> seen(rank, false);
            std::vector<std::size_t> out(rank);
            for (std::size_t i = 0; i < rank; ++i) {
              expect_dim(op, p.axes[i], rank);
              if (seen[p.axes[i]]) fail(op, "axis {} appears twice", p.axes[i]);
              seen[p.axes[i]] = true;
              out[i] = in[0].shape[p.axes[i]];
            }
            return {{Shape(std::move(out)), in[0].dtype}};
          },
          [&](const Expand& e) -> Specs {
            expect_inputs(op, in, 1);
            if (e.shape.rank() != in[0].shape.rank())
              fail(op, "cannot expand {} to {}: ranks differ", in[0].shape.to_string(), e.shape.to_string());
            for (std::size_t i = 0; i < e.shape.rank(); ++i)
              if (in[0].shape[i] != e.shape[i] && in[0].shape[i] != 1)
                fail(op, "cannot expand {} to {}: dim {} has size {}, which is not 1", in[0].shape.to_string(),
                     e.shape.to_string(), i, in[0].shape[i]);
            return {{e.shape, in[0].dtype}};
          },
          [&](const Flip& f) -> Specs {
            expect_inputs(op, in, 1);
            std::vector<bool> seen(in[0].shape.rank(), false);
            for (auto a : f.axes) {
              expect_dim(op, a, in[0].shape.rank());
              if (seen[a]) fail(op, "axis {} appears twice", a);
              seen[a] = true;
            }
            return {in[0]};
          },
          [&](const Slice& s) -> Specs {
            expect_inputs(op, in, 1);
            const auto& shape = in[0].shape;
            if (s.ranges.size() != shape.rank()) fail(op, "needs one range per dim ({}), got {}", shape.rank(), s.ranges.size());
            std::vector<std::size_t> out(shape.rank());
            for (std::size_t i = 0; i < shape.rank(); ++i) {
              const auto& r = s.ranges[i];
              if (r.len > 0) {
                const auto last = static_cast<std::int64_t>(r.start) + static_cast<std::int64_t>(r.len - 1) * r.step;
                if (r.start >= shape[i] || last < 0 || last >= static_cast<std::int64_t>(shape[i]))
                  fail(op, "range starting at {} with {} elements and step {} is out of bounds for dim {} of size {}",
                       r.start, r.len, r.step, i, shape[i]);
              }
              out[i] = r.len;
            }
            return {{Shape(std::move(out)), in[0].dtype}};
          },
          [&](const SliceAssign& s) -> Specs {
            expect_inputs(op, in, 2);
            expect_same_dtype(op, in[0], in[1]);
            const auto sliced = infer_output_list(Slice{s.ranges}, in.first(1));
            if (sliced[0].shape != in[1].shape)
              fail(op, "values of shape {} do not fit the slice of shape {}", in[1].shape.to_string(),
                   sliced[0].shape.to_string());
            return {in[0]};
          },
          [&](const Cat& c) -> Specs {
            if (in.empty()) fail(op, "needs at least one tensor");
            expect_dim(op, c.dim, in[0].shape.rank());
            Shape out = in[0].shape;
            out[c.dim] = 0;
            for (const auto& t : in) {
              expect_same_dtype(op, in[0], t);
              expect_same_rank(op, in[0], t);
              for (std::size_t i = 0; i < out.rank(); ++i)
                if (i != c.dim && t.shape[i] != in[0].shape[i])
                  fail(op, "shapes {} and {} differ outside the cat dim {}", in[0].shape.to_string(),
                       t.shape.to_string(), c.dim);
              out[c.dim] += t.shape[c.dim];
            }
            return {{out, in[0].dtype}};
          },
          [&](const Unfold& u) -> Specs {
            expect_inputs(op, in, 1);
            expect_dim(op, u.dim, in[0].shape.rank());
            if (u.step == 0) fail(op, "step must be at least 1");
            if (u.size > in[0].shape[u.dim])
              fail(op, "window size {} is larger than dim {} of size {}", u.size, u.dim, in[0].shape[u.dim]);
            std::vector<std::size_t> out = in[0].shape.dims();
            out[u.dim] = (in[0].shape[u.dim] - u.size) / u.step + 1;
            out.push_back(u.size);
            return {{Shape(std::move(out)), in[0].dtype}};
          },
          [&](const Gather& g) -> Specs {
            expect_inputs(op, in, 2);
            expect_index(op, in[1]);
            expect_same_rank(op, in[0], in[1]);
            expect_dim(op, g.dim, in[0].shape.rank());
            for (std::size_t i = 0; i < in[0].shape.rank(); ++i)
              if (i != g.dim && in[1].shape[i] > in[0].shape[i])
                fail(op, "indices of shape {} exceed the tensor's shape {} at dim {}", in[1].shape.to_string(),
                     in[0].shape.to_string(), i);
            return {{in[1].shape, in[0].dtype}};
          },
          [&](const Scatter& s) -> Specs {
            expect_inputs(op, in, 3);
            expect_index(op, in[1]);
            expect_same_dtype(op, in[0], in[2]);
            expect_same_rank(op, in[0], in[1]);
            expect_dim(op, s.dim, in[0].shape.rank());
            if (in[1].shape != in[2].shape)
              fail(op, "indices {} and values {} must have the same shape", in[1].shape.to_string(),
                   in[2].shape.to_string());
            for (std::size_t i = 0; i < in[0].shape.rank(); ++i)
              if (i != s.dim && in[1].shape[i] > in[0].shape[i])
                fail(op, "indices of shape {} exceed the tensor's shape {} at dim {}", in[1].shape.to_string(),
                     in[0].shape.to_string(), i);
            return {in[0]};
          },
          [&](const Select& s) -> Specs {
            expect_inputs(op, in, 2);
            expect_index(op, in[1]);
            expect_dim(op, s.dim, in[0].shape.rank());
            if (in[1].shape.rank() != 1) fail(op, "indices must be 1-D, got shape {}", in[1].shape.to_string());
            Shape out = in[0].shape;
            out[s.dim] = in[1].shape[0];
            return {{out, in[0].dtype}};
          },
          [&](const SelectAssign& s) -> Specs {
            expect_inputs(op, in, 3);
            expect_index(op, in[1]);
            expect_same_dtype(op, in[0], in[2]);
            expect_dim(op, s.dim, in[0].shape.rank());
            if (in[1].shape.rank() != 1) fail(op, "indices must be 1-D, got shape {}", in[1].shape.to_string());
            Shape expected = in[0].shape;
            expected[s.dim] = in[1].shape[0];
            if (in[2].shape != expected)
              fail(op, "values of shape {} do not match the selection's shape {}", in[2].shape.to_string(),
                   expected.to_string());
            return {in[0]};
          },
          [&](const MaskWhere&) -> Specs {
            expect_inputs(op, in, 3);
            if (!is_bool(in[1].dtype)) fail(op, "the mask must be a bool tensor, got {}", dtype_name(in[1].dtype));
            expect_same_dtype(op, in[0], in[2]);
            Shape s = broadcast_shapes(op, in[0].shape, in[1].shape);
            s = broadcast_shapes(op, s, in[2].shape);
            return {{s, in[0].dtype}};
          },
          [&](const MaskFill&) -> Specs {
            expect_inputs(op, in, 2);
            if (!is_bool(in[1].dtype)) fail(op, "the mask must be a bool tensor, got {}", dtype_name(in[1].dtype));
            return {{broadcast_shapes(op, in[0].shape, in[1].shape), in[0].dtype}};
          },
          [&](const Conv& c) -> Specs {
            const std::size_t n = c.stride.size();
            expect_inputs(op, in, c.has_bias ? 3 : 2);
            expect_spatial(op, in[0], n);
            expect_float(op, in[0].dtype);
            expect_same_dtype(op, in[0], in[1]);
            expect_len(op, c.padding, n, "padding");
            expect_len(op, c.dilation, n, "dilation");
            const auto& x = in[0].shape;
            const auto& w = in[1].shape;
            if (w.rank() != n + 2)
              fail(op, "weight must have rank {} ([out_channels, in_channels/groups, kernel...]), got {}", n + 2,
                   w.to_string());
            if (c.groups == 0) fail(op, "groups must be at least 1");
            if (x[1] != w[1] * c.groups)
              fail(op, "input has {} channels but the weight {} with {} group(s) expects {}", x[1], w.to_string(),
                   c.groups, w[1] * c.groups);
            if (w[0] % c.groups) fail(op, "out channels {} are not divisible by groups {}", w[0], c.groups);
            if (c.has_bias) {
              expect_same_dtype(op, in[0], in[2]);
              if (in[2].shape != Shape{w[0]})
                fail(op, "bias must have shape [{}], got {}", w[0], in[2].shape.to_string());
            }
            std::vector<std::size_t> out{x[0], w[0]};
            for (std::size_t i = 0; i < n; ++i)
              out.push_back(conv_out(op, x[i + 2], w[i + 2], c.stride[i], c.padding[i], c.dilation[i], i));
            return {{Shape(std::move(out)), in[0].dtype}};
          },
          [&](const ConvWeightGrad& c) -> Specs {
            const std::size_t n = c.stride.size();
            expect_inputs(op, in, 2);
            expect_spatial(op, in[0], n);
            expect_spatial(op, in[1], n);
            expect_float(op, in[0].dtype);
            expect_same_dtype(op, in[0], in[1]);
            expect_len(op, c.kernel, n, "kernel");
            expect_len(op, c.padding, n, "padding");
            expect_len(op, c.dilation, n, "dilation");
            const auto& x = in[0].shape;
            const auto& g = in[1].shape;
            if (c.groups == 0) fail(op, "groups must be at least 1");
            if (x[0] != g[0]) fail(op, "input batch {} and gradient batch {} differ", x[0], g[0]);
            if (x[1] % c.groups || g[1] % c.groups)
              fail(op, "channels {} (input) and {} (gradient) are not divisible by groups {}", x[1], g[1], c.groups);
            for (std::size_t i = 0; i < n; ++i) {
              const std::size_t o = conv_out(op, x[i + 2], c.kernel[i], c.stride[i], c.padding[i], c.dilation[i], i);
              if (g[i + 2] != o)
                fail(op, "gradient size {} along axis {} does not match the convolution's output size {}", g[i + 2], i,
                     o);
            }
            std::vector<std::size_t> out{g[1], x[1] / c.groups};
            out.insert(out.end(), c.kernel.begin(), c.kernel.end());
            return {{Shape(std::move(out)), in[0].dtype}};
          },
          [&](const ConvTranspose& c) -> Specs {
            const std::size_t n = c.stride.size();
            expect_inputs(op, in, c.has_bias ? 3 : 2);
            expect_spatial(op, in[0], n);
            expect_float(op, in[0].dtype);
            expect_same_dtype(op, in[0], in[1]);
            expect_len(op, c.padding, n, "padding");
            expect_len(op, c.padding_out, n, "padding_out");
            expect_len(op, c.dilation, n, "dilation");
            const auto& x = in[0].shape;
            const auto& w = in[1].shape;
            if (w.rank() != n + 2)
              fail(op, "weight must have rank {} ([in_channels, out_channels/groups, kernel...]), got {}", n + 2,
                   w.to_string());
            if (c.groups == 0) fail(op, "groups must be at least 1");
            if (x[1] != w[0])
              fail(op, "input has {} channels but the weight {} expects {}", x[1], w.to_string(), w[0]);
            if (w[0] % c.groups) fail(op, "in channels {} are not divisible by groups {}", w[0], c.groups);
            const std::size_t c_out = w[1] * c.groups;
            if (c.has_bias) {
              expect_same_dtype(op, in[0], in[2]);
              if (in[2].shape != Shape{c_out}) fail(op, "bias must have shape [{}], got {}", c_out, in[2].shape.to_string());
            }
            std::vector<std::size_t> out{x[0], c_out};
            for (std::size_t i = 0; i < n; ++i) {
              if (c.stride[i] == 0 || c.dilation[i] == 0) fail(op, "stride and dilation must be at least 1");
              if (c.padding_out[i] >= std::max(c.stride[i], c.dilation[i]))
                fail(op, "padding_out {} must be smaller than stride {} or dilation {}", c.padding_out[i], c.stride[i],
                     c.dilation[i]);
              const auto full = static_cast<std::int64_t>((x[i + 2] - 1) * c.stride[i] + c.dilation[i] * (w[i + 2] - 1) +
                                                          c.padding_out[i] + 1);
              const auto size = full - 2 * static_cast<std::int64_t>(c.padding[i]);
              if (x[i + 2] == 0 || size <= 0) fail(op, "padding {} leaves no output along axis {}", c.padding[i], i);
              out.push_back(static_cast<std::size_t>(size));
            }
            return {{Shape(std::move(out)), in[0].dtype}};
          },
          [&](const MaxPool& p) -> Specs {
            const std::size_t n = p.kernel.size();
            expect_inputs(op, in, 1);
            expect_spatial(op, in[0], n);
            expect_numeric(op, in[0].dtype);
            expect_len(op, p.stride, n, "stride");
            expect_len(op, p.padding, n, "padding");
            expect_len(op, p.dilation, n, "dilation");
            std::vector<std::size_t> out{in[0].shape[0], in[0].shape[1]};
            for (std::size_t i = 0; i < n; ++i) {
              if (p.dilation[i] == 0) fail(op, "dilation must be at least 1");
              out.push_back(pool_out(op, in[0].shape[i + 2], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i],
                                     p.ceil_mode, i));
            }
            Specs specs{{Shape(out), in[0].dtype}};
            if (p.with_indices) {
              expect_int(op, p.index_dtype);
              std::size_t volume = 1;
              for (std::size_t i = 0; i < n; ++i) volume *= in[0].shape[i + 2];
              // Flat indices run up to volume - 1; a narrower dtype would wrap.
              const std::size_t bits = dtype_size(p.index_dtype) * 8 - (is_signed_int(p.index_dtype) ? 1 : 0);
              if (volume > 1 && bits < 64 && (volume - 1) >> bits)
                fail(op, "index dtype {} cannot hold flat indices up to {}; use i64 or i32", dtype_name(p.index_dtype),
                     volume - 1);
              specs.push_back({Shape(out), p.index_dtype});
            }
            return specs;
          },
          [&](const AvgPool& p) -> Specs {
            const std::size_t n = p.kernel.size();
            expect_inputs(op, in, 1);
            expect_spatial(op, in[0], n);
            expect_float(op, in[0].dtype);
            expect_len(op, p.stride, n, "stride");
            expect_len(op, p.padding, n, "padding");
            std::vector<std::size_t> out{in[0].shape[0], in[0].shape[1]};
            for (std::size_t i = 0; i < n; ++i)
              out.push_back(pool_out(op, in[0].shape[i + 2], p.kernel[i], p.stride[i], p.padding[i], 1, p.ceil_mode, i));
            return {{Shape(std::move(out)), in[0].dtype}};
          },
          [&](const AdaptiveAvgPool& p) -> Specs {
            const std::size_t n = p.output_size.size();
            expect_inputs(op, in, 1);
            expect_spatial(op, in[0], n);
            expect_float(op, in[0].dtype);
            std::vector<std::size_t> out{in[0].shape[0], in[0].shape[1]};
            for (std::size_t i = 0; i < n; ++i) {
              if (p.output_size[i] == 0) fail(op, "output size must be at least 1");
              if (in[0].shape[i + 2] == 0) fail(op, "input spatial dim {} is empty", i);
              out.push_back(p.output_size[i]);
            }
            return {{Shape(std::move(out)), in[0].dtype}};
          },
          [&](const Interpolate& p) -> Specs {
            expect_inputs(op, in, 1);
            expect_spatial(op, in[0], 2);
            expect_float(op, in[0].dtype);
            expect_len(op, p.output_size, 2, "output_size");
            for (std::size_t i = 0; i < 2; ++i) {
              if (p.output_size[i] == 0) fail(op, "output size must be at least 1");
              if (in[0].shape[i + 2] == 0) fail(op, "input spatial dim {} is empty", i);
            }
            return {{Shape{in[0].shape[0], in[0].shape[1], p.output_size[0], p.output_size[1]}, in[0].dtype}};
          },
      },
      op_value);
  for (const auto& s : outputs) expect_addressable(op, s);
  return outputs;
}

std::vector<TensorSpec> infer_outputs(const Op& op, std::span<const TensorSpec> inputs) {
  SpecList specs = infer_output_list(op, inputs);
  return {std::make_move_iterator(specs.begin()), std::make_move_iterator(specs.end())};
}

}  // namespace burn::ir
