// Indexing: gather/scatter, select/select_assign, masks, argwhere/nonzero.
#include <array>

#include <burn/detail/ops.hpp>

#include "tensor/normalize.hpp"

namespace burn::detail {
namespace {

/// Row-major multi-indices of the non-zero (true; NaN counts) elements, one
/// vector per dim. Computed on the host: the output's size depends on the data.
std::vector<std::vector<std::int64_t>> nonzero_coords(const TensorRef& t) {
  const TensorData data = to_data(t);
  const Shape& shape = data.shape();
  const std::size_t rank = shape.rank();
  std::vector<std::vector<std::int64_t>> coords(rank);
  std::vector<std::int64_t> index(rank, 0);
  for (std::size_t i = 0; i < data.num_elements(); ++i) {
    if (data.value_as_double(i) != 0.0)
      for (std::size_t k = 0; k < rank; ++k) coords[k].push_back(index[k]);
    // Advance the row-major multi-index.
    for (std::size_t k = rank; k-- > 0;) {
      if (++index[k] < static_cast<std::int64_t>(shape[k])) break;
      index[k] = 0;
    }
  }
  return coords;
}

TensorRef int_tensor_on(const TensorRef& like, const std::vector<std::int64_t>& values, Shape shape) {
  // No explicit dtype: from_data converts to the device's default int dtype.
  return from_data(TensorData(values, std::move(shape)), TensorCreationOptions(like->device), TensorKind::Int);
}

}  // namespace

TensorRef gather(const TensorRef& t, std::int64_t dim, const TensorRef& indices) {
  return execute1(ir::Gather{normalize_dim("gather", dim, rank_of(t))}, {t, indices});
}

TensorRef scatter(const TensorRef& t, std::int64_t dim, const TensorRef& indices, const TensorRef& values,
                  ir::IndexReduce reduce) {
  return execute1(ir::Scatter{normalize_dim("scatter", dim, rank_of(t)), reduce}, {t, indices, values});
}

TensorRef select(const TensorRef& t, std::int64_t dim, const TensorRef& indices) {
  return execute1(ir::Select{normalize_dim("select", dim, rank_of(t))}, {t, indices});
}

TensorRef select_assign(const TensorRef& t, std::int64_t dim, const TensorRef& indices, const TensorRef& values,
                        ir::IndexReduce reduce) {
  return execute1(ir::SelectAssign{normalize_dim("select_assign", dim, rank_of(t)), reduce}, {t, indices, values});
}

TensorRef mask_where(const TensorRef& t, const TensorRef& mask, const TensorRef& source) {
  return execute1(ir::MaskWhere{}, {t, mask, source});
}

TensorRef mask_fill(const TensorRef& t, const TensorRef& mask, Scalar value) {
  return execute1(ir::MaskFill{value}, {t, mask});
}

TensorRef mask_fill(TensorRef&& t, const TensorRef& mask, Scalar value) {
  // As binary()'s consuming forms: locals own the operands, the borrowed one
  // copied first, so a moved-in handle is the only one left.
  TensorRef m = mask;
  const std::array<TensorRef, 2> owned{std::move(t), std::move(m)};
  return execute1(ir::MaskFill{value}, owned);
}

TensorRef argwhere(const TensorRef& t) {
  const auto coords = nonzero_coords(t);
  const std::size_t rank = coords.size();
  const std::size_t n = rank == 0 ? 0 : coords[0].size();
  std::vector<std::int64_t> flat(n * rank);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < rank; ++k) flat[i * rank + k] = coords[k][i];
  return int_tensor_on(t, flat, Shape{n, rank});
}

std::vector<TensorRef> nonzero(const TensorRef& t) {
  auto coords = nonzero_coords(t);
  std::vector<TensorRef> out;
  out.reserve(coords.size());
  for (auto& c : coords) {
    const std::size_t n = c.size();
    out.push_back(int_tensor_on(t, c, Shape{n}));
  }
  return out;
}

}  // namespace burn::detail
