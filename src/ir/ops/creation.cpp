// Family "creation": ops without inputs (full, arange, random).
#include <cstdint>

#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

std::string_view name(const Full&) { return "full"; }
std::string_view name(const Arange&) { return "arange"; }
std::string_view name(const Random&) { return "random"; }

// Random is never recomputed: it would draw new values.
bool memory_bound(const Full&) { return true; }
bool memory_bound(const Arange&) { return false; }
bool memory_bound(const Random&) { return false; }

SpecList infer(const Full& f, std::string_view op, Inputs in) {
  expect_inputs(op, in, 0);
  return {{f.shape, f.dtype}};
}

SpecList infer(const Arange& a, std::string_view op, Inputs in) {
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
  if (a.step < 0 && a.end < a.start) n = count(gap(a.end, a.start), 0 - static_cast<std::uint64_t>(a.step));
  return {{Shape{n}, a.dtype}};
}

SpecList infer(const Random& r, std::string_view op, Inputs in) {
  expect_inputs(op, in, 0);
  if (r.dist == DistributionKind::Uniform && !(r.a <= r.b)) fail(op, "uniform bounds [{}, {}) are reversed", r.a, r.b);
  if (r.dist == DistributionKind::Normal && !(r.b >= 0)) fail(op, "normal std {} is negative", r.b);
  if (r.dist == DistributionKind::Bernoulli && !(r.a >= 0 && r.a <= 1))
    fail(op, "bernoulli probability {} is outside [0, 1]", r.a);
  return {{r.shape, r.dtype}};
}

}  // namespace burn::ir
