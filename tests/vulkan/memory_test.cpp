// The Vulkan buffer pool: usage follows live tensors, freed blocks are
// reused, memory_cleanup returns cached memory, persistent allocations have
// their own pool. Readings are relative to one taken in the same test.
#include "vk_test.hpp"

#include <optional>

namespace {

using burn::Device;
using burn::MemoryPoolUsage;
using burn::Tensor;
using burn::vktest::vk;

constexpr std::uint64_t kMiB = 1u << 20;

MemoryPoolUsage usage_of(const Device& d) {
  const auto u = d.memory_pool_usage();
  EXPECT_TRUE(u.has_value());
  const MemoryPoolUsage r = u.value_or(MemoryPoolUsage{});
  EXPECT_GE(r.bytes_reserved, r.bytes_in_use + r.bytes_padding) << "reserved covers what is in use";
  return r;
}

TEST(VulkanMemory, UsageFollowsLiveTensors) {
  const Device d = vk();
  d.memory_cleanup();
  const MemoryPoolUsage before = usage_of(d);
  std::optional<Tensor<1>> big = Tensor<1>::zeros({4 * kMiB / 4}, d);  // 4 MiB of f32: a block of its own
  const MemoryPoolUsage during = usage_of(d);
  EXPECT_EQ(during.bytes_in_use, before.bytes_in_use + 4 * kMiB);
  EXPECT_EQ(during.number_allocs, before.number_allocs + 1);
  big.reset();
  const MemoryPoolUsage after = usage_of(d);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.number_allocs, before.number_allocs);
  EXPECT_GE(after.bytes_reserved, before.bytes_reserved + 4 * kMiB) << "the freed block stays cached";
  d.memory_cleanup();
  EXPECT_LE(usage_of(d).bytes_reserved + 4 * kMiB, after.bytes_reserved) << "cleanup frees the cache";
}

TEST(VulkanMemory, FreedBlocksAreReused) {
  const Device d = vk();
  { auto warm = Tensor<2>::ones({300, 700}, d); }  // 840 KB, padded to its size class
  const MemoryPoolUsage cached = usage_of(d);
  for (int i = 0; i < 5; ++i) {
    auto t = Tensor<2>::ones({300, 700}, d) + 1.0f;  // two live blocks of the class at once
    EXPECT_EQ(t.to_data().to_vec<float>()[12345], 2.0f);
  }
  const MemoryPoolUsage after = usage_of(d);
  EXPECT_LE(after.bytes_reserved, cached.bytes_reserved + 840000 * 2) << "at most one more block of the class";
}

TEST(VulkanMemory, SmallTensorsShareSlabPages) {
  const Device d = vk();
  const auto before = d.memory_pool_report();
  ASSERT_TRUE(before.has_value());
  ASSERT_EQ(before->size(), 3u) << "[0] small blocks in pages, [1] large blocks, [2] persistent";
  std::vector<Tensor<1>> small;
  for (int i = 0; i < 64; ++i) small.push_back(Tensor<1>::full({100}, i, d));
  const auto during = d.memory_pool_report();
  EXPECT_EQ((*during)[0].page_size, 4 * kMiB);
  EXPECT_LE((*during)[0].pages, (*before)[0].pages + 1) << "64 blocks of 400 bytes fit in one page";
  EXPECT_GE((*during)[0].pages_peak, (*during)[0].pages);
  EXPECT_GE((*during)[0].largest_alloc, 400u);
  EXPECT_EQ(small[63].to_data().to_vec<float>()[99], 63.0f);
  EXPECT_EQ(small[7].to_data().to_vec<float>()[0], 7.0f);
}

TEST(VulkanMemory, PersistentAllocations) {
  const Device d = vk();
  const auto before = d.memory_pool_report();
  auto w = d.memory_persistent_allocations(0, [&](int) { return Tensor<1>::ones({2 * kMiB / 4}, d); });
  const auto during = d.memory_pool_report();
  EXPECT_EQ((*during)[2].pages, (*before)[2].pages + 1);
  EXPECT_GE((*during)[2].largest_alloc, 2 * kMiB);
  d.memory_cleanup();
  EXPECT_EQ(w.to_data().to_vec<float>()[1000], 1.0f) << "cleanup leaves live persistent blocks alone";
}

TEST(VulkanMemory, TooLargeForOneBufferIsAClearError) {
  const Device d = vk();
  // 2^31 f32 elements: past every device's storage-buffer range (lavapipe: 128 MiB).
  burn::testing::expect_op_error(
      [&] {
        (void)Tensor<2>::zeros({1u << 16, 1u << 15}, d);
      },
      "full", "more than vulkan:0 can bind");
}

}  // namespace
