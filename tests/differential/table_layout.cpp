// Layout ops on every dtype: reshape, permute, expand, flip, slice (negative
// steps, empty ranges), slice_assign, cat and unfold, each applied to views
// (a view of a view) as well as to contiguous and empty tensors.
#include "harness.hpp"

namespace burn::differential {
namespace {

std::vector<Case> reshape_cases(DType dt, Rng& rng) {
  const std::vector<std::pair<Source, Shape>> cases{
      {{{4, 6}, View::Contiguous}, {2, 12}}, {{{3, 4, 5}, View::Permuted}, {60}},
      {{{3, 4, 6}, View::Strided}, {12, 6}}, {{{4, 5, 6}, View::Expanded}, {20, 6}},
      {{{2, 3, 4}, View::Flipped}, {6, 4}},  {{{0, 3}, View::Contiguous}, {3, 0}},
      {{{6}, View::Contiguous}, {1, 6, 1}},  {{{131, 541}, View::Permuted}, {541, 131}}};
  std::vector<Case> out;
  for (const auto& [src, to] : cases)
    out.push_back({label(src) + " to " + to.to_string(),
                   ir::Reshape{to},
                   {random_input(src.shape, dt, kSourceData, src.view, rng)}});
  return out;
}

std::vector<Case> permute_cases(DType dt, Rng& rng) {
  const std::vector<std::pair<Source, std::vector<std::size_t>>> cases{
      {{{2, 3, 4}, View::Contiguous}, {2, 0, 1}},   {{{3, 4, 5}, View::Strided}, {1, 2, 0}},
      {{{4, 5}, View::Permuted}, {1, 0}},           {{{2, 3, 4, 5}, View::Flipped}, {3, 1, 0, 2}},
      {{{2, 0, 3}, View::Contiguous}, {2, 1, 0}},   {{{4, 5, 6}, View::Expanded}, {2, 1, 0}},
      {{{64, 33, 41}, View::Contiguous}, {2, 0, 1}}};
  std::vector<Case> out;
  for (const auto& [src, axes] : cases)
    out.push_back({label(src), ir::Permute{axes}, {random_input(src.shape, dt, kSourceData, src.view, rng)}});
  return out;
}

std::vector<Case> expand_cases(DType dt, Rng& rng) {
  const std::vector<std::pair<Source, Shape>> cases{
      {{{1, 4}, View::Contiguous}, {3, 4}}, {{{3, 1, 5}, View::Flipped}, {3, 6, 5}},
      {{{1, 0}, View::Contiguous}, {4, 0}}, {{{2, 1}, View::Contiguous}, {2, 0}},
      {{{4, 1}, View::Permuted}, {4, 5}},   {{{1, 5}, View::Strided}, {3, 5}}};
  std::vector<Case> out;
  for (const auto& [src, to] : cases)
    out.push_back({label(src) + " to " + to.to_string(),
                   ir::Expand{to},
                   {random_input(src.shape, dt, kSourceData, src.view, rng)}});
  return out;
}

std::vector<Case> flip_cases(DType dt, Rng& rng) {
  const std::vector<std::pair<Source, std::vector<std::size_t>>> cases{
      {{{4, 5, 6}, View::Contiguous}, {0}}, {{{4, 5, 6}, View::Contiguous}, {1, 2}},
      {{{4, 5, 6}, View::Contiguous}, {}},  {{{6, 7}, View::Permuted}, {0, 1}},
      {{{3, 4, 5}, View::Strided}, {1}},    {{{4, 5, 6}, View::Expanded}, {0, 2}},
      {{{0, 3}, View::Contiguous}, {0, 1}}, {{{131, 541}, View::Contiguous}, {1}}};
  std::vector<Case> out;
  for (const auto& [src, axes] : cases)
    out.push_back({label(src) + " axes " + std::to_string(axes.size()),
                   ir::Flip{axes},
                   {random_input(src.shape, dt, kSourceData, src.view, rng)}});
  return out;
}

using Ranges = std::vector<ir::SliceRange>;

std::vector<Case> slice_cases(DType dt, Rng& rng) {
  const std::vector<std::pair<Source, Ranges>> cases{
      {{{6, 8}, View::Contiguous}, {{1, 3, 1}, {0, 8, 1}}},
      {{{6, 8}, View::Contiguous}, {{5, 3, -2}, {1, 3, 3}}},  // negative step
      {{{4, 5, 6}, View::Permuted}, {{0, 2, 2}, {1, 2, 1}, {5, 3, -1}}},
      {{{5, 7}, View::Strided}, {{4, 0, 1}, {0, 7, 1}}},  // empty range
      {{{4, 5, 6}, View::Expanded}, {{1, 2, 1}, {0, 3, 2}, {0, 6, 1}}},
      {{{5, 6}, View::Flipped}, {{4, 4, -1}, {2, 2, 3}}},
      {{{0, 4}, View::Contiguous}, {{0, 0, 1}, {1, 2, 1}}},
      {{{131, 541}, View::Permuted}, {{130, 60, -2}, {3, 250, 2}}}};
  std::vector<Case> out;
  for (const auto& [src, ranges] : cases)
    out.push_back({label(src), ir::Slice{ranges}, {random_input(src.shape, dt, kSourceData, src.view, rng)}});
  return out;
}

Case slice_assign_case(const Source& tensor, Ranges ranges, const Source& values, DType dt, Rng& rng) {
  return {label(tensor) + " <- " + label(values),
          ir::SliceAssign{std::move(ranges)},
          {random_input(tensor.shape, dt, kSourceData, tensor.view, rng),
           random_input(values.shape, dt, kSourceData, values.view, rng)}};
}

std::vector<Case> slice_assign_cases(DType dt, Rng& rng) {
  std::vector<Case> out;
  out.push_back(
      slice_assign_case({{6, 8}, View::Contiguous}, {{1, 3, 1}, {2, 4, 1}}, {{3, 4}, View::Contiguous}, dt, rng));
  out.push_back(slice_assign_case({{6, 8}, View::Permuted}, {{5, 3, -2}, {0, 3, 3}}, {{3, 3}, View::Flipped}, dt, rng));
  out.push_back(slice_assign_case({{4, 5, 6}, View::Strided}, {{0, 2, 2}, {4, 3, -2}, {1, 2, 1}},
                                  {{2, 3, 2}, View::Permuted}, dt, rng));
  // Assigning into an expanded view must write a copy, never the shared storage.
  out.push_back(slice_assign_case({{4, 5, 6}, View::Expanded}, {{1, 2, 1}, {0, 5, 1}, {3, 1, 1}},
                                  {{2, 5, 1}, View::Contiguous}, dt, rng));
  out.push_back(
      slice_assign_case({{5, 7}, View::Contiguous}, {{0, 0, 1}, {0, 7, 1}}, {{0, 7}, View::Contiguous}, dt, rng));
  out.push_back(
      slice_assign_case({{0, 3}, View::Contiguous}, {{0, 0, 1}, {0, 3, 1}}, {{0, 3}, View::Contiguous}, dt, rng));
  return out;
}

std::vector<Case> cat_cases(DType dt, Rng& rng) {
  const std::vector<std::pair<std::size_t, std::vector<Source>>> cases{
      {0, {{{2, 5}, View::Contiguous}, {{3, 5}, View::Permuted}, {{1, 5}, View::Strided}}},
      {1, {{{4, 2}, View::Flipped}, {{4, 0}, View::Contiguous}, {{4, 3}, View::Expanded}}},
      {2, {{{2, 3, 4}, View::Contiguous}, {{2, 3, 1}, View::Contiguous}}},
      {0, {{{0, 3}, View::Contiguous}, {{0, 3}, View::Contiguous}}},
      {1, {{{3, 4}, View::Permuted}}},
      {0, {{{300, 257}, View::Permuted}, {{100, 257}, View::Contiguous}}}};
  std::vector<Case> out;
  for (const auto& [dim, sources] : cases) {
    Case c{"dim " + std::to_string(dim) + ":", ir::Cat{dim}, {}};
    for (const auto& s : sources) {
      c.label.append(" ").append(label(s));
      c.inputs.push_back(random_input(s.shape, dt, kSourceData, s.view, rng));
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Case> unfold_cases(DType dt, Rng& rng) {
  const std::vector<std::pair<Source, ir::Unfold>> cases{
      {{{10}, View::Contiguous}, {0, 3, 2}},   {{{4, 9}, View::Permuted}, {1, 4, 1}},
      {{{3, 8, 5}, View::Strided}, {1, 3, 3}}, {{{5, 6}, View::Flipped}, {0, 5, 2}},
      {{{4, 7}, View::Expanded}, {1, 2, 2}},   {{{0, 6}, View::Contiguous}, {1, 2, 1}},
      {{{6, 3}, View::Contiguous}, {0, 6, 1}}, {{{70001}, View::Contiguous}, {0, 5, 3}}};
  std::vector<Case> out;
  for (const auto& [src, op] : cases)
    out.push_back({label(src) + " dim " + std::to_string(op.dim) + " size " + std::to_string(op.size) + " step " +
                       std::to_string(op.step),
                   op,
                   {random_input(src.shape, dt, kSourceData, src.view, rng)}});
  return out;
}

}  // namespace

std::vector<Entry> layout_entries() {
  const auto& A = all_dtypes();
  return {
      {"reshape", ir::Reshape{}, A, reshape_cases},
      {"permute", ir::Permute{}, A, permute_cases},
      {"expand", ir::Expand{}, A, expand_cases},
      {"flip", ir::Flip{}, A, flip_cases},
      {"slice", ir::Slice{}, A, slice_cases},
      {"slice_assign", ir::SliceAssign{}, A, slice_assign_cases},
      {"cat", ir::Cat{}, A, cat_cases},
      {"unfold", ir::Unfold{}, A, unfold_cases},
  };
}

}  // namespace burn::differential
