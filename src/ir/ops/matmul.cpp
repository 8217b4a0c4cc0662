// Family "matmul": batched matrix products.
#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

std::string_view name(const Matmul&) { return "matmul"; }

bool memory_bound(const Matmul&) { return false; }

SpecList infer(const Matmul&, std::string_view op, Inputs in) {
  expect_inputs(op, in, 2);
  expect_numeric(op, in[0].dtype);
  expect_same_dtype(op, in[0], in[1]);
  expect_same_rank(op, in[0], in[1]);
  const auto& a = in[0].shape;
  const auto& b = in[1].shape;
  const std::size_t r = a.rank();
  if (r < 2) fail(op, "needs tensors of rank 2 or more, got shapes {} and {}", a.to_string(), b.to_string());
  if (a[r - 1] != b[r - 2])
    fail(op, "shapes {} and {} do not match: inner dims {} and {} differ", a.to_string(), b.to_string(), a[r - 1],
         b[r - 2]);
  Shape::Dims out(r);
  for (std::size_t i = 0; i + 2 < r; ++i) {
    if (a[i] == b[i] || b[i] == 1) out[i] = a[i];
    else if (a[i] == 1) out[i] = b[i];
    else fail(op, "batch dims of shapes {} and {} cannot be broadcast (dim {})", a.to_string(), b.to_string(), i);
  }
  out[r - 2] = a[r - 2];
  out[r - 1] = b[r - 1];
  return {{Shape(std::move(out)), in[0].dtype}};
}

}  // namespace burn::ir
