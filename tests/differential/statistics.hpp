// Random ops cannot agree bit for bit across backends (each has its own
// generator), so their samples are compared by statistics instead.
#pragma once

#include <burn/ir/op.hpp>
#include <burn/tensor_data.hpp>

#include <string>

namespace burn::differential {

struct StatisticsResult {
  double abs = 0.0;      // the larger difference of the two samples' means and standard deviations
  double rel = 0.0;      // abs over the distribution's standard deviation
  std::string problems;  // empty when both samples fit the distribution and each other
};

/// Checks each sample's mean, standard deviation and support against the
/// distribution `op` describes, and the two samples against each other.
StatisticsResult compare_statistics(const ir::Random& op, const TensorData& dut, const TensorData& oracle);

}  // namespace burn::differential
