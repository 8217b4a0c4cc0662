// Shared by the fusion tests: the fused device, its eager twin, and a
// bit-exact comparison of host data.
#pragma once

#include <gtest/gtest.h>

#include <burn/burn.hpp>
#include <string>

#include "fusion/stats.hpp"

namespace burn::fusion_test {

/// The device under test: lazy, fused execution over flex's kernels.
inline Device fused_device() { return Device::cpu(); }
/// The eager backend whose results the fused ones must equal bit for bit.
inline Device eager_device() { return Device::flex(); }

/// Empty when equal bit for bit (any NaN equals any NaN), else the first difference.
std::string bitwise_diff(const TensorData& fused, const TensorData& eager);

}  // namespace burn::fusion_test
