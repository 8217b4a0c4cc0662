// Differential testing: every IR op runs on a device under test and on an
// oracle device with the same random inputs, and the results are compared.
//
// The op table is data: one Entry per IR alternative and enumerator (more
// where an op has distinct shapes of use, e.g. conv1d/2d/3d). An entry makes
// cases for a dtype; a case is an ir::Op value with host inputs, each seen
// through a layout (contiguous or a non-contiguous view made on the device).
// Ops run through burn::detail::execute, the dispatch entry point every public
// operation reaches, so module ops and backward kernels (ConvWeightGrad) are
// covered as well as the tensor API's.
#pragma once

#include <burn/burn.hpp>
#include <burn/detail/ops.hpp>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace burn::differential {

using Rng = std::mt19937_64;

/// How random values are drawn. Int dtypes take the integers in [lo, hi] that
/// the dtype can hold; Bool takes true with probability p_true.
struct Dist {
  double lo = -2.0;
  double hi = 2.0;
  double grid = 0.0;        // > 0: floats are multiples of grid (ties, exact halves, zeros)
  bool nonzero = false;     // no zeros (floats: |x| >= 0.1), for divisors
  bool non_finite = false;  // about one float in six is NaN, +inf or -inf
  double p_true = 0.5;

  static Dist range(double lo, double hi) { return Dist{lo, hi}; }
  Dist on_grid(double g) const {
    Dist d = *this;
    d.grid = g;
    return d;
  }
  Dist without_zero() const {
    Dist d = *this;
    d.nonzero = true;
    return d;
  }
  Dist with_non_finite() const {
    Dist d = *this;
    d.non_finite = true;
    return d;
  }
  Dist with_p_true(double p) const {
    Dist d = *this;
    d.p_true = p;
    return d;
  }
};

/// How an input reaches the op: as uploaded, or as a non-contiguous view the
/// device makes from a differently shaped upload.
enum class View : std::uint8_t { Contiguous, Permuted, Strided, Expanded, Flipped };
std::string_view view_name(View v);

/// The upload shape and the layout ops that present `logical` through `view`.
/// Permuted needs rank >= 2 (rank 1 falls back to Strided); Expanded needs a
/// dim of size != 1 (else it is Contiguous).
struct ViewPlan {
  Shape base;
  std::vector<ir::Op> ops;
};
ViewPlan plan_view(const Shape& logical, View view);

/// One input: host data uploaded to each device, then run through `view`.
struct Input {
  TensorData base;
  std::vector<ir::Op> view;
};

/// Random values of `dtype` for a shape.
TensorData random_data(const Shape& shape, DType dtype, const Dist& dist, Rng& rng);
/// An input of logical shape `shape`, random values, seen through `view`.
Input random_input(const Shape& shape, DType dtype, const Dist& dist, View view, Rng& rng);
/// Int indices in [0, bound), any layout.
Input index_input(const Shape& shape, DType dtype, std::size_t bound, View view, Rng& rng);
/// Int indices in [0, bound) with distinct values along `dim` (shape[dim] <=
/// bound), so assignments never race; Contiguous or Flipped only (other views
/// would repeat or reorder values across lines).
Input unique_index_input(const Shape& shape, std::size_t dim, DType dtype, std::size_t bound, View view, Rng& rng);

/// One comparison: an op and its inputs (none for creation ops).
struct Case {
  std::string label;
  ir::Op op;
  std::vector<Input> inputs;
};

/// What the op sees (each input after its view) and what it returns, by the
/// IR's shape and dtype rules; throws the IR's error for an invalid case.
struct CaseSpecs {
  std::vector<ir::TensorSpec> inputs;
  std::vector<ir::TensorSpec> outputs;
};
CaseSpecs case_specs(const Case& c);

/// Values: element by element (exact for int and bool). Statistics: random
/// ops, whose samples cannot agree bit for bit across backends.
enum class Check : std::uint8_t { Values, Statistics };

using CaseMaker = std::function<std::vector<Case>(DType, Rng&)>;

struct Entry {
  std::string name;  // the table row's op name (unique)
  ir::Op prototype;  // the IR alternative and enumerator it covers
  std::vector<DType> dtypes;
  CaseMaker cases;
  Check check = Check::Values;
};

/// The table, by family (one file each).
std::vector<Entry> creation_entries();
std::vector<Entry> elementwise_entries();
std::vector<Entry> reduce_entries();
std::vector<Entry> layout_entries();
std::vector<Entry> indexing_entries();
std::vector<Entry> module_entries();

struct Family {
  std::string name;  // "elementwise"
  std::vector<Entry> entries;
};
/// Every family, in table order; all_entries() is their concatenation.
const std::vector<Family>& all_families();
const std::vector<Entry>& all_entries();

/// What completeness is checked on: the index of the ir::Op alternative and
/// the enumerator it carries (-1 for alternatives without one).
struct CoverageKey {
  std::size_t alternative;
  int enumerator;
  friend bool operator==(const CoverageKey&, const CoverageKey&) = default;
  friend auto operator<=>(const CoverageKey&, const CoverageKey&) = default;
};
CoverageKey coverage_key(const ir::Op& op);

// ---- dtype lists and scalars ---------------------------------------------------------------------
const std::vector<DType>& float_dtypes();
const std::vector<DType>& int_dtypes();
const std::vector<DType>& numeric_dtypes();
const std::vector<DType>& all_dtypes();
/// A scalar operand of the dtype's kind: the float, the int or `b`.
Scalar scalar_for(DType dtype, double f, std::int64_t i, bool b = true);
/// "[4, 5, 6] permuted"
std::string layout_label(const Shape& shape, View view);

/// An operand of the layout and indexing tables: its shape and how it is laid out.
struct Source {
  Shape shape;
  View view;
};
inline std::string label(const Source& s) { return layout_label(s.shape, s.view); }
/// The values of the layout and indexing tables' operands.
inline const Dist kSourceData = Dist::range(-100, 100);
/// 70,871 elements: above flex's parallel grain on two threads (it splits
/// them across threads by rows or columns), odd sizes leave SIMD tails.
inline const Shape kLarge{131, 541};

}  // namespace burn::differential
