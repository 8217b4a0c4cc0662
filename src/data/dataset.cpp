// Non-template helpers of the dataset and data loader headers.
#include <fmt/format.h>

#include <burn/data/dataloader.hpp>
#include <burn/data/dataset.hpp>
#include <burn/data/transform.hpp>
#include <numeric>

namespace burn::data {
namespace detail {

void throw_index_out_of_range(const char* op, std::size_t index, std::size_t size) {
  throw Error(op, fmt::format("index {} is out of range for a dataset of {} items", index, size));
}

void throw_bad_options(const char* what) { throw Error("DataLoader", what); }

void throw_bad_partial_range(std::size_t start, std::size_t end, std::size_t size) {
  throw Error("PartialDataset", fmt::format("range [{}, {}) is outside a dataset of {} items; need start <= end <= {}",
                                            start, end, size, size));
}

void throw_null_inner(const char* op) { throw Error(op, "the inner dataset is null"); }

namespace {
// SplitMix64: tiny, fast and fully specified, so the shuffle order is the same
// with every standard library (std::shuffle's is not).
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Unbiased draw in [0, bound) by rejection (bound > 0).
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    std::uint64_t r;
    do r = next();
    while (r >= limit);
    return r % bound;
  }
};
}  // namespace

std::vector<std::size_t> epoch_order(std::size_t size, bool shuffle, std::uint64_t seed, std::uint64_t epoch) {
  std::vector<std::size_t> order(size);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (!shuffle) return order;
  // Mix seed and epoch so neighbouring seeds and epochs give unrelated orders.
  SplitMix64 mix{seed};
  SplitMix64 rng{mix.next() ^ (epoch * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL)};
  for (std::size_t i = size; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

std::size_t shard_size(std::size_t size, std::size_t num_shards, bool drop_tail) {
  return size / num_shards + (!drop_tail && size % num_shards != 0 ? 1 : 0);
}

std::vector<std::size_t> shard_order(const std::vector<std::size_t>& order, std::size_t shard, std::size_t num_shards,
                                     bool drop_tail) {
  const std::size_t count = shard_size(order.size(), num_shards, drop_tail);
  std::vector<std::size_t> mine;
  if (order.empty()) return mine;
  mine.reserve(count);
  for (std::size_t k = 0; k < count; ++k) mine.push_back(order[(shard + k * num_shards) % order.size()]);
  return mine;
}

}  // namespace detail
}  // namespace burn::data
