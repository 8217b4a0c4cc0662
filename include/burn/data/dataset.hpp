// Datasets: random access to items by index, as in Burn's burn-dataset.
#pragma once

#include <burn/error.hpp>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace burn::data {

/// A finite, indexable collection of items.
///
/// `get` is called concurrently from DataLoader worker threads, so it must be
/// safe to call from several threads at once (a const method that only reads
/// is).
template <class Item>
class Dataset {
 public:
  using item_type = Item;
  virtual ~Dataset() = default;
  virtual std::size_t size() const = 0;
  /// The item at `index`; throws burn::Error when index >= size().
  virtual Item get(std::size_t index) const = 0;
  bool empty() const { return size() == 0; }
};

namespace detail {
/// "[op] index 7 is out of range for a dataset of 5 items"
[[noreturn]] void throw_index_out_of_range(const char* op, std::size_t index, std::size_t size);
}  // namespace detail

/// A dataset whose items all live in memory.
template <class Item>
class InMemoryDataset final : public Dataset<Item> {
 public:
  InMemoryDataset() = default;
  explicit InMemoryDataset(std::vector<Item> items) : items_(std::move(items)) {}

  std::size_t size() const override { return items_.size(); }
  Item get(std::size_t index) const override {
    if (index >= items_.size()) detail::throw_index_out_of_range("InMemoryDataset::get", index, items_.size());
    return items_[index];
  }
  const std::vector<Item>& items() const noexcept { return items_; }

 private:
  std::vector<Item> items_;
};

}  // namespace burn::data
