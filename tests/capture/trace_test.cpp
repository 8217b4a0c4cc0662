// burn::trace: a training step recorded once on the capture device and
// replayed on every device gives the eager step's results bit for bit
// (the same operations in the same order on the same backend; on CUDA,
// whose cuDNN algorithms may sum in any order, within 1e-5), draws
// random numbers anew, leaves its inputs intact, and refuses bad calls with
// errors that say what to do.
#include <burn/activation.hpp>
#include <burn/burn.hpp>
#include <burn/module/ops.hpp>
#include <burn/nn/linear.hpp>
#include <burn/optim/optim.hpp>
#include <burn/trace.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#include "burn_test.hpp"

#if BURN_HAS_CPU
#include "fusion/stats.hpp"
#endif

namespace burn {
namespace {

using Tensors = TracedFunction::Tensors;

TensorData values(const Shape& shape, float scale, std::uint32_t seed) {
  std::vector<float> v(shape.num_elements());
  std::uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 0.5f);
  }
  return TensorData(v, shape);
}

// A two-layer MLP's SGD step: relu, -mean(gather(log_softmax)), backward,
// p - 0.05 grad. Inputs w1 [8, 16], b1 [16], w2 [16, 4], x [6, 8] and
// labels [6, 1] (i64); results the new w1, b1, w2 and the loss.
Tensors mlp_step(const Tensors& in) {
  Tensor<2> w1(in[0]), w2(in[2]), x(in[3]);
  Tensor<1> b1(in[1]);
  Tensor<2, Int> labels(in[4]);
  w1 = w1.require_grad();
  b1 = b1.require_grad();
  w2 = w2.require_grad();
  auto h = activation::relu(module::linear(x, w1, b1));
  auto loss = activation::log_softmax(h.matmul(w2), 1).gather(1, labels).mean().neg();
  auto grads = loss.backward();
  auto update = [&](const auto& p) { return (p.detach() - p.grad(grads)->detach() * 0.05).ref(); };
  return {update(w1), update(b1), update(w2), loss.ref()};
}

std::vector<ir::TensorSpec> mlp_specs() {
  return {{Shape{8, 16}, DType::F32},
          {Shape{16}, DType::F32},
          {Shape{16, 4}, DType::F32},
          {Shape{6, 8}, DType::F32},
          {Shape{6, 1}, DType::I64}};
}

Tensors mlp_inputs(const Device& d) {
  std::vector<std::int64_t> labels{0, 3, 1, 2, 3, 0};
  return {Tensor<2>::from_data(values(Shape{8, 16}, 0.8f, 1), d).ref(),
          Tensor<1>::from_data(TensorData(std::vector<float>(16, 0.01f), {16}), d).ref(),
          Tensor<2>::from_data(values(Shape{16, 4}, 0.8f, 2), d).ref(),
          Tensor<2>::from_data(values(Shape{6, 8}, 2.0f, 3), d).ref(),
          Tensor<2, Int>::from_data(TensorData(labels, {6, 1}), d).ref()};
}

std::vector<float> floats(const detail::TensorRef& t) { return detail::to_data(t).convert(DType::F32).to_vec<float>(); }

// Runs `steps` steps of `fn` eagerly on d.autodiff() and traced on d, each
// from `start`: every result of every step must have the same bits. The
// first `state` results feed the next step in place of the first inputs
// (the parameters); the last result is the loss, returned step by step.
std::vector<float> expect_traced_equals_eager(const TracedFunction::Function& fn, const TracedFunction& traced_fn,
                                              const Tensors& start, std::size_t state, int steps) {
  const Device d = start[0]->device;
  Tensors eager = start, traced = start;
  std::vector<float> losses;
  for (int it = 0; it < steps; ++it) {
    // The eager step on the device with autodiff; the traced one on the
    // plain device, as a caller would run it.
    Tensors on_grad_device;
    for (const auto& t : eager) on_grad_device.push_back(detail::with_context(t, d.autodiff()));
    const Tensors e = fn(on_grad_device);
    const Tensors t = traced_fn(traced);
    EXPECT_EQ(e.size(), t.size());
    for (std::size_t k = 0; k < e.size() && k < t.size(); ++k) {
      SCOPED_TRACE(::testing::Message() << "step " << it << ", result " << k);
      const std::vector<float> want = floats(e[k]), got = floats(t[k]);
      if (d.type() != DeviceType::Cuda) {
        EXPECT_EQ(want, got);
        continue;
      }
      // cuDNN's weight-gradient algorithms may add partial sums in another
      // order on every call, so two runs of the same step agree closely,
      // not bit for bit.
      EXPECT_EQ(want.size(), got.size());
      for (std::size_t i = 0; i < want.size() && i < got.size(); ++i)
        EXPECT_NEAR(want[i], got[i], 1e-5 * (1.0 + std::abs(want[i])));
    }
    for (std::size_t k = 0; k < state; ++k) {
      eager[k] = detail::with_context(detail::detach(e[k]), d);
      traced[k] = t[k];
    }
    losses.push_back(floats(t.back()).at(0));
  }
  return losses;
}

TEST(Trace, MlpStepsMatchTheEagerStepsBitForBitOnEveryDevice) {
  const TracedFunction step = trace(mlp_step, mlp_specs());
  EXPECT_GT(step.num_ops(), 20u);  // forward, backward and three updates
  for (const Device& d : testing::all_devices()) {
    SCOPED_TRACE(d.to_string());
    const auto losses = expect_traced_equals_eager(mlp_step, step, mlp_inputs(d), 3, 5);
    EXPECT_LT(losses.back(), losses.front());  // the steps train
  }
}

// A convolutional step: conv (padding 1) + relu + 2x2 max pool, a linear
// classifier, mean squared error, SGD. Inputs w [4, 2, 3, 3], b [4],
// v [64, 3] and x [2, 2, 8, 8]; results the new w, b, v and the loss.
Tensors conv_step(const Tensors& in) {
  Tensor<4> w = Tensor<4>(in[0]).require_grad(), x(in[3]);
  Tensor<1> b = Tensor<1>(in[1]).require_grad();
  Tensor<2> v = Tensor<2>(in[2]).require_grad();
  auto h = module::max_pool2d(
      activation::relu(module::conv2d(x, w, b, module::ConvOptions<2>({1, 1}, {1, 1}, {1, 1}, 1))), {2, 2}, {2, 2});
  auto y = h.reshape({2, 64}).matmul(v);
  auto loss = ((y - 0.5) * (y - 0.5)).mean();
  auto grads = loss.backward();
  auto update = [&](const auto& p) { return (p.detach() - p.grad(grads)->detach() * 0.1).ref(); };
  return {update(w), update(b), update(v), loss.ref()};
}

TEST(Trace, ConvolutionStepsMatchTheEagerStepsBitForBitOnEveryDevice) {
  const TracedFunction step = trace(conv_step, {{Shape{4, 2, 3, 3}, DType::F32},
                                                {Shape{4}, DType::F32},
                                                {Shape{64, 3}, DType::F32},
                                                {Shape{2, 2, 8, 8}, DType::F32}});
  for (const Device& d : testing::all_devices()) {
    SCOPED_TRACE(d.to_string());
    const Tensors start{Tensor<4>::from_data(values(Shape{4, 2, 3, 3}, 0.6f, 11), d).ref(),
                        Tensor<1>::from_data(TensorData(std::vector<float>(4, 0.05f), {4}), d).ref(),
                        Tensor<2>::from_data(values(Shape{64, 3}, 0.3f, 12), d).ref(),
                        Tensor<4>::from_data(values(Shape{2, 2, 8, 8}, 2.0f, 13), d).ref()};
    const auto losses = expect_traced_equals_eager(conv_step, step, start, 3, 3);
    EXPECT_LT(losses.back(), losses.front());
  }
}

TEST(Trace, InputsStayIntactAndResultsAreTheCallersOwn) {
  const TracedFunction twice =
      trace([](const Tensors& in) -> Tensors { return {((Tensor<2>(in[0]) + 1.0) * 2.0).exp().ref()}; },
            {{Shape{2, 3}, DType::F32}});
  const Device d = Device::cpu();
  const auto x = Tensor<2>::from_data(values(Shape{2, 3}, 1.0f, 7), d);
  const std::vector<float> before = x.to_data().to_vec<float>();
  const Tensors y = twice({x.ref()});
  EXPECT_EQ(x.to_data().to_vec<float>(), before);
  EXPECT_EQ(Tensor<2>(y[0]).to_data().to_vec<float>(), (((x + 1.0) * 2.0).exp()).to_data().to_vec<float>());
}

TEST(Trace, InputsOfOtherShapesAndDtypesAreTracedAgain) {
  const TracedFunction fn = trace(
      [](const Tensors& in) -> Tensors {
        const Tensor<2> x(in[0]);
        return {(x * 3.0 - x.sum_dim(1)).ref()};  // the sum's shape follows x's
      },
      {{Shape{2, 3}, DType::F32}});
  const Device d = Device::flex();
  for (const Shape& shape : {Shape{2, 3}, Shape{4, 5}, Shape{2, 3}, Shape{1, 7}})
    for (const DType dtype : {DType::F32, DType::F64}) {
      SCOPED_TRACE(shape.to_string() + " " + std::string(dtype_name(dtype)));
      const auto x = Tensor<2>::from_data(values(shape, 4.0f, 5), TensorCreationOptions(d, dtype));
      const Tensors out = fn({x.ref()});
      EXPECT_EQ(out[0]->spec.shape, shape);
      EXPECT_EQ(dtype_name(out[0]->spec.dtype), dtype_name(dtype));
      EXPECT_EQ(floats(out[0]), floats((x * 3.0 - x.sum_dim(1)).ref()));
    }
}

TEST(Trace, ConstantsAndResultsThatAreInputsAreServedOnEachDevice) {
  // A constant made inside the function (brought to the capture device as
  // data), and an input returned as it is.
  const TracedFunction fn = trace(
      [](const Tensors& in) -> Tensors {
        const auto c = Tensor<1>::from_data(TensorData(std::vector<float>{1.5f, -2.0f, 4.0f}, {3}), in[0]->device);
        return {(Tensor<1>(in[0]) * c).ref(), in[0]};
      },
      {{Shape{3}, DType::F32}});
  for (const Device& d : {Device::flex(), Device::cpu()}) {
    SCOPED_TRACE(d.to_string());
    const auto x = Tensor<1>::from_data(TensorData(std::vector<float>{2.0f, 3.0f, -1.0f}, {3}), d);
    for (int call = 0; call < 2; ++call) {
      const Tensors out = fn({x.ref()});
      EXPECT_EQ(Tensor<1>(out[0]).to_data().to_vec<float>(), (std::vector<float>{3.0f, -6.0f, -4.0f}));
      EXPECT_EQ(Tensor<1>(out[1]).to_data().to_vec<float>(), (std::vector<float>{2.0f, 3.0f, -1.0f}));
      EXPECT_EQ(out[1]->device, d);
    }
  }
}

TEST(Trace, RandomOperationsDrawAnewOnEveryCallFromTheCallersDevice) {
  const TracedFunction noisy = trace(
      [](const Tensors& in) -> Tensors {
        const Tensor<1> x(in[0]);
        return {(x + Tensor<1>::random(Shape{64}, Distribution::uniform(0.0, 1.0), x.device())).ref()};
      },
      {{Shape{64}, DType::F32}});
  const Device d = Device::flex();
  const auto zero = Tensor<1>::zeros(Shape{64}, d);
  d.seed(11);
  const auto a = floats(noisy({zero.ref()})[0]);
  const auto b = floats(noisy({zero.ref()})[0]);
  EXPECT_NE(a, b);
  d.seed(11);
  EXPECT_EQ(floats(noisy({zero.ref()})[0]), a);  // the device's generator, restarted by its seed
  for (float v : a) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

// A scatter may write its result over its input when it reads that value
// last; here a fusable op recorded before it reads the value too. A fused
// device runs the scatter ahead of the queued multiply (as its queue
// would), so there the scatter is not the last reader and must copy.
TEST(Trace, AValueIsTakenOverOnlyByTheLastOpToRead) {
  const TracedFunction fn = trace(
      [](const Tensors& in) -> Tensors {
        const Tensor<2> x(in[0]);
        const Tensor<2, Int> idx(in[1]);
        const auto a = x.cumsum(1);
        const auto doubled = a * 2.0;                     // fusable: queued on a fused device
        const auto scattered = a.scatter_add(1, idx, x);  // reads a last: may write in a's storage
        return {doubled.ref(), scattered.ref()};
      },
      {{Shape{2, 5}, DType::F32}, {Shape{2, 5}, DType::I64}});
  const TensorData host_idx(std::vector<std::int64_t>{4, 0, 0, 2, 1, 3, 3, 0, 4, 1}, {2, 5});
  for (const Device& d : testing::all_devices()) {
    SCOPED_TRACE(d.to_string());
    const auto x = Tensor<2>::from_data(values(Shape{2, 5}, 3.0f, 21), d);
    const auto idx = Tensor<2, Int>::from_data(host_idx, d);
    const Tensors out = fn({x.ref(), idx.ref()});
    EXPECT_EQ(floats(out[0]), floats((x.cumsum(1) * 2.0).ref()));
    EXPECT_EQ(floats(out[1]), floats(x.cumsum(1).scatter_add(1, idx, x).ref()));
  }
}

#if BURN_HAS_CPU
// On a fused device a call runs the program the fusion layer compiled
// from the recording (planned once, groups across the whole step): nothing
// goes through its queue and nothing is planned again.
TEST(Trace, OnTheFusedCpuDeviceACallQueuesAndPlansNothing) {
  const TracedFunction step = trace(mlp_step, mlp_specs());
  const Device d = Device::cpu();
  const Tensors in = mlp_inputs(d);
  step(in);  // records for the cpu device and compiles
  d.sync();
  fusion::reset_stats(d);
  const Tensors out = step(in);
  d.sync();
  const fusion::FusionStats s = fusion::stats(d);
  EXPECT_EQ(s.ops_queued, 0u);
  EXPECT_EQ(s.plans_built + s.plan_cache_hits, 0u);
  EXPECT_GT(s.fused_groups, 0u);  // the bias adds with relu, the updates
  EXPECT_GE(s.ops_fused, 2 * s.fused_groups);
  EXPECT_GT(s.ops_eager, 0u);  // the matmuls, log-softmax, gather
  EXPECT_EQ(out.size(), 4u);
}
#endif

// One traced function called from several threads at once, on a fused and
// an eager device: each call gives what the same call gives alone (the
// recordings and compiled programs are shared and immutable; a fused
// device runs one call's program at a time under its lock).
TEST(Trace, CallsFromSeveralThreadsAtOnceGiveTheirOwnResults) {
  const TracedFunction step = trace(mlp_step, mlp_specs());
  constexpr int kThreads = 4, kCalls = 20;
  for (const Device& d : {Device::cpu(), Device::flex()}) {
    SCOPED_TRACE(d.to_string());
    const Tensors in = mlp_inputs(d);
    std::vector<std::vector<float>> want;
    for (const auto& t : step(in)) want.push_back(floats(t));
    std::vector<int> wrong(kThreads, 0);
    std::vector<std::thread> threads;
    for (int k = 0; k < kThreads; ++k)
      threads.emplace_back([&, k] {
        for (int call = 0; call < kCalls; ++call) {
          const Tensors out = step(in);
          for (std::size_t r = 0; r < out.size(); ++r)
            if (floats(out[r]) != want[r]) ++wrong[k];
        }
      });
    for (auto& t : threads) t.join();
    for (int k = 0; k < kThreads; ++k) EXPECT_EQ(wrong[k], 0) << "thread " << k;
  }
}

// A module's state as inputs (module::tensors_of / with_tensors): the
// function builds the module's structure on the capture device and puts the
// inputs in as its tensors, so a call serves the module as it is now.
struct TwoLayers {
  nn::Linear fc1, fc2;
  BURN_MODULE(fc1, fc2)
  Tensor<2> forward(const Tensor<2>& x) const { return fc2.forward(activation::relu(fc1.forward(x))); }
};

TwoLayers two_layers(const Device& d) { return {nn::LinearConfig{8, 16}.init(d), nn::LinearConfig{16, 4}.init(d)}; }

TEST(Trace, AModuleWhoseTensorsAreInputsIsServedAsItIsAtEachCall) {
  for (const Device& d : {Device::cpu(), Device::flex()}) {
    SCOPED_TRACE(d.to_string());
    d.seed(5);
    const TwoLayers model = two_layers(d);
    const auto x = Tensor<2>::from_data(values(Shape{6, 8}, 2.0f, 31), d);
    Tensors in = module::tensors_of(model);
    const std::size_t n_state = in.size();
    EXPECT_EQ(n_state, 4u);  // two weights, two biases
    in.push_back(x.ref());
    const TracedFunction forward = trace(
        [n_state](const Tensors& t) -> Tensors {
          const auto m = module::with_tensors(two_layers(t[0]->device), std::span(t).first(n_state));
          return {m.forward(Tensor<2>(t[n_state])).ref()};
        },
        specs_of(in));
    EXPECT_EQ(floats(forward(in)[0]), floats(model.forward(x).ref()));
    // Changed weights are used at the next call: they are inputs, not
    // constants of the recording.
    const TwoLayers changed = module::map_params(model, [](const std::string&, const module::ParamBase& p) {
      return p.ref()->spec.shape.rank() == 2 ? (Tensor<2>(p.ref()) * 0.5).ref() : (Tensor<1>(p.ref()) * 0.5).ref();
    });
    Tensors changed_in = module::tensors_of(changed);
    changed_in.push_back(x.ref());
    const auto got = floats(forward(changed_in)[0]);
    EXPECT_EQ(got, floats(changed.forward(x).ref()));
    EXPECT_NE(got, floats(model.forward(x).ref()));
  }
}

// The same way, a module's SGD step: the new tensors are the results, put
// back with with_tensors; three steps give the eager steps' bits.
TEST(Trace, AModulesTrainingStepTakesAndReturnsItsTensors) {
  const Device d = Device::cpu();
  d.seed(6);
  TwoLayers eager = module::fork(two_layers(d), d.autodiff());
  TwoLayers traced = two_layers(d);
  traced = module::with_tensors(std::move(traced), module::tensors_of(module::valid(eager)));
  const auto x = Tensor<2>::from_data(values(Shape{6, 8}, 2.0f, 32), d);
  const auto y = Tensor<2>::from_data(values(Shape{6, 4}, 1.0f, 33), d);
  const auto step_of = [](const TwoLayers& m, const Tensor<2>& xs, const Tensor<2>& ys) {
    auto loss = ((m.forward(xs) - ys) * (m.forward(xs) - ys)).mean();
    auto grads = loss.backward();
    Tensors next;
    module::for_each_param(m, [&](const std::string&, const module::ParamBase& p) {
      const auto update = [&](const auto& t) { return (t.detach() - t.grad(grads)->detach() * 0.1).ref(); };
      next.push_back(p.ref()->spec.shape.rank() == 2 ? update(Tensor<2>(p.ref())) : update(Tensor<1>(p.ref())));
    });
    return std::pair{next, loss};
  };
  Tensors in = module::tensors_of(traced);
  const std::size_t n_state = in.size();
  in.push_back(x.ref());
  in.push_back(y.ref());
  const TracedFunction step = trace(
      [&](const Tensors& t) -> Tensors {
        const auto m = module::with_tensors(two_layers(t[0]->device), std::span(t).first(n_state));
        auto [next, loss] = step_of(m, Tensor<2>(t[n_state]), Tensor<2>(t[n_state + 1]));
        next.push_back(loss.ref());
        return next;
      },
      specs_of(in));
  for (int it = 0; it < 3; ++it) {
    SCOPED_TRACE(it);
    Tensors call = module::tensors_of(traced);
    call.push_back(x.ref());
    call.push_back(y.ref());
    Tensors out = step(call);
    const float traced_loss = floats(out.back()).at(0);
    out.pop_back();
    traced = module::with_tensors(std::move(traced), out);
    auto [next, loss] = step_of(eager, x.to_device(d.autodiff()), y.to_device(d.autodiff()));
    eager = module::with_tensors(std::move(eager), next);
    EXPECT_EQ(traced_loss, floats(loss.ref()).at(0));
    const Tensors want = module::tensors_of(module::valid(eager)), got = module::tensors_of(traced);
    for (std::size_t k = 0; k < want.size(); ++k) EXPECT_EQ(floats(got[k]), floats(want[k])) << "tensor " << k;
  }
}

// An optimiser's step inside the traced function: its state and the step's
// scalars are inputs, the new state results (Optimizer::traced_state,
// traced_scalars, traced_step, commit_traced). Three traced steps give the
// eager steps' bits for every optimiser, and an eager step then continues
// from the committed state as from its own.
TEST(Trace, AnOptimisersStepIsTracedWithItsStateAsInputsAndResults) {
  const std::vector<std::pair<std::string, std::function<optim::Optimizer()>>> optimisers{
      {"sgd, momentum with dampening",
       [] {
         return optim::SgdConfig{}.with_momentum(optim::MomentumConfig{0.9, 0.1, false}).init();
       }},
      {"sgd, nesterov, weight decay",
       [] {
         return optim::SgdConfig{}
             .with_momentum(optim::MomentumConfig{0.8, 0.0, true})
             .with_weight_decay(optim::WeightDecayConfig{0.01})
             .init();
       }},
      {"adam", [] { return optim::AdamConfig{}.init(); }},
      {"adam, amsgrad, global-norm clipping",
       [] {
         return optim::AdamConfig{}
             .with_amsgrad(true)
             .with_grad_clipping(optim::GradientClippingConfig::global_norm(0.5))
             .init();
       }},
      {"adamw", [] { return optim::AdamWConfig{}.with_weight_decay(0.05).init(); }},
      {"rmsprop, centered, momentum",
       [] { return optim::RmsPropConfig{}.with_centered(true).with_momentum(0.5).init(); }},
  };
  const double lr = 0.05;
  for (const Device& d : {Device::cpu(), Device::flex()}) {
    for (const auto& [name, make] : optimisers) {
      SCOPED_TRACE(d.to_string() + ", " + name);
      d.seed(7);
      TwoLayers eager = module::fork(two_layers(d), d.autodiff());
      TwoLayers traced = module::with_tensors(two_layers(d), module::tensors_of(module::valid(eager)));
      optim::Optimizer eager_optim = make(), traced_optim = make();
      const auto x = Tensor<2>::from_data(values(Shape{6, 8}, 2.0f, 41), d);
      const auto y = Tensor<2>::from_data(values(Shape{6, 4}, 1.0f, 42), d);
      const auto loss_of = [](const TwoLayers& m, const Tensor<2>& xs, const Tensor<2>& ys) {
        return ((m.forward(xs) - ys) * (m.forward(xs) - ys)).mean();
      };
      Tensors state = traced_optim.traced_state(traced);
      const std::size_t n = module::tensors_of(traced).size(), n_state = state.size();
      Tensors specimen = module::tensors_of(traced);
      specimen.insert(specimen.end(), state.begin(), state.end());
      specimen.push_back(traced_optim.traced_scalars(lr, traced, d));
      specimen.push_back(x.ref());
      specimen.push_back(y.ref());
      const TracedFunction step = trace(
          [&, n, n_state](const Tensors& t) -> Tensors {
            const auto m = module::with_tensors(two_layers(t[0]->device), std::span(t).first(n));
            auto loss = loss_of(m, Tensor<2>(t[n + n_state + 1]), Tensor<2>(t[n + n_state + 2]));
            auto grads = loss.backward();
            auto [next, next_state] = traced_optim.traced_step(
                t[n + n_state], m, optim::GradientsParams::from_grads(grads, m), std::span(t).subspan(n, n_state));
            Tensors out = module::tensors_of(next);
            out.insert(out.end(), next_state.begin(), next_state.end());
            out.push_back(loss.ref());
            return out;
          },
          specs_of(specimen));
      for (int it = 0; it < 3; ++it) {
        SCOPED_TRACE(it);
        Tensors call = module::tensors_of(traced);
        call.insert(call.end(), state.begin(), state.end());
        call.push_back(traced_optim.traced_scalars(lr, traced, d));
        call.push_back(x.ref());
        call.push_back(y.ref());
        const Tensors out = step(call);
        traced = module::with_tensors(std::move(traced), std::span(out).first(n));
        state.assign(out.begin() + static_cast<std::ptrdiff_t>(n), out.end() - 1);
        traced_optim.commit_traced(traced, state);

        auto loss = loss_of(eager, x.to_device(d.autodiff()), y.to_device(d.autodiff()));
        auto grads = loss.backward();
        eager = eager_optim.step(lr, eager, optim::GradientsParams::from_grads(grads, eager));
        EXPECT_EQ(floats(out.back()), floats(loss.ref()));
        const Tensors want = module::tensors_of(module::valid(eager)), got = module::tensors_of(traced);
        for (std::size_t k = 0; k < want.size(); ++k) EXPECT_EQ(floats(got[k]), floats(want[k])) << "tensor " << k;
        const Tensors want_state = eager_optim.traced_state(eager);
        ASSERT_EQ(want_state.size(), state.size());
        for (std::size_t k = 0; k < state.size(); ++k)
          EXPECT_EQ(floats(state[k]), floats(want_state[k])) << "state " << k;
      }
      // The committed state and step count carry an eager step on.
      TwoLayers resumed = module::fork(traced, d.autodiff());
      auto loss = loss_of(resumed, x.to_device(d.autodiff()), y.to_device(d.autodiff()));
      auto grads = loss.backward();
      resumed = traced_optim.step(lr, resumed, optim::GradientsParams::from_grads(grads, resumed));
      auto eager_loss = loss_of(eager, x.to_device(d.autodiff()), y.to_device(d.autodiff()));
      auto eager_grads = eager_loss.backward();
      eager = eager_optim.step(lr, eager, optim::GradientsParams::from_grads(eager_grads, eager));
      const Tensors want = module::tensors_of(module::valid(eager)), got = module::tensors_of(module::valid(resumed));
      for (std::size_t k = 0; k < want.size(); ++k) EXPECT_EQ(floats(got[k]), floats(want[k])) << "resumed " << k;
    }
  }
}

TEST(Trace, ATracedOptimiserStepRefusesWhatDoesNotFit) {
  const Device d = Device::flex();
  TwoLayers model = module::fork(two_layers(d), d.autodiff());
  optim::Optimizer adam = optim::AdamConfig{}.init();
  const Tensors state = adam.traced_state(model);
  EXPECT_EQ(state.size(), 8u);  // two moments for each of four parameters
  auto loss = (model.forward(Tensor<2>::ones({2, 8}, d.autodiff())) * 1.0).sum();
  auto grads = loss.backward();
  const auto all = optim::GradientsParams::from_grads(grads, model);
  const auto scalars = adam.traced_scalars(0.1, model, d);
  EXPECT_EQ(scalars->spec.shape, (Shape{3}));
  burn::testing::expect_error([&] { (void)adam.traced_step(scalars, model, all, std::span(state).first(7)); },
                              "7 state tensors");
  burn::testing::expect_error([&] { (void)adam.traced_scalars(-1.0, model, d); }, "learning rate");
  burn::testing::expect_error([&] { (void)adam.traced_step(Tensor<1>::ones({2}, d).ref(), model, all, state); },
                              "takes [3]");
  // A parameter without a gradient, then parameters whose step counts differ.
  auto partial = all;
  (void)partial.remove_ref(model.fc2.weight.id());
  burn::testing::expect_error([&] { (void)adam.traced_step(scalars, model, partial, state); }, "fc2.weight");
  model = adam.step(0.1, model, std::move(partial));
  burn::testing::expect_error([&] { (void)adam.traced_scalars(0.1, model, d); }, "steps");
  burn::testing::expect_error([&] { adam.commit_traced(model, std::span(state).first(2)); }, "take 8");
}

TEST(Trace, WithTensorsRefusesListsThatDoNotFitTheModule) {
  const Device d = Device::flex();
  const TwoLayers model = two_layers(d);
  Tensors tensors = module::tensors_of(model);
  Tensors short_list(tensors.begin(), tensors.end() - 1);
  burn::testing::expect_error([&] { (void)module::with_tensors(model, short_list); }, "has 4 tensors");
  Tensors wrong_rank = tensors;
  wrong_rank[0] = Tensor<1>::zeros({128}, d).ref();
  burn::testing::expect_error([&] { (void)module::with_tensors(model, wrong_rank); }, "fc1.weight");
  Tensors wrong_kind = tensors;
  wrong_kind[1] = Tensor<1, Int>::zeros({16}, d).ref();
  burn::testing::expect_error([&] { (void)module::with_tensors(model, wrong_kind); }, "fc1.bias");
}

TEST(Trace, BadCallsAreClearErrors) {
  const TracedFunction step = trace(mlp_step, mlp_specs());
  const Device d = Device::flex();
  Tensors in = mlp_inputs(d);

  // Other shapes are recorded again; these ones do not fit together (x's
  // features against w1's rows).
  Tensors wrong_shape = in;
  wrong_shape[3] = Tensor<2>::zeros(Shape{6, 9}, d).ref();
  EXPECT_THROW(
      {
        try {
          step(wrong_shape);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("failed while it was traced for inputs (f32 [8, 16], f32 [16], "
                                               "f32 [16, 4], f32 [6, 9], i64 [6, 1])"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(step(Tensors(in.begin(), in.begin() + 4)), Error);  // too few inputs

  Tensors tracked = in;
  tracked[0] = detail::require_grad(detail::with_context(in[0], d.autodiff()), true);
  EXPECT_THROW(
      {
        try {
          step(tracked);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("tracked by autodiff"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);

  Tensors mixed = in;
  mixed[2] = detail::to_device(in[2], Device::ndarray());
  EXPECT_THROW(step(mixed), Error);

  Tensors moved = in;
  moved[1] = nullptr;
  EXPECT_THROW(step(moved), Error);
}

TEST(Trace, FunctionsThatCannotBeTracedAreClearErrors) {
  const std::vector<ir::TensorSpec> one{{Shape{4}, DType::F32}};
  // Reading a value: nothing is computed while tracing.
  EXPECT_THROW(
      {
        try {
          trace(
              [](const Tensors& in) -> Tensors {
                const float total = Tensor<1>(in[0]).sum().into_scalar<float>();
                return {(Tensor<1>(in[0]) * total).ref()};
              },
              one);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("failed while it was traced"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(trace([](const Tensors&) -> Tensors { return {}; }, one), Error);
  EXPECT_THROW(trace([](const Tensors&) -> Tensors { return {Tensor<1>::zeros(Shape{4}, Device::flex()).ref()}; }, one),
               Error);
  EXPECT_THROW(trace([](const Tensors& in) -> Tensors { return in; }, {}), Error);
}

}  // namespace
}  // namespace burn
