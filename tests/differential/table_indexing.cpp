// Indexing ops: gather, scatter and select_assign (assign and add), select,
// mask_where and mask_fill, with several index dtypes, views on every operand
// and empty index sets. Assignments use distinct indices (a duplicate would
// let either write win); additions use repeated ones.
#include "harness.hpp"

namespace burn::differential {
namespace {

/// Values that are summed stay inside the narrowest int dtype.
const Dist kAdded = Dist::range(-20, 20);

std::vector<Case> gather_cases(DType dt, Rng& rng) {
  struct C {
    Source tensor;
    std::size_t dim;
    Source indices;
    DType index_dtype;
  };
  const std::vector<C> cases{{{{4, 5}, View::Contiguous}, 0, {{6, 5}, View::Contiguous}, DType::I64},
                             {{{4, 5}, View::Permuted}, 1, {{4, 7}, View::Flipped}, DType::I64},
                             {{{3, 4, 5}, View::Strided}, 2, {{2, 3, 4}, View::Contiguous}, DType::I32},
                             {{{3, 4, 5}, View::Expanded}, 0, {{5, 4, 5}, View::Strided}, DType::I64},
                             {{{6}, View::Contiguous}, 0, {{10}, View::Permuted}, DType::U8},
                             {{{4, 5}, View::Contiguous}, 1, {{4, 0}, View::Contiguous}, DType::I64},
                             {{{0, 5}, View::Contiguous}, 0, {{0, 5}, View::Contiguous}, DType::I64},
                             {{{300, 257}, View::Contiguous}, 0, {{400, 257}, View::Contiguous}, DType::I64}};
  std::vector<Case> out;
  for (const auto& c : cases)
    out.push_back({label(c.tensor) + " dim " + std::to_string(c.dim) + " by " + label(c.indices) + " " +
                       std::string(dtype_name(c.index_dtype)),
                   ir::Gather{c.dim},
                   {random_input(c.tensor.shape, dt, kSourceData, c.tensor.view, rng),
                    index_input(c.indices.shape, c.index_dtype, c.tensor.shape[c.dim], c.indices.view, rng)}});
  return out;
}

CaseMaker scatter_cases(ir::IndexReduce reduce) {
  return [reduce](DType dt, Rng& rng) {
    const bool add = reduce == ir::IndexReduce::Add;
    struct C {
      Source tensor;
      std::size_t dim;
      Source indices;  // the values have the same shape
      View values_view;
      DType index_dtype;
    };
    // Assignments: at most dim-size indices per line, distinct; additions: more, repeated.
    std::vector<C> cases{
        {{{4, 5}, View::Contiguous}, 0, {{add ? 7u : 3u, 5}, View::Contiguous}, View::Contiguous, DType::I64},
        {{{4, 5}, View::Permuted}, 1, {{4, add ? 9u : 3u}, View::Flipped}, View::Strided, DType::I64},
        {{{3, 4, 5}, View::Strided}, 2, {{2, 3, 4}, View::Contiguous}, View::Permuted, DType::I32},
        // Scattering into an expanded view must write a copy, never the shared storage.
        {{{3, 4, 5}, View::Expanded}, 1, {{3, 4, 5}, View::Contiguous}, View::Flipped, DType::I64},
        {{{6}, View::Contiguous}, 0, {{add ? 10u : 4u}, View::Contiguous}, View::Contiguous, DType::U8},
        {{{4, 5}, View::Contiguous}, 0, {{0, 5}, View::Contiguous}, View::Contiguous, DType::I64},
        {{{300, 257}, View::Contiguous}, 0, {{add ? 500u : 300u, 257}, View::Contiguous}, View::Permuted, DType::I64}};
    const Dist d = add ? kAdded : kSourceData;
    std::vector<Case> out;
    for (const auto& c : cases) {
      const std::size_t bound = c.tensor.shape[c.dim];
      Input idx = add ? index_input(c.indices.shape, c.index_dtype, bound, c.indices.view, rng)
                      : unique_index_input(c.indices.shape, c.dim, c.index_dtype, bound, c.indices.view, rng);
      out.push_back({label(c.tensor) + " dim " + std::to_string(c.dim) + " at " + label(c.indices),
                     ir::Scatter{c.dim, reduce},
                     {random_input(c.tensor.shape, dt, d, c.tensor.view, rng), std::move(idx),
                      random_input(c.indices.shape, dt, d, c.values_view, rng)}});
    }
    return out;
  };
}

std::vector<Case> select_cases(DType dt, Rng& rng) {
  struct C {
    Source tensor;
    std::size_t dim;
    std::size_t count;
    View index_view;
    DType index_dtype;
  };
  const std::vector<C> cases{{{{5, 6}, View::Contiguous}, 0, 8, View::Contiguous, DType::I64},
                             {{{5, 6}, View::Permuted}, 1, 3, View::Strided, DType::I64},
                             {{{3, 4, 5}, View::Strided}, 2, 7, View::Flipped, DType::I32},
                             {{{3, 4, 5}, View::Expanded}, 0, 4, View::Contiguous, DType::U8},
                             {{{4, 5}, View::Contiguous}, 1, 0, View::Contiguous, DType::I64},
                             {{{0, 5}, View::Contiguous}, 1, 3, View::Contiguous, DType::I64},
                             {{{300, 257}, View::Permuted}, 0, 500, View::Contiguous, DType::I64}};
  std::vector<Case> out;
  for (const auto& c : cases)
    out.push_back({label(c.tensor) + " dim " + std::to_string(c.dim) + ", " + std::to_string(c.count) + " indices",
                   ir::Select{c.dim},
                   {random_input(c.tensor.shape, dt, kSourceData, c.tensor.view, rng),
                    index_input({c.count}, c.index_dtype, c.tensor.shape[c.dim], c.index_view, rng)}});
  return out;
}

CaseMaker select_assign_cases(ir::IndexReduce reduce) {
  return [reduce](DType dt, Rng& rng) {
    const bool add = reduce == ir::IndexReduce::Add;
    struct C {
      Source tensor;
      std::size_t dim;
      std::size_t count;
      View index_view;
      View values_view;
      DType index_dtype;
    };
    const std::vector<C> cases{
        {{{5, 6}, View::Contiguous}, 0, add ? 8u : 3u, View::Contiguous, View::Contiguous, DType::I64},
        {{{5, 6}, View::Permuted}, 1, 4, View::Flipped, View::Strided, DType::I64},
        {{{3, 4, 5}, View::Strided}, 2, 5, View::Contiguous, View::Permuted, DType::I32},
        {{{3, 4, 5}, View::Expanded}, 0, 2, View::Contiguous, View::Flipped, DType::U8},
        {{{4, 5}, View::Contiguous}, 1, 0, View::Contiguous, View::Contiguous, DType::I64}};
    const Dist d = add ? kAdded : kSourceData;
    std::vector<Case> out;
    for (const auto& c : cases) {
      const std::size_t bound = c.tensor.shape[c.dim];
      Input idx = add ? index_input({c.count}, c.index_dtype, bound, c.index_view, rng)
                      : unique_index_input({c.count}, 0, c.index_dtype, bound, c.index_view, rng);
      Shape values = c.tensor.shape;
      values[c.dim] = c.count;
      out.push_back({label(c.tensor) + " dim " + std::to_string(c.dim) + ", " + std::to_string(c.count) + " indices",
                     ir::SelectAssign{c.dim, reduce},
                     {random_input(c.tensor.shape, dt, d, c.tensor.view, rng), std::move(idx),
                      random_input(values, dt, d, c.values_view, rng)}});
    }
    return out;
  };
}

struct Masked {
  Source tensor, mask, source;
};

// Tensor, mask and source broadcast together.
const std::vector<Masked>& masked_layouts() {
  static const std::vector<Masked> l{
      {{{4, 5}, View::Contiguous}, {{4, 5}, View::Contiguous}, {{4, 5}, View::Contiguous}},
      {{{4, 5}, View::Permuted}, {{1, 5}, View::Contiguous}, {{4, 1}, View::Flipped}},
      {{{3, 4, 5}, View::Strided}, {{3, 4, 5}, View::Flipped}, {{3, 4, 5}, View::Expanded}},
      {{{4, 1}, View::Contiguous}, {{4, 6}, View::Permuted}, {{1, 6}, View::Strided}},
      {{{0, 3}, View::Contiguous}, {{1, 3}, View::Contiguous}, {{0, 3}, View::Contiguous}},
      {{{300, 257}, View::Contiguous}, {{300, 257}, View::Permuted}, {{1, 257}, View::Contiguous}}};
  return l;
}

std::vector<Case> mask_where_cases(DType dt, Rng& rng) {
  std::vector<Case> out;
  for (const auto& m : masked_layouts())
    out.push_back({label(m.tensor) + " mask " + label(m.mask) + " source " + label(m.source),
                   ir::MaskWhere{},
                   {random_input(m.tensor.shape, dt, kSourceData, m.tensor.view, rng),
                    random_input(m.mask.shape, DType::Bool, Dist{}, m.mask.view, rng),
                    random_input(m.source.shape, dt, kSourceData, m.source.view, rng)}});
  return out;
}

std::vector<Case> mask_fill_cases(DType dt, Rng& rng) {
  const Scalar value = scalar_for(dt, -7.5, 9, true);
  std::vector<Case> out;
  for (const auto& m : masked_layouts())
    out.push_back({label(m.tensor) + " mask " + label(m.mask),
                   ir::MaskFill{value},
                   {random_input(m.tensor.shape, dt, kSourceData, m.tensor.view, rng),
                    random_input(m.mask.shape, DType::Bool, Dist{}, m.mask.view, rng)}});
  return out;
}

}  // namespace

std::vector<Entry> indexing_entries() {
  const auto& A = all_dtypes();
  const auto& N = numeric_dtypes();
  using ir::IndexReduce;
  return {
      {"gather", ir::Gather{}, A, gather_cases},
      {"scatter", ir::Scatter{0, IndexReduce::Assign}, A, scatter_cases(IndexReduce::Assign)},
      {"scatter_add", ir::Scatter{0, IndexReduce::Add}, N, scatter_cases(IndexReduce::Add)},
      {"select", ir::Select{}, A, select_cases},
      {"select_assign", ir::SelectAssign{0, IndexReduce::Assign}, A, select_assign_cases(IndexReduce::Assign)},
      {"select_add", ir::SelectAssign{0, IndexReduce::Add}, N, select_assign_cases(IndexReduce::Add)},
      {"mask_where", ir::MaskWhere{}, A, mask_where_cases},
      {"mask_fill", ir::MaskFill{}, A, mask_fill_cases},
  };
}

}  // namespace burn::differential
