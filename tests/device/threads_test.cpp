// Intra-op thread count: flex exposes and changes it (BURN_NUM_THREADS at
// start-up, Device::set_num_threads later); ndarray is serial and says so.
#include "device_support.hpp"

#include <burn_test.hpp>

#include <algorithm>
#include <string>
#include <thread>

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
  // Counts no machine can run, and ones an int (OpenMP's, ATen's) cannot
  // hold, are refused; the pool keeps its size.
  const std::size_t limit = std::max<std::size_t>(256, 4 * std::thread::hardware_concurrency());
  for (const std::size_t n : {limit + 1, std::size_t{100000}, std::size_t{4294967297}}) {
    burn::testing::expect_op_error([&] { flex.set_num_threads(n); }, "Device::set_num_threads",
                                   "more than the limit of " + std::to_string(limit));
    EXPECT_EQ(flex.num_threads(), original);
  }
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
