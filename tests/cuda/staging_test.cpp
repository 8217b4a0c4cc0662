// The pinned staging of large copies (staging.hpp) over a fake device whose
// copies wait in a queue and run only when the host waits for them, as a
// stream runs them later: the bytes arrive intact at any size, the caller's
// memory is free to go once to_device returns, and no staging buffer is
// written by the host while a queued copy still reads it.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <vector>

#include "backends/cuda/staging.hpp"

namespace burn::cuda {
namespace {

constexpr std::uint64_t kBase = 0x10000;

class FakeDevice final : public StagingDevice {
 public:
  explicit FakeDevice(std::size_t memory_bytes) : memory_(memory_bytes, std::byte{0}) {}
  ~FakeDevice() override {
    run_all();
    EXPECT_TRUE(pinned_.empty()) << pinned_.size() << " pinned buffers were not freed";
  }

  std::byte* allocate_pinned(std::size_t bytes) override {
    if (refuse_pinned) return nullptr;
    // Garbage to start with: a host read before the copy ran shows.
    auto block = std::make_unique<std::byte[]>(bytes);
    std::memset(block.get(), 0xab, bytes);
    std::byte* p = block.get();
    pinned_.emplace(p, std::move(block));
    return p;
  }
  void free_pinned(std::byte* p) noexcept override { pinned_.erase(p); }

  void copy_to_device(std::uint64_t dst, const std::byte* src, std::size_t bytes) override {
    queue_.push_back({Op::ToDevice, dst, const_cast<std::byte*>(src), bytes, {src, src + bytes}, 0, 0});
  }
  void copy_to_host(std::byte* dst, std::uint64_t src, std::size_t bytes) override {
    queue_.push_back({Op::ToHost, src, dst, bytes, {}, 0, 0});
  }
  void mark(std::size_t slot) override {
    marks_[slot] = ++sequence_;
    queue_.push_back({Op::Mark, 0, nullptr, 0, {}, slot, sequence_});
  }
  void wait(std::size_t slot) override {
    while (!queue_.empty() && done_ < marks_[slot]) run_one();
  }

  void run_all() {
    while (!queue_.empty()) run_one();
  }
  std::vector<std::byte> device_bytes(std::uint64_t at, std::size_t n) const {
    return {memory_.begin() + static_cast<std::ptrdiff_t>(at - kBase),
            memory_.begin() + static_cast<std::ptrdiff_t>(at - kBase + n)};
  }

  bool refuse_pinned = false;
  /// Host copies into a staging buffer while a queued copy still read it.
  int overwritten_in_flight = 0;

 private:
  struct Op {
    enum Kind { ToDevice, ToHost, Mark } kind;
    std::uint64_t device;
    std::byte* host;
    std::size_t bytes;
    std::vector<std::byte> snapshot;  // ToDevice: the buffer when the copy was queued
    std::size_t slot;
    std::uint64_t sequence;
  };

  void run_one() {
    Op op = std::move(queue_.front());
    queue_.pop_front();
    std::byte* device = memory_.data() + (op.device - kBase);
    switch (op.kind) {
      case Op::ToDevice:
        if (std::memcmp(op.host, op.snapshot.data(), op.bytes) != 0) ++overwritten_in_flight;
        std::memcpy(device, op.snapshot.data(), op.bytes);
        break;
      case Op::ToHost: std::memcpy(op.host, device, op.bytes); break;
      case Op::Mark: done_ = op.sequence; break;
    }
  }

  std::vector<std::byte> memory_;
  std::map<std::byte*, std::unique_ptr<std::byte[]>> pinned_;
  std::deque<Op> queue_;
  std::array<std::uint64_t, 2> marks_{};
  std::uint64_t sequence_ = 0, done_ = 0;
};

std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

constexpr std::size_t kChunk = 64;

TEST(CudaStaging, BytesRoundTripAtEverySize) {
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, kChunk - 1, kChunk, kChunk + 1, 2 * kChunk, 5 * kChunk / 2, 7 * kChunk + 5}) {
    FakeDevice device(8 * kChunk);
    {
      StagedCopies staging(device, kChunk);
      ASSERT_TRUE(staging.available());
      const auto data = random_bytes(n, n + 1);
      staging.to_device(kBase + 16, data);
      std::vector<std::byte> back(n, std::byte{0});
      staging.to_host(back, kBase + 16);
      EXPECT_EQ(back, data) << n << " bytes";
      EXPECT_EQ(device.overwritten_in_flight, 0) << n << " bytes";
    }
  }
}

TEST(CudaStaging, TheSourceMayGoOnceToDeviceReturns) {
  FakeDevice device(16 * kChunk);
  StagedCopies staging(device, kChunk);
  ASSERT_TRUE(staging.available());
  auto first = random_bytes(5 * kChunk + 3, 1);
  auto second = random_bytes(3 * kChunk, 2);
  const auto first_copy = first, second_copy = second;
  staging.to_device(kBase, first);
  std::fill(first.begin(), first.end(), std::byte{0});  // the caller reuses its memory
  staging.to_device(kBase + 8 * kChunk, second);
  std::fill(second.begin(), second.end(), std::byte{0});
  device.run_all();
  EXPECT_EQ(device.device_bytes(kBase, first_copy.size()), first_copy);
  EXPECT_EQ(device.device_bytes(kBase + 8 * kChunk, second_copy.size()), second_copy);
  EXPECT_EQ(device.overwritten_in_flight, 0);
  // Back through the same buffers, interleaved with a copy still queued.
  staging.to_device(kBase + 14 * kChunk, random_bytes(kChunk, 3));
  std::vector<std::byte> back(first_copy.size());
  staging.to_host(back, kBase);
  EXPECT_EQ(back, first_copy);
  EXPECT_EQ(device.overwritten_in_flight, 0);
}

TEST(CudaStaging, NoPinnedMemoryMeansNotAvailable) {
  FakeDevice device(kChunk);
  device.refuse_pinned = true;
  StagedCopies staging(device, kChunk);
  EXPECT_FALSE(staging.available());
  EXPECT_FALSE(staging.available());  // asked once
}

}  // namespace
}  // namespace burn::cuda
