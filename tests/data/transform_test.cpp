// PartialDataset and MapperDataset, alone and behind a DataLoader.
#include <gtest/gtest.h>

#include <burn/data/dataloader.hpp>
#include <burn/data/transform.hpp>
#include <numeric>
#include <string>

#include "temp_dir.hpp"

namespace {

using burn::data::Dataset;
using burn::data::InMemoryDataset;
using burn::data::MapperDataset;
using burn::data::PartialDataset;
using burn::testing::error_message;

std::shared_ptr<const Dataset<int>> number_dataset(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return std::make_shared<const InMemoryDataset<int>>(std::move(v));
}

TEST(PartialDataset, SplitsIntoTrainAndValidation) {
  auto all = number_dataset(10);
  PartialDataset<int> train(all, 0, 8), valid(all, 8, 10);
  EXPECT_EQ(train.size(), 8u);
  EXPECT_EQ(valid.size(), 2u);
  EXPECT_EQ(train.get(7), 7);
  EXPECT_EQ(valid.get(0), 8);
  EXPECT_EQ(valid.get(1), 9);
  EXPECT_TRUE(PartialDataset<int>(all, 4, 4).empty());
  EXPECT_CONTAINS(error_message([&] { valid.get(2); }), "[PartialDataset::get] index 2 is out of range");
}

TEST(PartialDataset, RejectsBadRanges) {
  EXPECT_CONTAINS(error_message([] { PartialDataset<int> p(number_dataset(5), 3, 10); }),
                  "[PartialDataset] range [3, 10) is outside a dataset of 5 items");
  EXPECT_CONTAINS(error_message([] { PartialDataset<int> p(number_dataset(5), 4, 2); }), "range [4, 2)");
  EXPECT_CONTAINS(error_message([] { PartialDataset<int> p(nullptr, 0, 0); }),
                  "[PartialDataset] the inner dataset is null");
}

TEST(MapperDataset, MapsEachItemOnGet) {
  MapperDataset<int, std::string> strings(number_dataset(3),
                                          [](int i) { return std::string(static_cast<std::size_t>(i), 'x'); });
  EXPECT_EQ(strings.size(), 3u);
  EXPECT_EQ(strings.get(2), "xx");
  EXPECT_CONTAINS(error_message([&] { strings.get(3); }), "index 3 is out of range");
  EXPECT_CONTAINS(error_message([] { MapperDataset<int, int> m(nullptr, [](int i) { return i; }); }),
                  "[MapperDataset] the inner dataset is null");
}

TEST(MapperDataset, FeedsADataLoaderWithWorkers) {
  auto squares = std::make_shared<const MapperDataset<int, int>>(
      std::make_shared<const PartialDataset<int>>(number_dataset(10), 2, 7), [](int i) { return i * i; });
  burn::data::DataLoader<int, std::vector<int>> loader(squares, [](std::vector<int> items) { return items; },
                                                       {.batch_size = 2, .num_workers = 2});
  std::vector<int> seen;
  for (auto& b : loader.iter()) seen.insert(seen.end(), b.begin(), b.end());
  EXPECT_EQ(seen, (std::vector<int>{4, 9, 16, 25, 36}));
}

}  // namespace
