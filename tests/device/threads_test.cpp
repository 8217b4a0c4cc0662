// Intra-op thread count: flex exposes and changes it (BURN_NUM_THREADS at
// start-up, Device::set_num_threads later); ndarray is serial and says so.
#include "device_support.hpp"

#include <burn_test.hpp>

namespace {

using burn::Device;
using burn::Tensor;
using burn::device_tests::require;

#if BURN_HAS_FLEX
TEST(Threads, FlexChangesItsThreadCountWithoutChangingResults) {
  const Device flex = Device::flex();
  const std::size_t original = flex.num_threads();
  ASSERT_GE(original, 1u);
  flex.seed(7);
  // Large enough to cross the parallel grain size.
  const auto x = Tensor<2>::random({512, 512}, burn::Distribution::Default, flex);
  const auto before = x.sum_dim(1).to_data();
  flex.set_num_threads(1);
  EXPECT_EQ(flex.num_threads(), 1u);
  x.sum_dim(1).to_data().assert_eq(before);  // blocked reductions are thread-count independent
  flex.set_num_threads(3);
  EXPECT_EQ(flex.num_threads(), 3u);
  x.sum_dim(1).to_data().assert_eq(before);
  flex.set_num_threads(original);
  EXPECT_EQ(flex.num_threads(), original);
  burn::testing::expect_op_error([&] { flex.set_num_threads(0); }, "Device::set_num_threads", "at least 1");
}

TEST(Threads, BurnNumThreadsSizesTheFlexPool) {
  // The child is a fresh copy of this binary started with the environment set
  // here: the test binary creates its devices during static initialisation,
  // so the variable must exist before the process starts, as for a user.
  {
    burn::device_tests::ScopedEnv env("BURN_NUM_THREADS", "1");
    BURN_EXPECT_IN_FRESH_PROCESS(
        [] { require(Device::flex().num_threads() == 1, "BURN_NUM_THREADS=1 did not give one thread"); });
  }
  // A bad value is checked by the ctest flex_rejects_bad_thread_count: this
  // binary creates devices during static initialisation, where a throw aborts.
}
#endif

#if BURN_HAS_NDARRAY
TEST(Threads, NdArrayIsSerialAndRefusesAnotherCount) {
  const Device nd = Device::ndarray();
  EXPECT_EQ(nd.num_threads(), 1u);
  burn::testing::expect_op_error([&] { nd.set_num_threads(4); }, "Device::set_num_threads", "fixed number of threads");
}
#endif

}  // namespace
