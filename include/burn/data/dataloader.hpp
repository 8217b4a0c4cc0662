// DataLoader: batches of a dataset, optionally shuffled with a seed, prepared
// ahead by worker threads while the consumer trains.
//
//   DataLoader<MnistItem, MnistBatch> loader(dataset, MnistBatcher{device},
//       {.batch_size = 64, .shuffle = true, .seed = 42, .num_workers = 2});
//   for (std::size_t epoch = 0; epoch < 10; ++epoch)
//     for (auto& batch : loader.iter()) train_step(batch);
#pragma once

#include <algorithm>
#include <burn/data/batch_queue.hpp>
#include <burn/data/dataset.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace burn::data {

namespace detail {
/// 0..size-1, shuffled when asked by a generator seeded from (seed, epoch);
/// identical on every platform and standard library.
std::vector<std::size_t> epoch_order(std::size_t size, bool shuffle, std::uint64_t seed, std::uint64_t epoch);
/// Shard `shard` of `num_shards` of an epoch's order, dealt round-robin
/// (items shard, shard + num_shards, ...). Every shard gets the same count:
/// with `drop_tail` the order is cut to a multiple of num_shards (disjoint
/// shards), else it wraps around to the next multiple (a few items twice).
std::vector<std::size_t> shard_order(const std::vector<std::size_t>& order, std::size_t shard, std::size_t num_shards,
                                     bool drop_tail);
/// How many items each of `num_shards` shards of `size` items has.
std::size_t shard_size(std::size_t size, std::size_t num_shards, bool drop_tail);
/// "[DataLoader] <what>"
[[noreturn]] void throw_bad_options(const char* what);
}  // namespace detail

struct DataLoaderOptions {
  std::size_t batch_size = 1;
  /// Shuffle the items each epoch; the order depends only on (seed, epoch).
  bool shuffle = false;
  std::uint64_t seed = 0;
  /// Drop the last batch when it has fewer than batch_size items.
  bool drop_last = false;
  /// Threads preparing batches ahead; 0 prepares each batch on the consumer's
  /// thread when it is asked for. The batch order never depends on this.
  std::size_t num_workers = 0;
  /// Batches each worker may have ready ahead of the consumer (>= 1).
  std::size_t prefetch_per_worker = 2;
  /// Data parallelism: this process reads shard `shard` of `num_shards`
  /// (its rank and the world size). Each epoch's order, the same on every
  /// rank for one seed, is dealt out round-robin, so the shards are disjoint
  /// and reshuffled every epoch. Every shard gets the same number of items,
  /// hence of batches, so the ranks' collectives line up: when the dataset
  /// does not divide evenly, the order wraps around to fill the last round
  /// (as PyTorch's DistributedSampler does), or with drop_last the
  /// incomplete round is dropped.
  std::size_t num_shards = 1;
  std::size_t shard = 0;
};

/// Turns a batch's items into a batch (e.g. tensors on a device). Called from
/// worker threads when num_workers > 0.
template <class Item, class Batch>
using Batcher = std::function<Batch(std::vector<Item>)>;

template <class Item, class Batch>
class DataLoader {
 public:
  /// One pass over the dataset; its worker threads stop (and are joined) when
  /// it is destroyed, also when the loop is left early.
  using Epoch = detail::BatchQueue<Batch>;

  DataLoader(std::shared_ptr<const Dataset<Item>> dataset, Batcher<Item, Batch> batcher, DataLoaderOptions options = {})
      : dataset_(std::move(dataset)), batcher_(std::move(batcher)), options_(options) {
    if (!dataset_) detail::throw_bad_options("the dataset is null");
    if (!batcher_) detail::throw_bad_options("the batcher is empty");
    if (options_.batch_size == 0) detail::throw_bad_options("batch_size must be at least 1");
    if (options_.prefetch_per_worker == 0) detail::throw_bad_options("prefetch_per_worker must be at least 1");
    if (options_.num_shards == 0) detail::throw_bad_options("num_shards must be at least 1");
    if (options_.shard >= options_.num_shards)
      detail::throw_bad_options("shard must be below num_shards (a rank below the world size)");
  }

  const DataLoaderOptions& options() const noexcept { return options_; }
  /// The items of one epoch (of this shard).
  std::size_t num_items() const {
    if (options_.num_shards == 1) return dataset_->size();
    return detail::shard_size(dataset_->size(), options_.num_shards, options_.drop_last);
  }
  std::size_t num_batches() const {
    const std::size_t n = num_items(), b = options_.batch_size;
    // Not (n + b - 1) / b: that wraps around to 0 batches for a batch size
    // near the size_t limit.
    return n / b + (!options_.drop_last && n % b != 0 ? 1 : 0);
  }
  /// The epoch the next iter() will run.
  std::size_t epoch() const noexcept { return next_epoch_; }

  /// The next epoch (0, 1, 2, ... on successive calls), reshuffled from
  /// (seed, epoch) when shuffling.
  Epoch iter() { return iter_epoch(next_epoch_++); }
  /// A given epoch, without advancing the counter: the same epoch always
  /// yields the same batches.
  Epoch iter_epoch(std::size_t epoch) const {
    auto all = detail::epoch_order(dataset_->size(), options_.shuffle, options_.seed, epoch);
    if (options_.num_shards > 1)
      all = detail::shard_order(all, options_.shard, options_.num_shards, options_.drop_last);
    auto order = std::make_shared<const std::vector<std::size_t>>(std::move(all));
    const std::size_t batch_size = options_.batch_size;
    const std::size_t total = order->size();
    // Captures shared state by value so the epoch outlives the loader safely.
    auto make_batch = [dataset = dataset_, batcher = batcher_, order, batch_size, total](std::size_t k) {
      const std::size_t begin = k * batch_size;  // < total: k < num_batches()
      const std::size_t end = begin + std::min(batch_size, total - begin);
      std::vector<Item> items;
      items.reserve(end - begin);
      for (std::size_t i = begin; i < end; ++i) items.push_back(dataset->get((*order)[i]));
      return batcher(std::move(items));
    };
    return Epoch(num_batches(), std::move(make_batch), options_.num_workers,
                 options_.num_workers * options_.prefetch_per_worker);
  }

 private:
  std::shared_ptr<const Dataset<Item>> dataset_;
  Batcher<Item, Batch> batcher_;
  DataLoaderOptions options_;
  std::size_t next_epoch_ = 0;
};

}  // namespace burn::data
