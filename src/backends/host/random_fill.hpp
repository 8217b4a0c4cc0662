// The one recipe every backend uses to draw random tensors on the host, so a
// seed gives the same values on every device: 53 random bits per uniform (a
// double in [0, 1), identical on every platform, unlike
// std::uniform_real_distribution) and Box-Muller normals.
#pragma once

#include <cstddef>
#include <random>

#include <burn/ir/op.hpp>

namespace burn::host {

/// Writes `n` elements of `dtype` drawn as `op` describes to `dst`. Int
/// tensors get uniform integers in [a, b) (floor keeps the bound exclusive).
/// The caller serialises access to `rng`.
void fill_random(const ir::Random& op, std::mt19937_64& rng, DType dtype, std::byte* dst, std::size_t n);

}  // namespace burn::host
