// Creation ops: full and arange compare values; random ops compare statistics.
#include "harness.hpp"

namespace burn::differential {
namespace {

std::vector<Case> full_cases(DType dt, Rng&) {
  std::vector<Case> out;
  const Scalar a = scalar_for(dt, 1.5, 7, true);
  const Scalar b = scalar_for(dt, -2.25, is_unsigned_int(dt) ? 200 : -3, false);
  for (const Shape& s : {Shape{4, 5}, Shape{7}, Shape{2, 3, 4}, Shape{0, 3}}) {
    out.push_back({"full " + s.to_string() + " " + a.to_string(), ir::Full{s, a, dt}, {}});
    out.push_back({"full " + s.to_string() + " " + b.to_string(), ir::Full{s, b, dt}, {}});
  }
  // A scalar of another kind converts to the dtype.
  out.push_back({"full [3, 3] int scalar", ir::Full{Shape{3, 3}, Scalar(std::int64_t{3}), dt}, {}});
  return out;
}

std::vector<Case> arange_cases(DType dt, Rng&) {
  struct R {
    std::int64_t start, end, step;
  };
  std::vector<R> ranges{{0, 10, 1}, {3, 3, 1}, {2, 40, 7}, {30, 4, -4}};
  if (!is_unsigned_int(dt)) ranges.insert(ranges.end(), {{5, -7, -3}, {-4, 20, 5}, {-9, -2, 2}});
  std::vector<Case> out;
  for (const auto& r : ranges)
    out.push_back(
        {"arange(" + std::to_string(r.start) + ", " + std::to_string(r.end) + ", " + std::to_string(r.step) + ")",
         ir::Arange{r.start, r.end, r.step, dt},
         {}});
  return out;
}

// 2^16 values per sample: the mean is known to 6 sigma / 256.
const Shape kSample{256, 256};

Entry random_entry(std::string name, ir::DistributionKind kind, std::vector<DType> dtypes,
                   std::function<std::pair<double, double>(DType)> params) {
  CaseMaker make = [kind, params](DType dt, Rng&) {
    const auto [a, b] = params(dt);
    return std::vector<Case>{{"random " + kSample.to_string(), ir::Random{kSample, kind, a, b, dt}, {}}};
  };
  return {std::move(name), ir::Random{{}, kind, 0, 1, DType::F32}, std::move(dtypes), std::move(make),
          Check::Statistics};
}

}  // namespace

std::vector<Entry> creation_entries() {
  auto with_bool = int_dtypes();
  with_bool.insert(with_bool.end(), float_dtypes().begin(), float_dtypes().end());
  with_bool.push_back(DType::Bool);
  return {
      {"full", ir::Full{}, all_dtypes(), full_cases},
      {"arange", ir::Arange{}, numeric_dtypes(), arange_cases},
      random_entry("random_default", ir::DistributionKind::Default, float_dtypes(),
                   [](DType) {
                     return std::pair{0.0, 1.0};
                   }),
      random_entry("random_uniform", ir::DistributionKind::Uniform, numeric_dtypes(),
                   [](DType dt) {
                     if (is_unsigned_int(dt)) return std::pair{2.0, 12.0};
                     if (is_int(dt)) return std::pair{-5.0, 10.0};
                     return std::pair{-3.0, 5.0};
                   }),
      random_entry("random_normal", ir::DistributionKind::Normal, float_dtypes(),
                   [](DType) {
                     return std::pair{1.5, 2.0};
                   }),
      random_entry("random_bernoulli", ir::DistributionKind::Bernoulli, with_bool,
                   [](DType) {
                     return std::pair{0.3, 0.0};
                   }),
  };
}

}  // namespace burn::differential
