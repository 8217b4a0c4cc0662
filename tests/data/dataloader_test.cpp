// DataLoader: batch sizes, seeded shuffling, workers, early exit and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <burn/data/dataloader.hpp>
#include <chrono>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "temp_dir.hpp"

namespace {

using burn::data::DataLoader;
using burn::data::DataLoaderOptions;
using burn::data::InMemoryDataset;
using burn::testing::error_message;
using Batch = std::vector<int>;
using Loader = DataLoader<int, Batch>;

std::shared_ptr<const InMemoryDataset<int>> numbers(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return std::make_shared<const InMemoryDataset<int>>(std::move(v));
}

Batch identity(std::vector<int> items) { return items; }

// Every batch of one epoch, in order.
std::vector<Batch> collect(Loader::Epoch epoch) {
  std::vector<Batch> out;
  for (auto& b : epoch) out.push_back(b);
  return out;
}

std::vector<std::size_t> sizes(const std::vector<Batch>& batches) {
  std::vector<std::size_t> s;
  for (const auto& b : batches) s.push_back(b.size());
  return s;
}

TEST(DataLoader, BatchesInOrderWithPartialLastBatch) {
  Loader loader(numbers(10), identity, {.batch_size = 3});
  EXPECT_EQ(loader.num_batches(), 4u);
  EXPECT_EQ(loader.num_items(), 10u);
  const auto batches = collect(loader.iter());
  EXPECT_EQ(batches, (std::vector<Batch>{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}));
}

TEST(DataLoader, DropLast) {
  Loader loader(numbers(10), identity, {.batch_size = 3, .drop_last = true});
  EXPECT_EQ(loader.num_batches(), 3u);
  EXPECT_EQ(sizes(collect(loader.iter())), (std::vector<std::size_t>{3, 3, 3}));
  Loader exact(numbers(9), identity, {.batch_size = 3, .drop_last = true});
  EXPECT_EQ(exact.num_batches(), 3u);
}

TEST(DataLoader, BatchLargerThanDataset) {
  Loader keep(numbers(5), identity, {.batch_size = 8});
  EXPECT_EQ(sizes(collect(keep.iter())), (std::vector<std::size_t>{5}));
  Loader drop(numbers(5), identity, {.batch_size = 8, .drop_last = true, .num_workers = 2});
  EXPECT_EQ(drop.num_batches(), 0u);
  EXPECT_TRUE(collect(drop.iter()).empty());
  // A batch size at the size_t limit is one batch of everything, not a
  // count that wraps around to none; so is a shard of a huge world.
  const std::size_t most = std::numeric_limits<std::size_t>::max();
  Loader huge(numbers(5), identity, {.batch_size = most});
  EXPECT_EQ(huge.num_batches(), 1u);
  EXPECT_EQ(sizes(collect(huge.iter())), (std::vector<std::size_t>{5}));
  Loader sharded(numbers(5), identity, {.batch_size = 2, .num_shards = most, .shard = 0});
  EXPECT_EQ(sharded.num_items(), 1u);
}

TEST(DataLoader, EmptyDataset) {
  for (std::size_t workers : {0u, 3u}) {
    Loader loader(numbers(0), identity, {.batch_size = 4, .shuffle = true, .num_workers = workers});
    EXPECT_EQ(loader.num_batches(), 0u);
    EXPECT_TRUE(collect(loader.iter()).empty());
  }
}

TEST(DataLoader, ShuffleIsReproducibleForASeed) {
  const DataLoaderOptions o{.batch_size = 4, .shuffle = true, .seed = 42};
  Loader a(numbers(50), identity, o), b(numbers(50), identity, o);
  for (int epoch = 0; epoch < 3; ++epoch) EXPECT_EQ(collect(a.iter()), collect(b.iter())) << "epoch " << epoch;
  // iter_epoch neither depends on nor advances the counter.
  EXPECT_EQ(a.epoch(), 3u);
  EXPECT_EQ(collect(a.iter_epoch(1)), collect(b.iter_epoch(1)));
  EXPECT_EQ(a.epoch(), 3u);
}

TEST(DataLoader, ShuffleDiffersBetweenSeedsAndEpochs) {
  Loader s1(numbers(100), identity, {.batch_size = 10, .shuffle = true, .seed = 1});
  Loader s2(numbers(100), identity, {.batch_size = 10, .shuffle = true, .seed = 2});
  Loader plain(numbers(100), identity, {.batch_size = 10});
  const auto e0 = collect(s1.iter_epoch(0));
  EXPECT_NE(e0, collect(s2.iter_epoch(0)));
  EXPECT_NE(e0, collect(s1.iter_epoch(1)));
  EXPECT_NE(e0, collect(plain.iter()));
  // Successive iter() calls run successive epochs.
  EXPECT_EQ(collect(s1.iter()), e0);
  EXPECT_EQ(collect(s1.iter()), collect(s1.iter_epoch(1)));
}

TEST(DataLoader, EveryItemExactlyOncePerEpoch) {
  for (std::size_t workers : {0u, 1u, 4u}) {
    Loader loader(numbers(103), identity, {.batch_size = 7, .shuffle = true, .seed = 9, .num_workers = workers});
    for (int epoch = 0; epoch < 3; ++epoch) {
      std::vector<int> seen;
      for (auto& b : loader.iter()) seen.insert(seen.end(), b.begin(), b.end());
      std::sort(seen.begin(), seen.end());
      std::vector<int> all(103);
      std::iota(all.begin(), all.end(), 0);
      EXPECT_EQ(seen, all) << workers << " workers, epoch " << epoch;
    }
  }
}

TEST(DataLoader, ShardsAreDisjointAndCoverTheEpochEachEpochReshuffled) {
  // 4 shards of 40 items: each rank sees 10, together all 40, once each.
  std::vector<std::vector<int>> previous(4);
  for (std::size_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<int> seen;
    for (std::size_t shard = 0; shard < 4; ++shard) {
      Loader loader(numbers(40), identity,
                    {.batch_size = 3, .shuffle = true, .seed = 5, .num_shards = 4, .shard = shard});
      EXPECT_EQ(loader.num_items(), 10u);
      EXPECT_EQ(loader.num_batches(), 4u);
      std::vector<int> mine;
      for (auto& b : loader.iter_epoch(epoch)) mine.insert(mine.end(), b.begin(), b.end());
      EXPECT_EQ(mine.size(), 10u);
      if (epoch > 0) {
        EXPECT_NE(mine, previous[shard]) << "shard " << shard << " was not reshuffled";
      }
      previous[shard] = mine;
      seen.insert(seen.end(), mine.begin(), mine.end());
    }
    std::sort(seen.begin(), seen.end());
    std::vector<int> all(40);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(seen, all) << "epoch " << epoch;
  }
}

TEST(DataLoader, ShardsOfAnUnevenDatasetHaveEqualSizes) {
  // 10 items over 4 shards, unshuffled: dealt 0,4,8 / 1,5,9 / 2,6,(0) / 3,7,(1)
  // (the order wraps around), or with drop_last 0,4 / 1,5 / 2,6 / 3,7.
  const std::vector<std::vector<int>> wrapped{{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}};
  const std::vector<std::vector<int>> dropped{{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (std::size_t shard = 0; shard < 4; ++shard) {
    Loader wrap(numbers(10), identity, {.batch_size = 8, .num_shards = 4, .shard = shard});
    EXPECT_EQ(collect(wrap.iter()), (std::vector<Batch>{wrapped[shard]}));
    Loader drop(numbers(10), identity, {.batch_size = 2, .drop_last = true, .num_shards = 4, .shard = shard});
    EXPECT_EQ(collect(drop.iter()), (std::vector<Batch>{dropped[shard]}));
  }
  // More shards than items: every shard still gets one (wrapped) item.
  Loader tiny(numbers(3), identity, {.batch_size = 1, .num_shards = 5, .shard = 4});
  EXPECT_EQ(collect(tiny.iter()), (std::vector<Batch>{{1}}));
}

TEST(DataLoader, RefusesAShardOutsideTheShardCount) {
  EXPECT_NE(error_message([] {
              Loader(numbers(4), identity, {.num_shards = 2, .shard = 2});
            }).find("shard must be below num_shards"),
            std::string::npos);
  EXPECT_NE(
      error_message([] { Loader(numbers(4), identity, {.num_shards = 0}); }).find("num_shards must be at least 1"),
      std::string::npos);
}

// Batches finish out of order (later ones sleep less); the order must not show it.
Batch slow_identity(std::vector<int> items) {
  const int first = items.empty() ? 0 : items.front();
  std::this_thread::sleep_for(std::chrono::microseconds(((97 - first) * 37) % 500));
  return items;
}

TEST(DataLoader, WorkersGiveTheSingleThreadedOrder) {
  Loader single(numbers(97), slow_identity, {.batch_size = 5, .shuffle = true, .seed = 7});
  const auto expected = collect(single.iter_epoch(2));
  for (std::size_t workers : {1u, 2u, 4u, 8u}) {
    Loader multi(numbers(97), slow_identity,
                 {.batch_size = 5, .shuffle = true, .seed = 7, .num_workers = workers, .prefetch_per_worker = 1});
    EXPECT_EQ(collect(multi.iter_epoch(2)), expected) << workers << " workers";
  }
}

TEST(DataLoader, WorkersPrefetchABoundedNumberOfBatches) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  Loader loader(numbers(1000),
                [calls](std::vector<int> items) {
                  ++*calls;
                  return items;
                },
                {.batch_size = 1, .num_workers = 2, .prefetch_per_worker = 3});
  {
    auto epoch = loader.iter();
    auto it = epoch.begin();
    EXPECT_EQ(*it, Batch{0});
    // The workers run ahead while the consumer is busy elsewhere (wait for
    // the full window, generously, so a loaded machine does not fail this)...
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (calls->load() < 1 + 6 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(calls->load(), 1 + 6);
    // ...but stop at one consumed plus workers * prefetch ahead.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(calls->load(), 1 + 6);
  }
  EXPECT_LE(calls->load(), 1 + 6);
}

TEST(DataLoader, EarlyBreakStopsWorkers) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  Loader loader(numbers(100000),
                [calls](std::vector<int> items) {
                  ++*calls;
                  return items;
                },
                {.batch_size = 10, .shuffle = true, .num_workers = 4});
  int seen = 0;
  for (auto& b : loader.iter()) {
    EXPECT_EQ(b.size(), 10u);
    if (++seen == 2) break;
  }
  // The epoch was destroyed at the end of the loop: its threads are joined, and
  // they built no more than the two consumed batches plus the prefetch window.
  const int after = calls->load();
  EXPECT_LE(after, 2 + 4 * 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(calls->load(), after);
}

TEST(DataLoader, WorkerExceptionIsRethrownAtItsBatch) {
  for (std::size_t workers : {0u, 1u, 3u}) {
    Loader loader(numbers(30),
                  [](std::vector<int> items) {
                    if (std::find(items.begin(), items.end(), 7) != items.end())
                      throw burn::Error("test_batcher", "item 7 is poisoned");
                    return items;
                  },
                  {.batch_size = 3, .num_workers = workers});
    std::vector<Batch> got;
    const auto msg = error_message([&] {
      for (auto& b : loader.iter()) got.push_back(b);
    });
    EXPECT_EQ(msg, "[test_batcher] item 7 is poisoned") << workers << " workers";
    EXPECT_EQ(got, (std::vector<Batch>{{0, 1, 2}, {3, 4, 5}})) << workers << " workers";
  }
}

TEST(DataLoader, OtherExceptionTypesSurviveTheThreadHop) {
  Loader loader(numbers(8), [](std::vector<int>) -> Batch { throw std::out_of_range("boom"); },
                {.batch_size = 2, .num_workers = 2});
  auto epoch = loader.iter();
  EXPECT_THROW(epoch.next(), std::out_of_range);
  // After a failure the epoch is over.
  EXPECT_FALSE(epoch.next().has_value());
}

TEST(DataLoader, NextAndSize) {
  Loader loader(numbers(5), identity, {.batch_size = 2, .num_workers = 2});
  auto epoch = loader.iter();
  EXPECT_EQ(epoch.size(), 3u);
  EXPECT_EQ(epoch.next(), (Batch{0, 1}));
  EXPECT_EQ(epoch.next(), (Batch{2, 3}));
  EXPECT_EQ(epoch.next(), (Batch{4}));
  EXPECT_FALSE(epoch.next().has_value());
  EXPECT_FALSE(epoch.next().has_value());
}

TEST(DataLoader, EpochOutlivesTheLoader) {
  std::optional<Loader::Epoch> epoch;
  {
    Loader loader(numbers(6), identity, {.batch_size = 4, .num_workers = 2});
    epoch.emplace(loader.iter());
  }
  EXPECT_EQ(sizes(collect(std::move(*epoch))), (std::vector<std::size_t>{4, 2}));
}

TEST(DataLoader, RejectsBadOptions) {
  EXPECT_CONTAINS(error_message([] { Loader l(numbers(3), identity, {.batch_size = 0}); }),
                  "[DataLoader] batch_size must be at least 1");
  EXPECT_CONTAINS(error_message([] { Loader l(nullptr, identity); }), "dataset is null");
  EXPECT_CONTAINS(error_message([] { Loader l(numbers(3), nullptr); }), "batcher is empty");
  EXPECT_CONTAINS(error_message([] { Loader l(numbers(3), identity, {.num_workers = 1, .prefetch_per_worker = 0}); }),
                  "prefetch_per_worker");
}

TEST(Dataset, InMemoryGetChecksTheIndex) {
  InMemoryDataset<int> d({4, 5});
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.get(1), 5);
  EXPECT_CONTAINS(error_message([&] { d.get(2); }),
                  "[InMemoryDataset::get] index 2 is out of range for a dataset of 2 items");
}

TEST(DataLoader, DatasetErrorReachesTheConsumer) {
  // A dataset that is shorter than it claims: get() throws inside a worker.
  struct Liar final : burn::data::Dataset<int> {
    std::size_t size() const override { return 6; }
    int get(std::size_t i) const override {
      if (i >= 4) burn::data::detail::throw_index_out_of_range("Liar::get", i, 4);
      return static_cast<int>(i);
    }
  };
  Loader loader(std::make_shared<const Liar>(), identity, {.batch_size = 2, .num_workers = 2});
  EXPECT_CONTAINS(error_message([&] { collect(loader.iter()); }), "[Liar::get] index 4 is out of range");
}

}  // namespace
