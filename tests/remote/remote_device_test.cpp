// A remote device against a real burn-server process on 127.0.0.1: ops,
// autodiff, moving tensors, enumeration, memory and the device's services.
// (The conformance and autodiff suites also run on a remote flex device; see
// tests/CMakeLists.txt.)
#include <burn_test.hpp>
#include <server_process.hpp>

#include <cstdlib>
#include <cstring>

#if BURN_HAS_CAPTURE
#include <burn/nn/linear.hpp>
#include <burn/optim/optim.hpp>
#include <burn/trace.hpp>
#endif

namespace {

using namespace burn;
using burn::testing::expect_values;
using burn::testing::ServerProcess;

Device server_device(const ServerProcess& server, const std::string& device = "flex:0") {
  return Device::remote_options(RemoteHost{server.address()}).device(device).init();
}

TEST(RemoteDevice, RunsOpsOnTheServerAndReadsTheResult) {
  ServerProcess server;
  const Device d = server_device(server);
  EXPECT_EQ(d.to_string(), "remote:" + server.address() + "/flex:0");
  EXPECT_EQ(d.type().kind(), DeviceType::Kind::Remote);
  auto a = Tensor<2>::from_data(TensorData(std::vector<float>{1, 2, 3, 4}, {2, 2}), d);
  EXPECT_EQ(a.device(), d);
  auto b = a.matmul(a) + 1.0;
  expect_values(b.to_data(), {8, 11, 16, 23}, {2, 2});
  // Int and bool tensors, reductions, a chain long enough to span batches.
  auto i = Tensor<1, Int>::arange(0, 10, d);
  Tensor<1, Int> acc = i;
  for (int k = 0; k < 40; ++k) acc = acc + 1;
  expect_values(acc.sum().to_data(), {45 + 400}, {1});
  expect_values(i.greater_elem(4).to_data(), {0, 0, 0, 0, 0, 1, 1, 1, 1, 1}, {10});
  d.sync();
}

TEST(RemoteDevice, IsOneDevicePerServerDevice) {
  ServerProcess server({"--device", "flex:0", "--device", "ndarray"});
  const Device flex = server_device(server);
  EXPECT_EQ(server_device(server), flex);
  EXPECT_EQ(Device::parse("remote:" + server.address() + "/flex:0"), flex);
  // The server's first device when none is named.
  EXPECT_EQ(Device::parse("remote:" + server.address()), flex);
  const Device nd = server_device(server, "ndarray:0");
  EXPECT_NE(nd, flex);
  EXPECT_EQ(nd.to_string(), "remote:" + server.address() + "/ndarray:0");
  EXPECT_NE(flex, Device::flex());
}

TEST(RemoteDevice, EnumeratesTheServersDevices) {
  ServerProcess server({"--device", "flex:0", "--device", "ndarray"});
  const RemoteHost host{server.address()};
  const auto listed = host.devices().into_vec();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].to_string(), "remote:" + server.address() + "/flex:0");
  EXPECT_EQ(listed[1].to_string(), "remote:" + server.address() + "/ndarray:0");
  const auto both = Device::enumerate(DeviceType::remote(host) | DeviceType::NdArray).into_vec();
  EXPECT_EQ(both.size(), 3u);
  // Listing local devices does not reach out to servers.
  for (const auto& dev : Device::enumerate(DeviceFilter{})) EXPECT_NE(dev.type().kind(), DeviceType::Kind::Remote);
}

TEST(RemoteDevice, MovesTensorsBetweenRemoteAndLocalDevices) {
  ServerProcess server;
  const Device remote = server_device(server);
  const std::vector<float> values{0.5f, -1.25f, 3.0f, 7.5f, -0.0f, 1e-3f};
  auto local = Tensor<2>::from_data(TensorData(values, {2, 3}), Device::ndarray());
  auto there = local.to_device(remote);
  EXPECT_EQ(there.device(), remote);
  auto back = (there * 2.0).to_device(Device::flex());
  EXPECT_EQ(back.device(), Device::flex());
  expect_values(back.to_data(), {1.0, -2.5, 6.0, 15.0, 0.0, 2e-3}, {2, 3});
}

TEST(RemoteDevice, KeepsEveryDTypeExact) {
  ServerProcess server;
  const Device d = server_device(server);
  for (DType dtype : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I16, DType::I8,
                      DType::U64, DType::U32, DType::U16, DType::U8, DType::Bool}) {
    ASSERT_TRUE(d.supports_dtype(dtype)) << dtype_name(dtype);
    const TensorData data = TensorData(std::vector<double>{0, 1, 2, 3, 4, 5}, Shape{2, 3}).convert(dtype);
    TensorData round;
    if (is_float(dtype)) round = Tensor<2>::from_data(data, {d, dtype}).to_data();
    else if (dtype == DType::Bool) round = Tensor<2, Bool>::from_data(data, d).to_data();
    else round = Tensor<2, Int>::from_data(data, {d, dtype}).to_data();
    round.assert_eq(data);
  }
}

// Several chunks each way, on flex and on the fused cpu device (whose queued
// results are computed before they are sent): staged upload buffers reused
// from one upload to the next carry nothing over, and a size that is not a
// whole number of chunks ends right.
TEST(RemoteDevice, MovesMultiChunkTensorsExactlyOnFlexAndTheFusedDevice) {
  ServerProcess server({"--device", "flex:0", "--device", "cpu:0"});
  for (const std::string name : {"flex:0", "cpu:0"}) {
    const Device d = server_device(server, name);
    for (const std::size_t n : {std::size_t{3} << 18, (std::size_t{5} << 18) + 7, std::size_t{1} << 17}) {
      std::vector<float> values(n);
      for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>((i * 7919 + n) % 100003);
      auto t = Tensor<1>::from_data(TensorData(values, {n}), d);
      ASSERT_EQ(std::memcmp(t.to_data().bytes().data(), values.data(), n * sizeof(float)), 0) << name << " n=" << n;
      // A result still queued on the fused device when it is read.
      const auto got = (t * 2.0 + 1.0).to_data().to_vec<float>();
      ASSERT_EQ(got.size(), n);
      for (std::size_t i = 0; i < n; i += 4099) ASSERT_EQ(got[i], values[i] * 2 + 1) << name << " at " << i;
      EXPECT_EQ(got[n - 1], values[n - 1] * 2 + 1) << name;
    }
  }
}

#if BURN_HAS_AUTODIFF
TEST(RemoteDevice, DifferentiatesOnTheClientAndComputesOnTheServer) {
  ServerProcess server;
  auto grads_on = [](const Device& base) {
    const Device d = base.autodiff();
    auto w =
        Tensor<2>::from_data(TensorData(std::vector<double>{0.5, -1.0, 2.0, 0.25, 1.5, -0.75}, {2, 3}), {d, DType::F64})
            .require_grad();
    auto x = Tensor<2>::from_data(TensorData(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2}), {d, DType::F64});
    auto loss = activation::softmax(w.matmul(x), 1).log().sum();
    auto g = loss.backward();
    return w.grad(g)->to_data();
  };
  const Device remote = server_device(server);
  EXPECT_TRUE(remote.autodiff().is_autodiff());
  // The server computes with the same flex kernels: the same bits.
  grads_on(remote).assert_eq(grads_on(Device::flex()));
}
#endif

#if BURN_HAS_CAPTURE && BURN_HAS_AUTODIFF
using Tensors = TracedFunction::Tensors;

// A softmax-regression step: w [8, 4], x [6, 8], labels [6, 1]; results the
// new w, the loss, x as it came in and the new w again.
Tensors regression_step(const Tensors& in) {
  auto w = Tensor<2>(in[0]).require_grad();
  const Tensor<2> x(in[1]);
  const Tensor<2, Int> labels(in[2]);
  auto loss = activation::log_softmax(x.matmul(w), 1).gather(1, labels).mean().neg();
  auto grads = loss.backward();
  const auto next = (w.detach() - w.grad(grads)->detach() * 0.5).ref();
  return {next, loss.ref(), in[1], next};
}

Tensors regression_inputs(const Device& d) {
  std::vector<float> w(32), x(48);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5) * 0.1f;
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 5 % 13) - 6) * 0.3f;
  return {Tensor<2>::from_data(TensorData(w, {8, 4}), d).ref(), Tensor<2>::from_data(TensorData(x, {6, 8}), d).ref(),
          Tensor<2, Int>::from_data(TensorData(std::vector<std::int64_t>{0, 3, 1, 2, 3, 0}, {6, 1}), d).ref()};
}

// A traced function on a remote device is a program the server keeps: each
// call is one command, run there op by op (flex) or as the program the
// fusion layer compiled (cpu). Its results have the bits of the same
// function traced on the server's device kind here, step after step.
TEST(RemoteDevice, RunsTracedFunctionsAsProgramsTheServerKeeps) {
  ServerProcess server({"--device", "flex:0", "--device", "cpu:0"});
  const TracedFunction step =
      trace(regression_step, {{Shape{8, 4}, DType::F32}, {Shape{6, 8}, DType::F32}, {Shape{6, 1}, DType::I64}});
  for (const std::string name : {"flex:0", "cpu:0"}) {
    SCOPED_TRACE(name);
    const Device remote = server_device(server, name);
    const Device local = name == "flex:0" ? Device::flex() : Device::cpu();
    Tensors on_remote = regression_inputs(remote), on_local = regression_inputs(local);
    for (int it = 0; it < 3; ++it) {
      const Tensors r = step(on_remote), l = step(on_local);
      ASSERT_EQ(r.size(), 4u);
      for (std::size_t k = 0; k < r.size(); ++k) detail::to_data(r[k]).assert_eq(detail::to_data(l[k]));
      EXPECT_EQ(r[1]->device, remote);
      on_remote[0] = r[0];
      on_local[0] = l[0];
    }
  }
}

// A whole training step with Adam, traced (the optimiser's state and step
// scalars are inputs and results): on the server it gives the bits of the
// same step run here, step after step, and the committed state agrees.
TEST(RemoteDevice, ATracedAdamStepOnTheServerGivesTheLocalBits) {
  ServerProcess server;
  struct Run {
    Device device;
    nn::Linear layer;
    optim::Optimizer adam = optim::AdamConfig{}.init();
    Tensors state;
  };
  const Device remote = server_device(server), local = Device::flex();
  const nn::Linear start = nn::LinearConfig{8, 4}.init(local);
  std::vector<Run> runs;
  for (const Device& d : {remote, local}) {
    Run r{d, start.to_device(d), optim::AdamConfig{}.init(), {}};
    r.state = r.adam.traced_state(r.layer);
    runs.push_back(std::move(r));
  }
  const std::size_t n = 2, ns = runs[1].state.size();  // weight and bias; two moments each
  ASSERT_EQ(ns, 4u);
  const optim::Optimizer& recorder = runs[1].adam;  // the step only reads its configuration
  const auto specimen_of = [&](Run& r) {
    Tensors in = module::tensors_of(r.layer);
    in.insert(in.end(), r.state.begin(), r.state.end());
    in.push_back(r.adam.traced_scalars(0.01, r.layer, r.device));
    Tensors batch = regression_inputs(r.device);
    in.push_back(batch[1]);
    in.push_back(batch[2]);
    return in;
  };
  const TracedFunction step = trace(
      [&](const Tensors& t) -> Tensors {
        const auto m = module::with_tensors(nn::LinearConfig{8, 4}.init(t[0]->device), std::span(t).first(n));
        auto loss = activation::log_softmax(m.forward(Tensor<2>(t[n + ns + 1])), 1)
                        .gather(1, Tensor<2, Int>(t[n + ns + 2]))
                        .mean()
                        .neg();
        auto grads = loss.backward();
        auto [next, next_state] = recorder.traced_step(t[n + ns], m, optim::GradientsParams::from_grads(grads, m),
                                                       std::span(t).subspan(n, ns));
        Tensors out = module::tensors_of(next);
        out.insert(out.end(), next_state.begin(), next_state.end());
        out.push_back(loss.ref());
        return out;
      },
      specs_of(specimen_of(runs[1])));
  for (int it = 0; it < 3; ++it) {
    std::vector<Tensors> outs;
    for (Run& r : runs) {
      const Tensors out = step(specimen_of(r));
      r.layer = module::with_tensors(std::move(r.layer), std::span(out).first(n));
      r.state.assign(out.begin() + static_cast<std::ptrdiff_t>(n), out.end() - 1);
      r.adam.commit_traced(r.layer, r.state);
      outs.push_back(out);
    }
    for (std::size_t k = 0; k < outs[0].size(); ++k) detail::to_data(outs[0][k]).assert_eq(detail::to_data(outs[1][k]));
    EXPECT_EQ(outs[0][0]->device, runs[0].device);
  }
  EXPECT_EQ(runs[0].adam.param_step(runs[0].layer.weight.id()), 3u);
}

// A call the server cannot complete (here: its results would pass the
// session's memory limit) is an error at the next read or sync, naming the
// limit, and the session goes on.
TEST(RemoteDevice, ATracedCallThatFailsOnTheServerIsAnErrorAtTheNextSync) {
  ServerProcess server({"--device", "flex:0", "--max-session-memory", "1"});
  const Device d = server_device(server);
  const TracedFunction widen = trace(
      [](const Tensors& in) -> Tensors {
        const Tensor<1> x(in[0]);
        return {(Tensor<1>::ones({std::size_t{1} << 19}, x.device()) * x).ref()};  // 2 MiB
      },
      {{Shape{1}, DType::F32}});
  const auto x = Tensor<1>::from_floats({2.0}, d);
  const Tensors out = widen({x.ref()});
  burn::testing::expect_error([&] { d.sync(); }, "--max-session-memory");
  expect_values((x + 1.0).to_data(), {3}, {1});
}
#endif

TEST(RemoteDevice, SeedsTheServersGenerator) {
  ServerProcess server;
  const Device d = server_device(server);
  auto draw = [&] {
    d.seed(42);
    return Tensor<1>::random({64}, Distribution::uniform(0.0, 1.0), d).to_data();
  };
  const TensorData first = draw();
  draw().assert_eq(first);
  Device::flex().seed(42);
  Tensor<1>::random({64}, Distribution::uniform(0.0, 1.0), Device::flex()).to_data().assert_eq(first);
}

TEST(RemoteDevice, ForwardsMemoryReportsAndSettings) {
  ServerProcess server;
  const Device d = server_device(server);
  EXPECT_EQ(d.settings(), Device::flex().settings());
  const auto before = d.memory_pool_usage();
  ASSERT_TRUE(before.has_value());
  {
    auto big = Tensor<1>::zeros({1 << 20}, d);  // 4 MiB on the server
    d.sync();
    const auto during = d.memory_pool_usage();
    ASSERT_TRUE(during.has_value());
    EXPECT_GE(during->bytes_in_use, before->bytes_in_use + (4u << 20));
  }
  d.sync();  // the drop travels with the next batch
  const auto after = d.memory_pool_usage();
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->bytes_in_use, before->bytes_in_use);
  EXPECT_TRUE(d.memory_pool_report().has_value());
  d.memory_cleanup();
}

TEST(RemoteDevice, ProfilesOnTheServersClock) {
  ServerProcess server;
  const Device d = server_device(server);
  auto x = Tensor<2>::ones({64, 64}, d);
  auto [y, duration] = d.profile([&] { return x.matmul(x); });
  const auto ticks = duration.resolve().get();
  ASSERT_TRUE(ticks.has_value());
  EXPECT_GT(ticks->duration().count(), 0);
  expect_values(y.slice({{0, 1}, {0, 1}}).to_data(), {64}, {1, 1});
  // Nested windows each get their own measurement, the outer one spanning the inner.
  auto [outer, outer_time] = d.profile([&] {
    auto [inner, inner_time] = d.profile([&] { return x.matmul(x); });
    const auto inner_ticks = inner_time.resolve().get();
    EXPECT_TRUE(inner_ticks.has_value());
    return std::pair{inner + 1.0, inner_ticks};
  });
  const auto outer_ticks = outer_time.resolve().get();
  ASSERT_TRUE(outer_ticks.has_value() && outer.second.has_value());
  EXPECT_GE(outer_ticks->duration(), outer.second->duration());
  expect_values(outer.first.slice({{0, 1}, {0, 1}}).to_data(), {65}, {1, 1});
}

TEST(RemoteDevice, KeepsABoundedNumberOfUnresolvedMeasurements) {
  // A client that profiles and never resolves does not make the server hold
  // every measurement: past kMaxProfileWindows the oldest read as unmeasured.
  ServerProcess server;
  const Device d = server_device(server);
  auto x = Tensor<1>::ones({16}, d);
  std::vector<ProfileDuration> durations;
  for (int i = 0; i < 1030; ++i) {
    auto [y, duration] = d.profile([&] { return x + 1.0; });
    x = y;
    durations.push_back(duration);
  }
  EXPECT_FALSE(durations.front().resolve().get().has_value());
  EXPECT_TRUE(durations.back().resolve().get().has_value());
  expect_values(x.slice({{0, 1}}).to_data(), {1031}, {1});
}

TEST(RemoteDevice, AWindowWhoseWorkFailedOnTheServerReportsTheError) {
  ServerProcess server({"--device", "flex:0", "--max-session-memory", "1"});
  const Device d = server_device(server);
  auto [big, duration] = d.profile([&] { return Tensor<1>::zeros({std::size_t{1} << 20}, d); });  // 4 MiB
  try {
    (void)duration.resolve().get();
    ADD_FAILURE() << "the failed op was not reported";
  } catch (const ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find("--max-session-memory"), std::string::npos) << e.what();
  }
}

#if BURN_HAS_VULKAN
TEST(RemoteDevice, ProfilesOnAServerDevicesOwnClock) {
  // Vulkan has a device clock (timestamp queries); the server measures there.
  ServerProcess server({"--device", "vulkan:0"});
  const Device d = server_device(server, "vulkan:0");
  auto x = Tensor<2>::ones({32, 32}, d);
  auto [y, duration] = d.profile([&] { return x.matmul(x); });
  const auto ticks = duration.resolve().get();
  ASSERT_TRUE(ticks.has_value());
  EXPECT_GT(ticks->duration().count(), 0);
  expect_values(y.slice({{0, 1}, {0, 1}}).to_data(), {32}, {1, 1});
}
#endif

TEST(RemoteDevice, BadAddressesAndMissingServersAreClearErrors) {
  burn::testing::expect_error([] { Device::remote_options(RemoteHost{"nohost"}).init(); }, "host:port");
  burn::testing::expect_error([] { Device::parse("remote"); }, "remote:HOST:PORT");
  // A port nobody listens on (the server's, after it stopped).
  std::string address;
  {
    ServerProcess server;
    address = server.address();
  }
  try {
    Device::remote_options(RemoteHost{address}).timeout(std::chrono::milliseconds(2000)).init();
    ADD_FAILURE() << "connected to a stopped server";
  } catch (const DeviceError& e) {
    EXPECT_EQ(e.kind(), DeviceErrorKind::NotAvailable);
    EXPECT_NE(std::string(e.what()).find(address), std::string::npos) << e.what();
  }
  ServerProcess server;
  burn::testing::expect_error([&] { server_device(server, "cuda:7"); },
                              "no device 'cuda:7' here; this server hosts: flex:0");
}

TEST(RemoteDevice, ATimeoutOutOfRangeIsAClearError) {
  // Refused before connecting: a deadline beyond the clock's range would overflow.
  struct Unset {
    ~Unset() { ::unsetenv("BURN_REMOTE_TIMEOUT_MS"); }
  } unset;
  for (const char* bad : {"0", "86400001", "99999999999999999999", "10s"}) {
    ::setenv("BURN_REMOTE_TIMEOUT_MS", bad, 1);
    burn::testing::expect_error([] { Device::remote_options(RemoteHost{"127.0.0.1:1"}).init(); },
                                "from 1 to 86400000 (a day)");
  }
  ::unsetenv("BURN_REMOTE_TIMEOUT_MS");
  for (const std::chrono::milliseconds bad : {std::chrono::milliseconds(0), std::chrono::milliseconds(-5),
                                              std::chrono::milliseconds(std::chrono::hours(25))}) {
    burn::testing::expect_error([&] { Device::remote_options(RemoteHost{"127.0.0.1:1"}).timeout(bad).init(); },
                                "from 1 to 86400000 (a day)");
  }
}

}  // namespace
