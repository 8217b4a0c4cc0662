// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11), the counter-based generator the CUDA backend's random ops
// draw from: element i of a draw is a function of (seed, draw number, i)
// alone, so the values do not depend on how the work is split over threads.
// The same rounds exist as host C++ (the tests' reference) and as device
// code for generated kernels.
#pragma once

#include <array>
#include <cstdint>

namespace burn::cuda {

inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;

/// Ten rounds over `counter` with `key` (the key bumped between rounds).
constexpr std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> c, std::array<std::uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{kPhiloxM0} * c[0];
    const std::uint64_t p1 = std::uint64_t{kPhiloxM1} * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<std::uint32_t>(p0)};
    k = {k[0] + kPhiloxW0, k[1] + kPhiloxW1};
  }
  return c;
}

/// The same rounds as a device function for generated kernels:
/// burn_philox(c, k0, k1) replaces c[0..3].
inline constexpr const char* kPhiloxDeviceCode =
    "__device__ __forceinline__ void burn_philox(unsigned int c[4], unsigned int k0, unsigned int k1) {\n"
    "  for (int round = 0; round < 10; ++round) {\n"
    "    const unsigned long long p0 = 0xD2511F53ull * c[0];\n"
    "    const unsigned long long p1 = 0xCD9E8D57ull * c[2];\n"
    "    const unsigned int next[4] = {(unsigned int)(p1 >> 32) ^ c[1] ^ k0, (unsigned int)p1,\n"
    "                                  (unsigned int)(p0 >> 32) ^ c[3] ^ k1, (unsigned int)p0};\n"
    "    c[0] = next[0]; c[1] = next[1]; c[2] = next[2]; c[3] = next[3];\n"
    "    k0 += 0x9E3779B9u;\n"
    "    k1 += 0xBB67AE85u;\n"
    "  }\n"
    "}\n";

/// The counter of element `i` of draw `draw`: (i, draw) as four 32-bit words.
constexpr std::array<std::uint32_t, 4> philox_counter(std::uint64_t i, std::uint64_t draw) {
  return {static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i >> 32), static_cast<std::uint32_t>(draw),
          static_cast<std::uint32_t>(draw >> 32)};
}

/// A double in [0, 1) from two words (53 random bits).
constexpr double philox_unit(std::uint32_t hi, std::uint32_t lo) {
  return static_cast<double>((std::uint64_t{hi >> 5} << 26) | (lo >> 6)) * 0x1.0p-53;
}

}  // namespace burn::cuda
