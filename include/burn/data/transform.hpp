// Datasets built from another dataset: a contiguous part (e.g. a train /
// validation split) and a per-item mapping (e.g. augmentation), as in Burn.
#pragma once

#include <burn/data/dataset.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>

namespace burn::data {

namespace detail {
/// "[PartialDataset] range [start, end) is outside a dataset of n items"
[[noreturn]] void throw_bad_partial_range(std::size_t start, std::size_t end, std::size_t size);
/// "[op] the inner dataset is null"
[[noreturn]] void throw_null_inner(const char* op);
}  // namespace detail

/// Items [start, end) of another dataset, renumbered from 0.
template <class Item>
class PartialDataset final : public Dataset<Item> {
 public:
  PartialDataset(std::shared_ptr<const Dataset<Item>> inner, std::size_t start, std::size_t end)
      : inner_(std::move(inner)), start_(start), end_(end) {
    if (!inner_) detail::throw_null_inner("PartialDataset");
    if (start > end || end > inner_->size()) detail::throw_bad_partial_range(start, end, inner_->size());
  }
  std::size_t size() const override { return end_ - start_; }
  Item get(std::size_t index) const override {
    if (index >= size()) detail::throw_index_out_of_range("PartialDataset::get", index, size());
    return inner_->get(start_ + index);
  }

 private:
  std::shared_ptr<const Dataset<Item>> inner_;
  std::size_t start_, end_;
};

/// Another dataset's items passed through `map` on each get (so from worker
/// threads too: `map` must be safe to call concurrently).
template <class In, class Out>
class MapperDataset final : public Dataset<Out> {
 public:
  MapperDataset(std::shared_ptr<const Dataset<In>> inner, std::function<Out(In)> map)
      : inner_(std::move(inner)), map_(std::move(map)) {
    if (!inner_) detail::throw_null_inner("MapperDataset");
  }
  std::size_t size() const override { return inner_->size(); }
  Out get(std::size_t index) const override { return map_(inner_->get(index)); }

 private:
  std::shared_ptr<const Dataset<In>> inner_;
  std::function<Out(In)> map_;
};

}  // namespace burn::data
