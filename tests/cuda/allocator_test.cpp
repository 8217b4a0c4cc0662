// The CUDA caching allocator's bookkeeping, over a fake device memory that
// records what the driver would have been asked.
#include <gtest/gtest.h>

#include <burn/burn.hpp>

#include "backends/cuda/allocator.hpp"

namespace burn::cuda {
namespace {

struct FakeMemory final : DeviceMemory {
  struct State {
    std::uint64_t next = 0x10000;
    std::size_t capacity = std::size_t{1} << 30;
    std::size_t in_use = 0;
    int allocations = 0;
    int releases = 0;
  };
  explicit FakeMemory(std::shared_ptr<State> s) : state(std::move(s)) {}
  std::uint64_t allocate(std::size_t bytes) override {
    if (state->in_use + bytes > state->capacity) return 0;
    state->in_use += bytes;
    state->allocations += 1;
    const std::uint64_t address = state->next;
    state->next += bytes;
    return address;
  }
  void release(std::uint64_t /*address*/, std::size_t bytes) noexcept override {
    state->in_use -= bytes;
    state->releases += 1;
  }
  std::shared_ptr<State> state;
};

struct Fixture {
  std::shared_ptr<FakeMemory::State> state = std::make_shared<FakeMemory::State>();
  std::shared_ptr<CachingAllocator> allocator = CachingAllocator::create(std::make_unique<FakeMemory>(state));
};

TEST(CudaAllocator, RoundsSmallTo512BytesAndLargeTo2MiB) {
  EXPECT_EQ(CachingAllocator::rounded_size(0), 512u);
  EXPECT_EQ(CachingAllocator::rounded_size(1), 512u);
  EXPECT_EQ(CachingAllocator::rounded_size(513), 1024u);
  EXPECT_EQ(CachingAllocator::rounded_size((1u << 20) - 1), 1u << 20);
  EXPECT_EQ(CachingAllocator::rounded_size(1u << 20), 2u << 20);
  EXPECT_EQ(CachingAllocator::rounded_size((2u << 20) + 1), 4u << 20);
}

TEST(CudaAllocator, ReusesAFreedBlockWithoutAskingTheDriver) {
  Fixture f;
  std::uint64_t first = 0;
  {
    auto b = f.allocator->allocate(1000, "test");
    first = b->address();
    EXPECT_EQ(b->size(), 1024u);
    EXPECT_EQ(f.allocator->usage().bytes_in_use, 1000u);
    EXPECT_EQ(f.allocator->usage().bytes_padding, 24u);
  }
  EXPECT_EQ(f.allocator->usage().number_allocs, 0u);
  EXPECT_EQ(f.allocator->usage().bytes_reserved, 1024u);
  auto again = f.allocator->allocate(900, "test");
  EXPECT_EQ(again->address(), first);
  EXPECT_EQ(f.state->allocations, 1);
}

TEST(CudaAllocator, ASmallRequestDoesNotTakeABlockMoreThanTwiceItsSize) {
  Fixture f;
  { auto big = f.allocator->allocate(8192, "test"); }
  auto small = f.allocator->allocate(1024, "test");
  EXPECT_EQ(small->size(), 1024u);
  EXPECT_EQ(f.state->allocations, 2);
  auto fits = f.allocator->allocate(5000, "test");  // 5120 rounded: the 8192 block is within twice
  EXPECT_EQ(fits->size(), 8192u);
  EXPECT_EQ(f.state->allocations, 2);
}

TEST(CudaAllocator, CleanupReturnsCachedBlocksButKeepsPersistentOnes) {
  Fixture f;
  f.allocator->set_persistent(true);
  { auto weight = f.allocator->allocate(4096, "test"); }
  f.allocator->set_persistent(false);
  { auto activation = f.allocator->allocate(3u << 20, "test"); }
  EXPECT_EQ(f.allocator->usage().bytes_reserved, 4096u + (4u << 20));
  f.allocator->cleanup();
  EXPECT_EQ(f.state->releases, 1);
  EXPECT_EQ(f.allocator->usage().bytes_reserved, 4096u);
  const auto report = f.allocator->report();
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0].pages, 1u);  // the persistent small block
  EXPECT_EQ(report[1].pages, 0u);  // the large one went back
  EXPECT_EQ(report[1].pages_peak, 1u);
  EXPECT_EQ(report[1].largest_alloc, 3u << 20);
}

TEST(CudaAllocator, OutOfMemoryReturnsTheCacheAndRetriesOnce) {
  Fixture f;
  f.state->capacity = 8u << 20;
  { auto a = f.allocator->allocate(2u << 20, "test"); }  // cached: 2 MiB held, too small to reuse
  auto b = f.allocator->allocate(8u << 20, "test");      // 2 + 8 > 8: the cache goes first
  EXPECT_EQ(f.state->releases, 1);
  EXPECT_EQ(b->size(), 8u << 20);
  EXPECT_EQ(f.allocator->usage().bytes_reserved, 8u << 20);
}

TEST(CudaAllocator, OutOfMemoryIsADeviceErrorNamingTheOp) {
  Fixture f;
  f.state->capacity = 4u << 20;
  auto held = f.allocator->allocate(3u << 20, "test");
  try {
    (void)f.allocator->allocate(3u << 20, "matmul");
    FAIL() << "allocated past the device's capacity";
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.op(), "matmul");
    EXPECT_NE(what.find("out of memory"), std::string::npos) << what;
    EXPECT_NE(what.find("3145728 bytes"), std::string::npos) << what;
  }
  EXPECT_THROW((void)f.allocator->allocate(std::size_t{1} << 60, "test"), DeviceError);
}

TEST(CudaAllocator, DestroyingTheLastOwnerReturnsEverything) {
  auto state = std::make_shared<FakeMemory::State>();
  {
    auto allocator = CachingAllocator::create(std::make_unique<FakeMemory>(state));
    allocator->set_persistent(true);
    auto kept = allocator->allocate(100, "test");
    allocator.reset();  // the block still holds the allocator
    EXPECT_EQ(state->releases, 0);
  }
  EXPECT_EQ(state->releases, 1);
  EXPECT_EQ(state->in_use, 0u);
}

}  // namespace
}  // namespace burn::cuda
