// Kind-checked casts, literal reshapes of empty dims, and empty profile
// durations: edges of the API surface that need a clear answer.
#include <burn_test.hpp>

using burn::Tensor;
using burn::testing::all_devices;
using burn::testing::expect_error;

TEST(ConversionEdge, CastToAnotherKindIsAClearError) {
  for (const auto& device : all_devices()) {
    auto t = Tensor<1>::ones({3}, device);
    expect_error([&] { (void)t.cast(burn::DType::I32); }, "[cast] dtype i32 is not a Float dtype");
    auto i = Tensor<1, burn::Int>::ones({3}, device);
    expect_error([&] { (void)i.cast(burn::DType::F32); }, "[cast] dtype f32 is not a Int dtype");
    EXPECT_EQ(t.to_int().cast(burn::DType::I32).dtype(), burn::DType::I32);
  }
}

TEST(ConversionEdge, FlattenAndArrayReshapeTakeSizesLiterally) {
  for (const auto& device : all_devices()) {
    auto empty = Tensor<3>::zeros({3, 0, 2}, device);
    EXPECT_EQ(empty.flatten<2>(0, 1).shape(), (burn::Shape{0, 2}));
    EXPECT_EQ(empty.flatten<1>(0, 2).shape(), (burn::Shape{0}));
    EXPECT_EQ(empty.reshape(std::array<std::size_t, 2>{0, 6}).shape(), (burn::Shape{0, 6}));
    auto t = Tensor<2>::ones({2, 3}, device);
    expect_error([&] { (void)t.flatten<1>(1, 0); }, "[flatten]");
    expect_error([&] { (void)t.reshape(std::array<std::size_t, 2>{4, 2}); }, "[reshape]");
  }
}

TEST(ConversionEdge, EmptyProfileDurationRefusesToResolve) {
  burn::ProfileDuration placeholder;
  expect_error([&] { (void)placeholder.resolve(); }, "[ProfileDuration::resolve]");
}

TEST(ConversionEdge, ParseErrorsQuoteTheText) {
  expect_error([] { (void)burn::Device::parse("flex:3"); }, "'flex:3'");
  expect_error([] { (void)burn::Device::parse("cuda:1"); }, "'cuda:1'");
}
