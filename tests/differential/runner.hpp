// Runs an entry's cases on a device pair, compares, and keeps the per-op
// table of worst errors that the binary prints at the end.
#pragma once

#include "harness.hpp"

#include <optional>

namespace burn::differential {

/// A device under test and the oracle it is compared with.
struct Pair {
  std::string name;  // "flex_vs_ndarray"
  Device dut;
  Device oracle;
};

/// Every pair this build can run: flex against ndarray (the reference) and
/// flex against libtorch (an oracle nobody here wrote).
std::vector<Pair> available_pairs();

/// One row of the table: an entry on one dtype.
struct Row {
  std::string pair;
  std::string op;
  DType dtype = DType::F32;
  std::size_t cases = 0;
  double worst_abs = 0.0;
  double worst_rel = 0.0;
  std::string tolerance;
  bool failed = false;
};

/// The tolerance an output dtype is held to, or nullopt for exact.
std::optional<Tolerance> tolerance_for(DType output_dtype);

/// Worst errors and mismatches of one output against the oracle's (same
/// shape and dtype): NaN matches NaN, infinities must be equal, other floats
/// within tolerance_for, ints and bools exactly.
struct Errors {
  double abs = 0.0;
  double rel = 0.0;
  std::size_t mismatches = 0;
  std::string examples;  // the first few mismatching elements
};
Errors compare_values(const TensorData& got, const TensorData& want);

/// Runs every case of `entry` for `dtype` on both devices; records gtest
/// failures (naming the case, the first mismatching elements, or the error a
/// device raised) and returns the row.
Row run_row(const Entry& entry, DType dtype, const Pair& pair);

/// The rows gathered in this process, printed as one table per pair.
void record_row(Row row);
void print_table();

/// A stable seed for an entry and dtype, independent of test order.
std::uint64_t case_seed(std::string_view name, DType dtype);

}  // namespace burn::differential
