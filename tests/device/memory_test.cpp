// Memory: pool usage and reports, cleanup, persistent allocations and staging
// (docs/api.md, "Memory"). Readings are compared relative to a reading
// taken in the same test, so other tests' leftovers do not matter.
#include <gtest/gtest.h>

#include <burn_test.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using burn::Device;
using burn::MemoryPoolUsage;
using burn::Tensor;

constexpr std::uint64_t kMiB = 1u << 20;

MemoryPoolUsage usage_of(const Device& d) {
  const auto u = d.memory_pool_usage();
  EXPECT_TRUE(u.has_value()) << d << " reports its allocator";
  return u.value_or(MemoryPoolUsage{});
}

void expect_consistent(const MemoryPoolUsage& u) {
  EXPECT_GE(u.bytes_reserved, u.bytes_in_use + u.bytes_padding) << "reserved covers what is in use";
}

/// What the allocator holds beyond the live allocations (its cache).
std::uint64_t cached(const MemoryPoolUsage& u) { return u.bytes_reserved - u.bytes_in_use - u.bytes_padding; }

#if BURN_HAS_FLEX

TEST(FlexMemory, UsageFollowsLiveTensors) {
  const Device flex = Device::flex();
  flex.memory_cleanup();
  const MemoryPoolUsage before = usage_of(flex);
  expect_consistent(before);
  std::optional<Tensor<1>> big = Tensor<1>::zeros({4 * kMiB / 4}, flex);  // 4 MiB of f32
  flex.sync();
  const MemoryPoolUsage during = usage_of(flex);
  expect_consistent(during);
  EXPECT_GE(during.bytes_in_use, before.bytes_in_use + 4 * kMiB);
  EXPECT_GE(during.number_allocs, before.number_allocs + 1);
  EXPECT_GE(during.bytes_reserved, during.bytes_in_use);

  big.reset();
  const MemoryPoolUsage after = usage_of(flex);
  expect_consistent(after);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use) << "freeing the tensor returns its bytes";
  EXPECT_EQ(after.number_allocs, before.number_allocs);
  // Flex caches freed blocks for reuse ...
  EXPECT_GE(cached(after), 4 * kMiB);
  // ... until memory_cleanup gives them back.
  flex.memory_cleanup();
  const MemoryPoolUsage cleaned = usage_of(flex);
  expect_consistent(cleaned);
  EXPECT_LE(cleaned.bytes_reserved + 4 * kMiB, after.bytes_reserved);
  EXPECT_EQ(cleaned.bytes_in_use, after.bytes_in_use);
}

TEST(FlexMemory, ReportHasPools) {
  const Device flex = Device::flex();
  const auto before = flex.memory_pool_report();
  ASSERT_TRUE(before.has_value());
  ASSERT_GE(before->size(), 2u) << "pool 0: dynamic, pool 1: persistent";
  const auto big = Tensor<1>::zeros({3 * kMiB / 4}, flex);
  const auto during = flex.memory_pool_report();
  ASSERT_TRUE(during.has_value());
  const burn::SlicedPoolReport& dynamic = (*during)[0];
  EXPECT_GE(dynamic.pages, (*before)[0].pages + 1);
  EXPECT_GE(dynamic.pages_peak, dynamic.pages);
  EXPECT_GE(dynamic.largest_alloc, 3 * kMiB);
  EXPECT_EQ((*during)[1].pages, (*before)[1].pages) << "ordinary tensors are not persistent";
}

TEST(FlexMemory, PersistentAllocations) {
  const Device flex = Device::flex();
  flex.memory_cleanup();
  const auto report_before = flex.memory_pool_report().value();
  std::optional<Tensor<1>> weights;
  const int result = flex.memory_persistent_allocations(21, [&](int x) {
    weights = Tensor<1>::ones({kMiB / 4}, flex);  // 1 MiB
    return x * 2;
  });
  EXPECT_EQ(result, 42);
  const auto report_during = flex.memory_pool_report().value();
  EXPECT_EQ(report_during[1].pages, report_before[1].pages + 1) << "the allocation landed in the persistent pool";
  EXPECT_GE(report_during[1].largest_alloc, kMiB);
  EXPECT_EQ(report_during[0].pages, report_before[0].pages);

  // Outside the scope allocations are ordinary again.
  const auto ordinary = Tensor<1>::ones({16}, flex);
  EXPECT_EQ(flex.memory_pool_report().value()[1].pages, report_during[1].pages);

  // The persistent block survives memory_cleanup, even once freed.
  weights.reset();
  flex.memory_cleanup();
  const MemoryPoolUsage u = usage_of(flex);
  expect_consistent(u);
  EXPECT_GE(cached(u), kMiB) << "persistent memory is kept by memory_cleanup";
  EXPECT_EQ(flex.memory_pool_report().value()[1].pages, report_before[1].pages);
}

TEST(FlexMemory, PersistentAllocationsNestAndForwardValues) {
  const Device flex = Device::flex();
  const auto before = flex.memory_pool_report().value()[1].pages;
  std::vector<Tensor<1>> kept;
  auto out = flex.memory_persistent_allocations(std::make_unique<int>(3), [&](std::unique_ptr<int> p) {
    kept.push_back(Tensor<1>::ones({8}, flex));
    const int inner = flex.memory_persistent_allocations(*p, [&](int v) {
      kept.push_back(Tensor<1>::ones({8}, flex));
      return v + 1;
    });
    // Still persistent after the inner scope ends.
    kept.push_back(Tensor<1>::ones({8}, flex));
    return inner * 10;
  });
  EXPECT_EQ(out, 40);
  EXPECT_EQ(flex.memory_pool_report().value()[1].pages, before + 3);
  bool called = false;
  flex.memory_persistent_allocations(0, [&](int) { called = true; });  // void results work too
  EXPECT_TRUE(called);
}

TEST(FlexMemory, PersistentScopeEndsOnException) {
  const Device flex = Device::flex();
  const auto before = flex.memory_pool_report().value()[1].pages;
  EXPECT_THROW(flex.memory_persistent_allocations(0, [](int) -> int { throw std::runtime_error("boom"); }),
               std::runtime_error);
  const auto t = Tensor<1>::ones({8}, flex);
  EXPECT_EQ(flex.memory_pool_report().value()[1].pages, before) << "the scope closed when f threw";
}

#endif  // BURN_HAS_FLEX

#if BURN_HAS_NDARRAY
TEST(NdArrayMemory, NoPoolReportAndNoCache) {
  const Device nd = Device::ndarray();
  // The reference backend has no sliced pools (docs/api.md: nullopt where the
  // backend has none) and frees every block immediately.
  EXPECT_FALSE(nd.memory_pool_report().has_value());
  const MemoryPoolUsage before = usage_of(nd);
  std::optional<Tensor<1>> big = Tensor<1>::zeros({kMiB / 4}, nd);
  const MemoryPoolUsage during = usage_of(nd);
  EXPECT_GE(during.bytes_in_use, before.bytes_in_use + kMiB);
  expect_consistent(during);
  big.reset();
  const MemoryPoolUsage after = usage_of(nd);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(cached(after), 0u) << "ndarray keeps no cache";
  EXPECT_NO_THROW(nd.memory_cleanup());
  EXPECT_EQ(nd.memory_persistent_allocations(2, [](int x) { return x + 1; }), 3);
}
#endif

class Staging : public ::testing::TestWithParam<Device> {};

TEST_P(Staging, LeavesDataUsable) {
  const Device device = GetParam();
  burn::TensorData a(std::vector<float>{1, 2, 3, 4}, burn::Shape{2, 2});
  burn::TensorData b(std::vector<std::int64_t>{5, 6, 7});
  const burn::TensorData a_copy = a, b_copy = b;
  std::vector<burn::TensorData*> batch{&a, &b};
  device.staging(batch);
  a.assert_eq(a_copy);
  b.assert_eq(b_copy);
  Tensor<2>::from_data(a, device).to_data().assert_eq(a_copy);
  Tensor<1, burn::Int>::from_data(b, device).to_data().assert_eq(b_copy);
  device.staging(std::vector<burn::TensorData*>{});  // an empty batch is fine
  device.staging(std::vector<burn::TensorData*>{&a});
  a.assert_eq(a_copy);
}

INSTANTIATE_TEST_SUITE_P(AllDevices, Staging, ::testing::ValuesIn(burn::testing::all_devices()),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return std::string(info.param.type().name());
                         });

}  // namespace

#if BURN_HAS_FLEX
namespace {
// Staging on flex warms a cached buffer of each data's size: the upload that
// follows reuses it, so the reserved pool does not grow.
TEST(FlexStaging, WarmsTheBufferTheUploadReuses) {
  const Device flex = Device::flex();
  flex.memory_cleanup();
  // An odd size no other test uses, so its bucket starts empty.
  burn::TensorData data(std::vector<float>(3'000'017, 0.5f), burn::Shape{3'000'017});
  const auto before = flex.memory_pool_usage()->bytes_reserved;
  flex.staging(std::vector<burn::TensorData*>{&data});
  const auto staged = flex.memory_pool_usage()->bytes_reserved;
  EXPECT_GE(staged, before + data.bytes().size()) << "staging reserved no buffer";
  {
    auto t = Tensor<1>::from_data(data, flex);
    EXPECT_EQ(flex.memory_pool_usage()->bytes_reserved, staged) << "the upload did not reuse the staged buffer";
    EXPECT_EQ(t.to_data().to_vec<float>()[3'000'016], 0.5f);
  }
}
}  // namespace
#endif
