// How Device::cpu() queues and drains: nothing runs before it is needed,
// every documented drain point drains, threads and long loops are safe,
// intermediates of fused groups are never allocated, autodiff works through
// fused chains, errors are raised where the user can act on them, and a
// steady-state loop plans once.
#include <atomic>
#include <burn/activation.hpp>
#include <burn/module/ops.hpp>
#include <cmath>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "fusion_support.hpp"

namespace burn::fusion_test {
namespace {

using fusion::FusionStats;

/// Deterministic host values (no RNG, so both devices get the same bits).
TensorData ramp(std::size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i % 23) - 11) * scale + offset;
  return TensorData(v, {n});
}

/// Five elementwise ops (mul, add, exp, sub, abs) that fuse into one group.
Tensor<1> small_chain(const Tensor<1>& x) { return ((x * 2.0f + 1.0f).exp() - x).abs(); }

TensorData small_chain_on(const Device& d) {
  return small_chain(Tensor<1>::from_data(ramp(37, 0.25f, 0.0f), d)).to_data();
}

TEST(LazyBehaviour, DevicePrintsAsCpu) { EXPECT_EQ(fused_device().to_string(), "cpu:0"); }

TEST(LazyBehaviour, StatsRejectAnotherDevice) {
  try {
    (void)fusion::stats(eager_device());
    FAIL() << "stats of flex:0 did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("flex:0"), std::string::npos) << e.what();
  }
}

TEST(LazyBehaviour, NothingRunsUntilRead) {
  const Device cpu = fused_device();
  auto x = Tensor<1>::from_data(ramp(37, 0.25f, 0.0f), cpu);
  fusion::reset_stats(cpu);
  auto y = small_chain(x);
  FusionStats s = fusion::stats(cpu);
  EXPECT_EQ(s.ops_queued, 5u);
  EXPECT_EQ(s.drains, 0u);
  EXPECT_EQ(s.fused_groups, 0u);
  EXPECT_EQ(s.ops_eager, 0u);

  const TensorData got = y.to_data();
  s = fusion::stats(cpu);
  EXPECT_EQ(s.drains, 1u);
  EXPECT_EQ(s.fused_groups, 1u);
  EXPECT_EQ(s.ops_fused, 5u);
  EXPECT_EQ(bitwise_diff(got, small_chain_on(eager_device())), "");
}

TEST(LazyBehaviour, FlushAndSyncDrain) {
  const Device cpu = fused_device();
  auto x = Tensor<1>::from_data(ramp(37, 0.25f, 0.0f), cpu);
  for (const bool use_sync : {false, true}) {
    fusion::reset_stats(cpu);
    auto y = small_chain(x);
    EXPECT_EQ(fusion::stats(cpu).fused_groups, 0u);
    if (use_sync) cpu.sync();
    else cpu.flush();
    const FusionStats s = fusion::stats(cpu);
    EXPECT_EQ(s.drains, 1u) << (use_sync ? "sync" : "flush");
    EXPECT_EQ(s.fused_groups, 1u) << (use_sync ? "sync" : "flush");
    // The value was computed by the drain: reading it drains nothing more.
    const TensorData got = y.to_data();
    EXPECT_EQ(fusion::stats(cpu).drains, 1u);
    EXPECT_EQ(bitwise_diff(got, small_chain_on(eager_device())), "");
  }
}

TEST(LazyBehaviour, LazyTensorsCrossThreads) {
  const Device cpu = fused_device();
  const TensorData expected = small_chain_on(eager_device());
  auto x = Tensor<1>::from_data(ramp(37, 0.25f, 0.0f), cpu);

  // Queued here, read there.
  auto y = small_chain(x);
  std::optional<TensorData> read_there;
  std::thread([&] { read_there = y.to_data(); }).join();
  ASSERT_TRUE(read_there);
  EXPECT_EQ(bitwise_diff(*read_there, expected), "");

  // Queued there (and left queued), used and read here.
  std::optional<Tensor<1>> queued_there;
  std::thread([&] { queued_there = small_chain(x); }).join();
  ASSERT_TRUE(queued_there);
  const TensorData plus_one = (*queued_there + 1.0f).to_data();
  const TensorData plus_one_flex =
      (small_chain(Tensor<1>::from_data(ramp(37, 0.25f, 0.0f), eager_device())) + 1.0f).to_data();
  EXPECT_EQ(bitwise_diff(plus_one, plus_one_flex), "");
}

TEST(LazyBehaviour, ThreadsQueueingAtOnceGetTheirOwnResults) {
  const Device cpu = fused_device();
  constexpr int kThreads = 4, kRounds = 150;
  std::vector<TensorData> expected;
  for (int t = 0; t < kThreads; ++t)
    expected.push_back(small_chain(Tensor<1>::from_data(ramp(4099, 0.01f * (t + 1), 0.5f), eager_device())).to_data());
  std::atomic<int> wrong{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto x = Tensor<1>::from_data(ramp(4099, 0.01f * (t + 1), 0.5f), cpu);
        for (int r = 0; r < kRounds; ++r)
          if (!bitwise_diff(small_chain(x).to_data(), expected[static_cast<std::size_t>(t)]).empty()) ++wrong;
      } catch (const std::exception&) {
        ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(errors.load(), 0);
}

TEST(LazyBehaviour, LongLoopsWithoutReadsStayBounded) {
  const Device cpu = fused_device();
  auto acc = Tensor<1>::from_data(ramp(1000, 0.0f, 0.0f), cpu);
  fusion::reset_stats(cpu);
  constexpr int kAdds = 10'000;
  for (int i = 0; i < kAdds; ++i) acc = std::move(acc) + 1.0f;
  const FusionStats s = fusion::stats(cpu);
  EXPECT_EQ(s.ops_queued, static_cast<std::uint64_t>(kAdds));
  EXPECT_GT(s.drains, 0u) << "the queue never drained by itself";
  EXPECT_LT(s.drains, static_cast<std::uint64_t>(kAdds) / 8) << "the queue drained (nearly) every op";
  for (float v : acc.to_data().to_vec<float>()) ASSERT_EQ(v, static_cast<float>(kAdds));
}

// t, u and v are only intermediates: the drain happens when the result is
// read, after their handles are gone, so the fused group allocates just the
// output. Flex holds t, u, v and the output at once.
TEST(LazyBehaviour, IntermediatesAreNeverAllocated) {
  constexpr std::size_t kN = std::size_t{4} << 20;  // 4M f32 = 16 MiB
  constexpr std::uint64_t kBytes = kN * sizeof(float);
  auto extra_bytes = [](const Device& d, TensorData& out) {
    auto x = Tensor<1>::from_data(ramp(kN, 0.001f, 0.25f), d);
    d.sync();
    d.memory_cleanup();
    // The allocator caches freed blocks, so "reserved" only grows when more
    // memory is live at once than before: after the run it is the peak.
    const std::uint64_t before = d.memory_pool_usage().value().bytes_reserved;
    std::optional<Tensor<1>> y;
    {
      auto t = x * 2.0f + 1.0f;
      auto u = t.exp();
      auto v = t.sin();
      y = (u * v - t).abs().sqrt().neg();  // 8 elementwise ops in all
    }
    out = y->to_data();
    return d.memory_pool_usage().value().bytes_reserved - before;
  };
  TensorData fused_out, eager_out;
  const std::uint64_t fused = extra_bytes(fused_device(), fused_out);
  const std::uint64_t eager = extra_bytes(eager_device(), eager_out);
  EXPECT_EQ(bitwise_diff(fused_out, eager_out), "");
  EXPECT_LE(fused, kBytes + kBytes / 8) << "cpu allocated more than the output";
  EXPECT_GE(eager, 3 * kBytes) << "flex needed less than expected: this test no longer measures fusion";
  EXPECT_LT(fused, eager);
}

// A group's result that only a later group of the same drain reads gives
// that group its storage: z below (a linear layer with relu, one epilogue
// group) is dead (no handle, no autodiff node) by the time the exp group
// runs, so y is written over z. Flex allocates y while z is alive.
TEST(LazyBehaviour, DeadResultsOfEarlierGroupsGiveTheirStorage) {
  // Not a multiple of 512: flex would give the product's right operand
  // longer rows on an AVX2 CPU (src/backends/flex/matmul.cpp), and that
  // copy's scratch would count below.
  constexpr std::size_t kN = 256;
  constexpr std::uint64_t kBytes = kN * kN * sizeof(float);
  auto extra_bytes = [](const Device& d, TensorData& out) {
    std::vector<float> av(kN * kN), cv(kN);
    for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(static_cast<int>(i % 19) - 9) * 0.01f;
    for (std::size_t i = 0; i < cv.size(); ++i) cv[i] = static_cast<float>(i % 5) * 0.1f;
    auto a = Tensor<2>::from_data(TensorData(av, {kN, kN}), d);
    auto c = Tensor<1>::from_data(TensorData(cv, {kN}), d);
    d.sync();
    d.memory_cleanup();
    const std::uint64_t before = d.memory_pool_usage().value().bytes_reserved;
    std::optional<Tensor<2>> y;
    {
      auto z = burn::activation::relu(a.matmul(a) + c.unsqueeze<2>());  // one group
      y = z.exp() * 0.5f - 1.0f;                                        // a second group, reading z (a handle then)
    }
    out = y->to_data();
    return d.memory_pool_usage().value().bytes_reserved - before;
  };
  TensorData fused_out, eager_out;
  const Device cpu = fused_device();
  fusion::reset_stats(cpu);
  const std::uint64_t fused = extra_bytes(cpu, fused_out);
  EXPECT_EQ(fusion::stats(cpu).fused_groups, 2u) << "the test expects two groups in one drain";
  const std::uint64_t eager = extra_bytes(eager_device(), eager_out);
  const auto f = fused_out.to_vec<float>(), e = eager_out.to_vec<float>();
  ASSERT_EQ(f.size(), e.size());
  for (std::size_t i = 0; i < f.size(); ++i) ASSERT_NEAR(f[i], e[i], 1e-5f * (1.0f + std::abs(e[i]))) << i;
  EXPECT_LE(fused, kBytes + kBytes / 8) << "y did not take z's storage";
  EXPECT_GE(eager, 2 * kBytes) << "flex needed less than expected: this test no longer measures reuse";
}

// Pools queue and run alone at the drain. What one reads last and nobody
// holds is released right after it, so a later result can take the storage
// (one drain holds no more than the same ops drained group by group); a
// tensor the caller holds, or lends to a pool, stays readable.
TEST(LazyBehaviour, QueuedPoolsReleaseWhatTheyReadLastAndKeepHeldTensors) {
  constexpr std::size_t kC = 16, kH = 64;
  constexpr std::uint64_t kBytes = 8 * kC * kH * kH * sizeof(float);
  std::vector<float> av(8 * kC * kH * kH);
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(static_cast<int>(i % 23) - 11) * 0.1f;
  auto run = [&](const Device& d, std::uint64_t& growth) {
    auto a = Tensor<4>::from_data(TensorData(av, {8, kC, kH, kH}), d);
    d.sync();
    d.memory_cleanup();
    const std::uint64_t before = d.memory_pool_usage().value().bytes_reserved;
    std::optional<Tensor<4>> y;
    {
      // Each 3 x 3 pool (stride 1, padding 1) keeps the size: g1 -> p1 -> g2
      // -> p2, kBytes each.
      auto p1 = burn::module::max_pool2d(burn::activation::relu(a * 2.0f), {3, 3}, {1, 1}, {1, 1});
      y = burn::module::max_pool2d(burn::activation::relu(p1 * 3.0f - 0.5f), {3, 3}, {1, 1}, {1, 1});
    }
    const TensorData chain = y->to_data();
    growth = d.memory_pool_usage().value().bytes_reserved - before;
    auto held = burn::activation::relu(a - 0.25f);
    auto pooled = burn::module::avg_pool2d(held, {2, 2}, {2, 2});
    auto again = burn::module::max_pool2d(a, {2, 2}, {2, 2});  // a borrowed handle
    const auto out = std::tuple{chain, pooled.to_data(), again.to_data()};
    // Readable after the drains: the tensors the caller still holds.
    return std::tuple_cat(out, std::tuple{held.to_data(), burn::module::max_pool2d(a, {2, 2}, {2, 2}).to_data()});
  };
  std::uint64_t fused = 0, eager = 0;
  const auto got = run(fused_device(), fused);
  const auto want = run(eager_device(), eager);
  std::get<0>(got).assert_eq(std::get<0>(want));
  std::get<1>(got).assert_eq(std::get<1>(want));
  std::get<2>(got).assert_eq(std::get<2>(want));
  std::get<3>(got).assert_eq(std::get<3>(want));
  std::get<4>(got).assert_eq(std::get<4>(want));
  // g1 and p1; g2 then takes p1's storage and p2 g1's, released after p1
  // read it (held to the end of the drain, p2 would need a third block).
  EXPECT_LE(fused, 2 * kBytes + kBytes / 2) << "g1's storage was not released after p1 read it";
  EXPECT_GE(eager, 3 * kBytes) << "flex needed less than expected: this test no longer measures the release";
}

// A dead result read by two later groups is given only to the last one.
TEST(LazyBehaviour, DeadResultsGoToTheirLastReaderOnly) {
  auto run = [](const Device& d) {
    // 272 rows: products large enough for the epilogue (is_small_product).
    std::vector<float> av(272 * 48);
    for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.05f;
    auto a = Tensor<2>::from_data(TensorData(av, {272, 48}), d);
    std::optional<Tensor<2>> y1, y2;
    {
      auto z = burn::activation::relu(a.matmul(a.transpose()) + 0.25f);  // [272, 272]
      y1 = z.exp() * 0.5f - 1.0f;
      y2 = burn::activation::relu(z.matmul(a) + 1.0f);  // a matmul group after y1's, reading z too
    }
    return std::pair{y1->to_data(), y2->to_data()};
  };
  const Device cpu = fused_device();
  fusion::reset_stats(cpu);
  const auto [f1, f2] = run(cpu);
  EXPECT_EQ(fusion::stats(cpu).fused_groups, 3u) << "the test expects z's readers in two groups";
  const auto [e1, e2] = run(eager_device());
  for (const auto& [f, e] : {std::pair{f1, e1}, std::pair{f2, e2}}) {
    const auto fv = f.to_vec<float>(), ev = e.to_vec<float>();
    ASSERT_EQ(fv.size(), ev.size());
    for (std::size_t i = 0; i < fv.size(); ++i) ASSERT_NEAR(fv[i], ev[i], 1e-4f * (1.0f + std::abs(ev[i]))) << i;
  }
}

// An op that runs at once (integer division is never queued) may overwrite
// an input that a queued op still reads: the queue runs first.
TEST(LazyBehaviour, InPlaceEagerOpsWaitForQueuedReaders) {
  const Device cpu = fused_device();
  const std::vector<std::int64_t> xs{10, 20, 31, -40, 55, 66};
  auto z = Tensor<1, Int>::from_data(TensorData(xs, {6}), cpu);
  cpu.sync();
  auto y1 = z + 1;                // queued: reads z later
  auto y2 = std::move(z).div(3);  // runs now, and may take z's storage
  const auto v1 = y1.to_data().to_vec<std::int64_t>(), v2 = y2.to_data().to_vec<std::int64_t>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(v1[i], xs[i] + 1) << i;
    EXPECT_EQ(v2[i], xs[i] / 3) << i;
  }
}

// The same chain where z stays alive (a handle, then an autodiff node that
// keeps it): its storage must not be taken, and z reads back intact.
TEST(LazyBehaviour, ResultsSomeoneHoldsKeepTheirStorage) {
  const Device cpu = fused_device();
  auto x = Tensor<2>::from_data(TensorData(std::vector<float>{1, -2, 3, -4, 5, -6}, {2, 3}), cpu);
  auto w = Tensor<2>::from_data(TensorData(std::vector<float>{0.5f, -1, 2, 1, 0, -0.5f}, {3, 2}), cpu);
  auto z = x.matmul(w) + 1.0f;
  auto y = z.exp() * 0.5f - 1.0f;
  const auto yv = y.to_data().to_vec<float>();
  const auto zv = z.to_data().to_vec<float>();
  const std::vector<float> expect_z{1 * 0.5f + -2 * 2 + 3 * 0 + 1, 1 * -1 + -2 * 1 + 3 * -0.5f + 1,
                                    -4 * 0.5f + 5 * 2 + -6 * 0 + 1, -4 * -1 + 5 * 1 + -6 * -0.5f + 1};
  ASSERT_EQ(zv.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(zv[i], expect_z[i]) << i;
    EXPECT_FLOAT_EQ(yv[i], std::exp(expect_z[i]) * 0.5f - 1.0f) << i;
  }
  // Under autodiff sin keeps its input for backward: z must survive the
  // drain that computes sin(z) * 2 even though no handle holds it.
  auto grad_of = [](const Device& device) {
    const Device d = device.autodiff();
    auto xs = Tensor<2>::from_data(TensorData(std::vector<float>{1, -2, 3, -4, 5, -6}, {2, 3}), d).require_grad();
    auto ws = Tensor<2>::from_data(TensorData(std::vector<float>{0.5f, -1, 2, 1, 0, -0.5f}, {3, 2}), d);
    auto loss = ((xs.matmul(ws) + 1.0f).sin() * 2.0f).sum();
    return xs.grad(loss.backward()).value().to_data();
  };
  EXPECT_EQ(bitwise_diff(grad_of(cpu), grad_of(eager_device())), "");
}

TEST(LazyBehaviour, AutodiffThroughFusedChainsMatchesFlex) {
  auto grads_on = [](const Device& device) {
    const Device d = device.autodiff();
    std::vector<float> xs(12 * 40), ws(40);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(static_cast<int>(i % 29) - 14) * 0.15f;
    for (std::size_t i = 0; i < ws.size(); ++i) ws[i] = 1.0f - static_cast<float>(i) * 0.05f;
    auto x = Tensor<2>::from_data(TensorData(xs, {12, 40}), d).require_grad();
    auto w = Tensor<1>::from_data(TensorData(ws, {40}), d).require_grad();
    auto h = activation::gelu(x * w.unsqueeze<2>() + 0.5f);
    auto loss = ((h.exp() - x).tanh() * 2.0f + activation::sigmoid(h)).sum();
    auto g = loss.backward();
    return std::vector<TensorData>{loss.to_data(), x.grad(g).value().to_data(), w.grad(g).value().to_data()};
  };
  const Device cpu = fused_device();
  fusion::reset_stats(cpu);
  const auto fused = grads_on(cpu);
  EXPECT_GT(fusion::stats(cpu).fused_groups, 0u);
  const auto eager = grads_on(eager_device());
  const char* names[] = {"loss", "dx", "dw"};
  for (std::size_t i = 0; i < fused.size(); ++i) EXPECT_EQ(bitwise_diff(fused[i], eager[i]), "") << names[i];
}

TEST(LazyBehaviour, ShapeErrorsAreThrownAtTheCall) {
  const Device cpu = fused_device();
  auto a = Tensor<2>::ones({2, 3}, cpu);
  auto b = Tensor<2>::ones({4, 3}, cpu);
  fusion::reset_stats(cpu);
  try {
    auto c = a + b;
    FAIL() << "adding [2, 3] and [4, 3] did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[add]", 0), 0u) << e.what();
  }
  EXPECT_EQ(fusion::stats(cpu).ops_queued, 0u) << "an invalid op entered the queue";
}

TEST(LazyBehaviour, MixingCpuAndFlexTensorsIsAnError) {
  auto a = Tensor<1>::ones({3}, fused_device());
  auto b = Tensor<1>::ones({3}, eager_device());
  try {
    auto c = a + b;
    FAIL() << "adding a cpu and a flex tensor did not throw";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cpu:0"), std::string::npos) << m;
    EXPECT_NE(m.find("flex:0"), std::string::npos) << m;
    EXPECT_NE(m.find("to_device"), std::string::npos) << m;
  }
  // An explicit move works and computes on the destination.
  EXPECT_EQ((a.to_device(eager_device()) + b).to_data().to_vec<float>(), (std::vector<float>{2, 2, 2}));
}

// An op that fails on the data (int division by zero) reports its error at
// the call when it runs eagerly, or at the read when it was queued; either
// way the device keeps working afterwards.
TEST(LazyBehaviour, FailuresOnTheDataAreReported) {
  const Device cpu = fused_device();
  auto a = Tensor<1, Int>::from_ints({6, 7, 8}, cpu);
  auto b = Tensor<1, Int>::from_ints({2, 0, 4}, cpu);
  try {
    auto q = (a / b) + 1;
    (void)q.to_data();
    FAIL() << "integer division by zero was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bitwise_diff(small_chain_on(cpu), small_chain_on(eager_device())), "");
}

TEST(LazyBehaviour, SteadyStateLoopPlansOnce) {
  const Device cpu = fused_device();
  std::vector<float> xs(64 * 128), ws(128), bs(128);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 19) * 0.1f - 0.9f;
  for (std::size_t i = 0; i < ws.size(); ++i) ws[i] = 0.5f + static_cast<float>(i % 5) * 0.1f;
  for (std::size_t i = 0; i < bs.size(); ++i) bs[i] = static_cast<float>(i % 3) * 0.2f;
  auto x = Tensor<2>::from_data(TensorData(xs, {64, 128}), cpu);
  auto w = Tensor<1>::from_data(TensorData(ws, {128}), cpu).unsqueeze<2>();
  auto b = Tensor<1>::from_data(TensorData(bs, {128}), cpu).unsqueeze<2>();
  auto step = [&] {
    auto h = activation::gelu(x * w + b);
    return (h - h.mean_dim(1)).tanh().to_data();  // a reduction splits the work into two groups
  };
  fusion::reset_stats(cpu);
  (void)step();
  (void)step();  // by now every batch of the loop has been seen
  const FusionStats warm = fusion::stats(cpu);
  EXPECT_GT(warm.plans_built, 0u);
  for (int i = 0; i < 10; ++i) (void)step();
  const FusionStats s = fusion::stats(cpu);
  EXPECT_EQ(s.plans_built, warm.plans_built);
  EXPECT_GE(s.plan_cache_hits, warm.plan_cache_hits + 10);
  EXPECT_GT(s.fused_groups, warm.fused_groups);
}

}  // namespace
}  // namespace burn::fusion_test
