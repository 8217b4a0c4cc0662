// f16 and bf16: known bit patterns, round-to-nearest-even, infinities, NaN,
// subnormals, and exhaustive round trips of every 16-bit pattern.
#include <burn/burn.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace {

using burn::bf16;
using burn::f16;

std::uint16_t f16_bits(float v) { return f16(v).bits; }
std::uint16_t bf16_bits(float v) { return bf16(v).bits; }
float pow2(int e) { return std::ldexp(1.0f, e); }

TEST(F16, KnownBitPatterns) {
  EXPECT_EQ(f16_bits(0.0f), 0x0000);
  EXPECT_EQ(f16_bits(-0.0f), 0x8000);
  EXPECT_EQ(f16_bits(1.0f), 0x3C00);
  EXPECT_EQ(f16_bits(-2.0f), 0xC000);
  EXPECT_EQ(f16_bits(0.5f), 0x3800);
  EXPECT_EQ(f16_bits(65504.0f), 0x7BFF);   // largest finite half
  EXPECT_EQ(f16_bits(pow2(-14)), 0x0400);  // smallest normal
  EXPECT_EQ(f16_bits(0.333251953125f), 0x3555);
  EXPECT_EQ(static_cast<float>(f16::from_bits(0x3555)), 0.333251953125f);
  EXPECT_EQ(static_cast<float>(f16::from_bits(0xC000)), -2.0f);
  EXPECT_EQ(static_cast<float>(f16::from_bits(0x7BFF)), 65504.0f);
}

TEST(F16, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 0x3C00 (even) and 0x3C01: ties go to even.
  EXPECT_EQ(f16_bits(1.0f + pow2(-11)), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 0x3C01 (odd) and 0x3C02 (even).
  EXPECT_EQ(f16_bits(1.0f + 3.0f * pow2(-11)), 0x3C02);
  // Just above halfway rounds up; just below rounds down.
  EXPECT_EQ(f16_bits(1.0f + pow2(-11) + pow2(-20)), 0x3C01);
  EXPECT_EQ(f16_bits(1.0f + pow2(-11) - pow2(-20)), 0x3C00);
  // Rounding that carries out of the mantissa into the exponent.
  EXPECT_EQ(f16_bits(1.0f - pow2(-12)), 0x3C00);
  EXPECT_EQ(f16_bits(-(1.0f - pow2(-12))), 0xBC00);
}

TEST(F16, InfinitiesAndOverflow) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(f16_bits(inf), 0x7C00);
  EXPECT_EQ(f16_bits(-inf), 0xFC00);
  EXPECT_EQ(f16_bits(65520.0f), 0x7C00);  // halfway above the max rounds to infinity
  EXPECT_EQ(f16_bits(65519.0f), 0x7BFF);  // below halfway stays finite
  EXPECT_EQ(f16_bits(1e10f), 0x7C00);
  EXPECT_EQ(f16_bits(-1e10f), 0xFC00);
  EXPECT_TRUE(std::isinf(static_cast<float>(f16::from_bits(0x7C00))));
  EXPECT_LT(static_cast<float>(f16::from_bits(0xFC00)), 0.0f);
}

TEST(F16, NaN) {
  const std::uint16_t b = f16_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(b & 0x7C00, 0x7C00) << "exponent all ones";
  EXPECT_NE(b & 0x03FF, 0) << "mantissa non-zero";
  EXPECT_TRUE(std::isnan(static_cast<float>(f16::from_bits(b))));
  EXPECT_TRUE(std::isnan(static_cast<float>(f16::from_bits(0x7E00))));
  EXPECT_TRUE(std::isnan(static_cast<float>(f16::from_bits(0xFC01))));
}

TEST(F16, Subnormals) {
  EXPECT_EQ(f16_bits(pow2(-24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(static_cast<float>(f16::from_bits(0x0001)), pow2(-24));
  EXPECT_EQ(static_cast<float>(f16::from_bits(0x03FF)), 1023.0f * pow2(-24));  // largest subnormal
  EXPECT_EQ(static_cast<float>(f16::from_bits(0x8001)), -pow2(-24));
  // Half of the smallest subnormal is a tie between 0 (even) and 0x0001.
  EXPECT_EQ(f16_bits(pow2(-25)), 0x0000);
  EXPECT_EQ(f16_bits(-pow2(-25)), 0x8000);
  // 1.5 units ties to 2 units (even); 2.5 units ties to 2 units.
  EXPECT_EQ(f16_bits(3.0f * pow2(-25)), 0x0002);
  EXPECT_EQ(f16_bits(5.0f * pow2(-25)), 0x0002);
  // Halfway between the largest subnormal (odd) and the smallest normal.
  EXPECT_EQ(f16_bits(pow2(-14) - pow2(-25)), 0x0400);
  EXPECT_EQ(f16_bits(pow2(-30)), 0x0000);  // underflows to zero
}

TEST(F16, EveryPatternRoundTrips) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto h = f16::from_bits(static_cast<std::uint16_t>(b));
    const float f = static_cast<float>(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(f16(f)))) << std::hex << b;
      continue;
    }
    ASSERT_EQ(f16(f).bits, b) << "pattern 0x" << std::hex << b << " -> " << f;
  }
}

// Every rounding decision: for each pair of neighbouring finite halves, the
// float exactly between them goes to the even one, and the floats just
// above and below it to the upper and lower one (normal and subnormal
// binades, both signs, the carry into the next binade included).
TEST(F16, EveryMidpointRoundsToNearestEven) {
  std::size_t wrong = 0;
  for (std::uint32_t b = 0; b < 0x7BFF; ++b) {
    for (const std::uint32_t sign : {0u, 0x8000u}) {
      const auto lower = static_cast<std::uint16_t>(b | sign), upper = static_cast<std::uint16_t>((b + 1) | sign);
      const double lo = static_cast<float>(f16::from_bits(lower)), hi = static_cast<float>(f16::from_bits(upper));
      const auto mid = static_cast<float>((lo + hi) / 2.0);  // exact: 12 significant bits
      const std::uint16_t even = (b & 1u) == 0 ? lower : upper;
      const float toward_upper = std::nextafter(mid, static_cast<float>(hi));
      const float toward_lower = std::nextafter(mid, static_cast<float>(lo));
      if (f16(mid).bits != even || f16(toward_upper).bits != upper || f16(toward_lower).bits != lower) {
        if (++wrong <= 5)
          ADD_FAILURE() << "between 0x" << std::hex << lower << " and 0x" << upper << ": midpoint -> 0x"
                        << f16(mid).bits << ", above -> 0x" << f16(toward_upper).bits << ", below -> 0x"
                        << f16(toward_lower).bits;
      }
    }
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(BF16, KnownBitPatterns) {
  EXPECT_EQ(bf16_bits(0.0f), 0x0000);
  EXPECT_EQ(bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits(-1.5f), 0xBFC0);
  EXPECT_EQ(bf16_bits(2.0f), 0x4000);
  EXPECT_EQ(static_cast<float>(bf16::from_bits(0x4049)), 3.140625f);
  EXPECT_EQ(bf16_bits(3.14159265f), 0x4049);
}

TEST(BF16, RoundsToNearestEven) {
  EXPECT_EQ(bf16_bits(1.0f + pow2(-8)), 0x3F80);         // tie to even (down)
  EXPECT_EQ(bf16_bits(1.0f + 3.0f * pow2(-8)), 0x3F82);  // tie to even (up)
  EXPECT_EQ(bf16_bits(1.0f + pow2(-8) + pow2(-20)), 0x3F81);
  EXPECT_EQ(bf16_bits(1.0f - pow2(-9)), 0x3F80);  // carries into the exponent
}

TEST(BF16, InfinitiesNaNAndSubnormals) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bf16_bits(inf), 0x7F80);
  EXPECT_EQ(bf16_bits(-inf), 0xFF80);
  // FLT_MAX lies above the largest bf16 by more than half an ulp: infinity.
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::max()), 0x7F80);
  const std::uint16_t n = bf16_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16::from_bits(n))));
  // A signalling-looking NaN whose top mantissa bits are zero must stay NaN.
  std::uint32_t snan_bits = 0x7F800001u;
  float snan;
  std::memcpy(&snan, &snan_bits, 4);
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16(snan))));
  EXPECT_EQ(static_cast<float>(bf16::from_bits(0x0001)), pow2(-133));
}

TEST(BF16, EveryPatternRoundTrips) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto h = bf16::from_bits(static_cast<std::uint16_t>(b));
    const float f = static_cast<float>(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(bf16(f)))) << std::hex << b;
      continue;
    }
    ASSERT_EQ(bf16(f).bits, b) << "pattern 0x" << std::hex << b;
  }
}

}  // namespace
