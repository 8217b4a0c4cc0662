// Running a case on both devices and comparing the results element by element.
#include "runner.hpp"
#include "statistics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

namespace burn::differential {
namespace {

burn::detail::TensorRef upload(const Input& in, const Device& device) {
  burn::detail::TensorRef t =
      burn::detail::from_data(in.base, TensorCreationOptions(device, in.base.dtype()), kind_of_dtype(in.base.dtype()));
  for (const auto& op : in.view) t = burn::detail::execute1(op, {t});
  return t;
}

std::vector<TensorData> run_case(const Case& c, const Device& device) {
  if (c.inputs.empty()) return {burn::detail::to_data(burn::detail::create(c.op, device))};
  std::vector<burn::detail::TensorRef> inputs;
  for (const auto& in : c.inputs) inputs.push_back(upload(in, device));
  // The only handles: dispatch may run the op in place, as it does in programs.
  std::vector<burn::detail::TensorRef> outputs = burn::detail::execute(c.op, inputs);
  inputs.clear();
  std::vector<TensorData> data;
  for (const auto& o : outputs) data.push_back(burn::detail::to_data(o));
  return data;
}

/// Whether both devices hold every dtype the case touches (inputs, outputs).
bool pair_supports(const Case& c, const Pair& pair) {
  const CaseSpecs specs = case_specs(c);
  for (const auto* list : {&specs.inputs, &specs.outputs})
    for (const auto& s : *list)
      if (!pair.dut.supports_dtype(s.dtype) || !pair.oracle.supports_dtype(s.dtype)) return false;
  return true;
}

std::string tolerance_text(DType d) {
  const auto tol = tolerance_for(d);
  if (!tol) return "exact";
  std::ostringstream os;
  os << "rel " << tol->relative << " abs " << tol->absolute;
  return os.str();
}

bool same_element_bytes(const TensorData& a, const TensorData& b, std::size_t i) {
  const std::size_t size = dtype_size(a.dtype());
  return std::memcmp(a.bytes().data() + i * size, b.bytes().data() + i * size, size) == 0;
}

std::string describe(const Case& c) {
  std::string s = c.label;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    s += i == 0 ? " (upload " : ", ";
    s += c.inputs[i].base.shape().to_string() + " " + std::string(dtype_name(c.inputs[i].base.dtype()));
  }
  return c.inputs.empty() ? s : s + ")";
}

}  // namespace

Errors compare_values(const TensorData& got, const TensorData& want) {
  Errors e;
  const auto tol = tolerance_for(want.dtype());
  for (std::size_t i = 0; i < want.num_elements(); ++i) {
    const double a = got.value_as_double(i), b = want.value_as_double(i);
    double diff = 0.0;
    bool ok;
    if (tol) {
      if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
      else if (std::isinf(a) || std::isinf(b)) ok = a == b;
      else ok = std::abs(a - b) <= std::max(tol->relative * std::abs(a + b), tol->absolute);
      diff = ok && (std::isnan(a) || std::isinf(a)) ? 0.0 : std::abs(a - b);
      if (std::isnan(diff)) diff = std::numeric_limits<double>::infinity();
    } else {
      ok = is_bool(want.dtype()) ? (a != 0) == (b != 0) : same_element_bytes(got, want, i);
      diff = ok ? 0.0 : std::max(std::abs(a - b), 1.0);
    }
    // Relative to the larger value, floored at the absolute tolerance so that
    // values near zero do not report huge relative errors.
    const double scale = std::max({std::abs(a), std::abs(b), tol ? tol->absolute : 1.0});
    const double rel = diff == 0.0 ? 0.0 : (std::isfinite(scale) ? diff / scale : diff);
    e.abs = std::max(e.abs, diff);
    e.rel = std::max(e.rel, rel);
    if (!ok && ++e.mismatches <= 4) {
      std::ostringstream os;
      os << "\n    flat " << i << ": got " << a << ", expected " << b;
      e.examples += os.str();
    }
  }
  return e;
}

std::optional<Tolerance> tolerance_for(DType output_dtype) {
  if (!is_float(output_dtype)) return std::nullopt;
  return Tolerance::default_for(output_dtype);
}

std::uint64_t case_seed(std::string_view name, DType dtype) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across runs and platforms
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return (h ^ static_cast<std::uint64_t>(dtype)) * 1099511628211ull;
}

Row run_row(const Entry& entry, DType dtype, const Pair& pair) {
  Row row;
  row.pair = pair.name;
  row.op = entry.name;
  row.dtype = dtype;
  Rng rng(case_seed(entry.name, dtype));
  std::set<std::string> tolerances;
  const std::string where = entry.name + " " + std::string(dtype_name(dtype)) + " (" + pair.name + ")";
  if (entry.check == Check::Statistics) {
    // Reproducible samples; the two generators still differ, hence statistics.
    pair.dut.seed(case_seed(entry.name, dtype));
    pair.oracle.seed(case_seed(entry.name, dtype) + 1);
  }
  for (const Case& c : entry.cases(dtype, rng)) {
    bool supported = false;
    try {
      supported = pair_supports(c, pair);
    } catch (const std::exception& ex) {
      row.failed = true;
      ADD_FAILURE() << where << ", case " << describe(c) << " is invalid for the IR (test table bug): " << ex.what();
      continue;
    }
    if (!supported) continue;
    std::vector<TensorData> want, got;
    std::string oracle_error, dut_error;
    try {
      want = run_case(c, pair.oracle);
    } catch (const std::exception& ex) {
      oracle_error = ex.what();
    }
    try {
      got = run_case(c, pair.dut);
    } catch (const std::exception& ex) {
      dut_error = ex.what();
    }
    ++row.cases;
    if (!oracle_error.empty() || !dut_error.empty()) {
      row.failed = true;
      ADD_FAILURE() << where << ", case " << describe(c) << ":\n  " << pair.dut.to_string() << ": "
                    << (dut_error.empty() ? "ok" : dut_error) << "\n  " << pair.oracle.to_string() << ": "
                    << (oracle_error.empty() ? "ok" : oracle_error);
      continue;
    }
    if (got.size() != want.size()) {
      row.failed = true;
      ADD_FAILURE() << where << ", case " << describe(c) << ": " << got.size() << " outputs, the oracle gave "
                    << want.size();
      continue;
    }
    for (std::size_t o = 0; o < want.size(); ++o) {
      if (got[o].shape() != want[o].shape() || got[o].dtype() != want[o].dtype()) {
        row.failed = true;
        ADD_FAILURE() << where << ", case " << describe(c) << ", output " << o << ": got " << got[o].shape().to_string()
                      << " " << got[o].dtype() << ", the oracle gave " << want[o].shape().to_string() << " "
                      << want[o].dtype();
        continue;
      }
      if (entry.check == Check::Statistics) {
        const auto s = compare_statistics(std::get<ir::Random>(c.op), got[o], want[o]);
        tolerances.insert("stats: mean, std, support");
        row.worst_abs = std::max(row.worst_abs, s.abs);
        row.worst_rel = std::max(row.worst_rel, s.rel);
        if (!s.problems.empty()) {
          row.failed = true;
          ADD_FAILURE() << where << ", case " << describe(c) << ":" << s.problems;
        }
        continue;
      }
      tolerances.insert(tolerance_text(want[o].dtype()));
      const Errors e = compare_values(got[o], want[o]);
      row.worst_abs = std::max(row.worst_abs, e.abs);
      row.worst_rel = std::max(row.worst_rel, e.rel);
      if (e.mismatches) {
        row.failed = true;
        ADD_FAILURE() << where << ", case " << describe(c) << ", output " << o << ": " << e.mismatches << " of "
                      << want[o].num_elements() << " values differ beyond " << tolerance_text(want[o].dtype()) << " ("
                      << pair.dut.to_string() << " vs " << pair.oracle.to_string() << "):" << e.examples;
      }
    }
  }
  for (const auto& t : tolerances) row.tolerance += (row.tolerance.empty() ? "" : " | ") + t;
  return row;
}

}  // namespace burn::differential
