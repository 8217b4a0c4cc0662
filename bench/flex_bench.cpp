// burn's side of the CPU benchmark: the same workloads as
// bench/torch_bench.py, on Device::flex() and, for the fusion rows, on
// Device::cpu(). Run through bench/run.sh, which compares them in one table;
// the benchmark names here are the row keys, "<row>@cpu" for Device::cpu().
//
// Every timed iteration ends with device.sync() so queued work is counted.
// Inputs are created (and synced) outside the timed loop with a fixed seed.
#include <benchmark/benchmark.h>

#include <burn/activation.hpp>
#include <burn/burn.hpp>
#include <burn/module/ops.hpp>
#include <burn/quant.hpp>

#include "mlp_step.hpp"

#if BURN_BENCH_REPORTS_ISA
#include <dnnl.hpp>
#include <hwy/targets.h>
#endif

#include <concepts>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using burn::Device;
using burn::Tensor;

constexpr std::uint64_t kSeed = 42;

Device flex() {
  Device d = Device::flex();
  d.seed(kSeed);
  return d;
}

#if BURN_HAS_CPU
// Lazy, fused execution over flex's kernels.
Device cpu() {
  Device d = Device::cpu();
  d.seed(kSeed);
  return d;
}
#endif

// Workloads measured on several devices take the device's constructor.
using MakeDevice = Device (*)();

template <std::size_t D>
Tensor<D> randn(const burn::Shape& shape, const Device& device) {
  return Tensor<D>::random(shape, burn::Distribution::normal(0.0, 1.0), device);
}

// ---- timing ---------------------------------------------------------------------
// Rows are timed the way the peers time theirs (bench/peer_common.py's
// `timed`): a row's inputs are made once, one call runs untimed, and every
// repetition then times calls on those same inputs. Google Benchmark calls a
// row's function once per repetition, so the first call's inputs are kept
// here until another row starts. Making them anew each repetition would time
// the first passes over freshly written memory, which the peers never time
// and which on a CPU with a large shared cache read several times slower
// than later passes (a 64 MiB sum: 4.7, 3.8, 3.1, 2.5, 1.9 ms in turn).

// Frees the kept row's inputs; only one row's memory is held at a time.
std::function<void()> release_kept_row;

// A row whose call takes the running State (nullptr for the untimed call),
// for work it does outside the timer.
template <class Call>
concept TakesState = std::invocable<Call&, benchmark::State*>;

/// Times `setup()`'s callable: made on the row's first repetition (or when
/// `key`, the row's argument, changes), called once untimed, then once per
/// iteration of every repetition.
template <class Setup>
void time_row(benchmark::State& state, Setup setup, std::int64_t key = 0) {
  using Call = decltype(setup());
  static std::optional<Call> call;  // one per Setup type, i.e. per row's function
  static std::int64_t call_key = 0;
  const auto run = [](benchmark::State* s) {
    if constexpr (TakesState<Call>) (*call)(s);
    else (*call)();
  };
  if (!call || call_key != key) {
    if (release_kept_row) release_kept_row();
    call.emplace(setup());
    call_key = key;
    release_kept_row = [] { call.reset(); };
    run(nullptr);
  }
  for (auto _ : state) run(&state);
}

// ---- matmul -------------------------------------------------------------------
// A product of two n x n operands stored in `Stored`. In bf16 (f32
// accumulation) it runs oneDNN's AVX-512 BF16 / AMX kernels where the CPU has
// them; elsewhere flex computes in f32 and rounds once (no faster than f32).
template <burn::DType Stored>
void square_matmul(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  time_row(
      state,
      [n] {
        auto device = flex();
        const auto operand = [&] {
          auto t = randn<2>({n, n}, device);
          return Stored == burn::DType::F32 ? t : t.cast(Stored);
        };
        auto a = operand();
        auto b = operand();
        device.sync();
        return [=] {
          auto c = a.matmul(b);
          device.sync();
          benchmark::DoNotOptimize(c);
        };
      },
      state.range(0));
}

void batched_matmul(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto a = randn<3>({32, 256, 256}, device);
    auto b = randn<3>({32, 256, 256}, device);
    device.sync();
    return [=] {
      auto c = a.matmul(b);
      device.sync();
      benchmark::DoNotOptimize(c);
    };
  });
}

// ---- elementwise on 16M floats ---------------------------------------------------
constexpr std::size_t kN16M = std::size_t{1} << 24;

void add_fresh(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto a = randn<1>({kN16M}, device);
    auto b = randn<1>({kN16M}, device);
    device.sync();
    return [=] {
      auto c = a + b;
      device.sync();
      benchmark::DoNotOptimize(c);
    };
  });
}

// burn has no in-place API yet: `a = a + b` drops the old buffer as the new
// one is assigned, which is the closest a user can get today.
void add_inplace(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto a = randn<1>({kN16M}, device);
    auto b = randn<1>({kN16M}, device);
    device.sync();
    return [=]() mutable {
      a = std::move(a) + b;  // consumes a (the call's only holder): the result is written into its storage
      device.sync();
      benchmark::DoNotOptimize(a);
    };
  });
}

void exp_fresh(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    // Small values so repeated exp stays finite in the in-place variant.
    auto a = Tensor<1>::random({kN16M}, burn::Distribution::uniform(-0.5, 0.5), device);
    device.sync();
    return [=] {
      auto c = a.exp();
      device.sync();
      benchmark::DoNotOptimize(c);
    };
  });
}

void exp_inplace(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto a = Tensor<1>::random({kN16M}, burn::Distribution::uniform(-0.5, 0.5), device);
    device.sync();
    return [=](benchmark::State* timed) mutable {
      // Repeated exp overflows after four rounds; a reset every third round,
      // outside the timer, keeps the input finite (torch_bench.py does the same).
      if (timed != nullptr && timed->iterations() % 3 == 0) {
        timed->PauseTiming();
        a = Tensor<1>::random({kN16M}, burn::Distribution::uniform(-0.5, 0.5), device);
        device.sync();
        timed->ResumeTiming();
      }
      a = std::move(a).exp();  // consumes a: computed in its storage
      device.sync();
      benchmark::DoNotOptimize(a);
    };
  });
}

// ---- reductions and normalisations ------------------------------------------------
void sum_16m(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto a = randn<1>({kN16M}, device);
    device.sync();
    return [=] {
      auto s = a.sum();
      device.sync();
      benchmark::DoNotOptimize(s);
    };
  });
}

template <MakeDevice Make>
void softmax_last(benchmark::State& state) {
  time_row(state, [] {
    auto device = Make();
    auto a = randn<3>({256, 256, 256}, device);
    device.sync();
    return [=] {
      auto s = burn::activation::softmax(a, -1);
      device.sync();
      benchmark::DoNotOptimize(s);
    };
  });
}

// Cumulative sum along the last dim of [4096, 4096]: 4096 serial scans.
void cumsum_last(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto a = randn<2>({4096, 4096}, device);
    device.sync();
    return [=] {
      auto c = a.cumsum(-1);
      device.sync();
      benchmark::DoNotOptimize(c);
    };
  });
}

// Gather along dim 1 of [4096, 4096] with random i64 indices of the same shape.
void gather_dim1(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto a = randn<2>({4096, 4096}, device);
    auto idx = Tensor<2>::random({4096, 4096}, burn::Distribution::uniform(0.0, 4095.99), device).to_int();
    device.sync();
    return [=] {
      auto g = a.gather(1, idx);
      device.sync();
      benchmark::DoNotOptimize(g);
    };
  });
}

// Argmax along the last dim of [4096, 4096] (first position of the maximum).
void argmax_last(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto a = randn<2>({4096, 4096}, device);
    device.sync();
    return [=] {
      auto m = a.argmax(-1);
      device.sync();
      benchmark::DoNotOptimize(m);
    };
  });
}

/// burn::module::layer_norm over [rows, 1024], as the peers' F.layer_norm.
template <MakeDevice Make, std::size_t Rows>
void layer_norm_rows(benchmark::State& state) {
  time_row(state, [] {
    auto device = Make();
    auto x = randn<2>({Rows, 1024}, device);
    auto gamma = Tensor<1>::ones({1024}, device);
    auto beta = Tensor<1>::zeros({1024}, device);
    device.sync();
    return [=] {
      auto y = burn::module::layer_norm(x, gamma, beta, 1e-5);
      device.sync();
      benchmark::DoNotOptimize(y);
    };
  });
}

// The two fusion rows: memory-bound chains over 16M floats, where fusion
// reads and writes memory once instead of once per op.
constexpr std::size_t kRows16M = kN16M / 1024;

template <MakeDevice Make>
void gelu_16m(benchmark::State& state) {
  time_row(state, [] {
    auto device = Make();
    auto x = randn<2>({kRows16M, 1024}, device);
    // [1, 1024] rows broadcast over x (made outside the timer: a reshape).
    auto w = randn<1>({1024}, device).unsqueeze<2>();
    auto b = randn<1>({1024}, device).unsqueeze<2>();
    device.sync();
    return [=] {
      auto y = burn::activation::gelu(x * w + b);
      device.sync();
      benchmark::DoNotOptimize(y);
    };
  });
}

// ---- convolution and pooling ---------------------------------------------------
burn::module::ConvOptions<2> pad1() { return burn::module::ConvOptions<2>({1, 1}, {1, 1}, {1, 1}, 1); }

void conv2d_forward(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto x = randn<4>({32, 64, 56, 56}, device);
    auto w = randn<4>({64, 64, 3, 3}, device) * 0.05;
    auto bias = Tensor<1>::zeros({64}, device);
    device.sync();
    return [=] {
      auto y = burn::module::conv2d(x, w, bias, pad1());
      // flex leaves y in oneDNN's blocked layout until something other than a
      // convolution reads it; a one-row view makes it row-major here, so the
      // row keeps PyTorch's work (an NCHW result). conv_chain_4 shows the gain.
      auto first = y.slice({{0, 1}});
      device.sync();
      benchmark::DoNotOptimize(first);
    };
  });
}

// conv2d_fwd in bf16, as square_matmul<BF16> is sgemm in bf16.
void bf16_conv2d_forward(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto x = randn<4>({32, 64, 56, 56}, device).cast(burn::DType::BF16);
    auto w = (randn<4>({64, 64, 3, 3}, device) * 0.05).cast(burn::DType::BF16);
    auto bias = Tensor<1>::zeros({64}, burn::TensorCreationOptions(device, burn::DType::BF16));
    device.sync();
    return [=] {
      auto y = burn::module::conv2d(x, w, bias, pad1());
      auto first = y.slice({{0, 1}});  // row-major, as conv2d_fwd
      device.sync();
      benchmark::DoNotOptimize(first);
    };
  });
}

// A 4096 x 4096 Linear layer on a batch of 64, in f32 and quantized to int8
// (weights per output channel, each batch's activations quantized on the fly:
// PyTorch's quantize_dynamic), the layer serving in int8 is meant to replace.
struct OneLinear {
  burn::nn::Linear fc;
  BURN_MODULE(fc)
  Tensor<2> forward(const Tensor<2>& x) const { return fc.forward(x); }
};

OneLinear linear_4096(const Device& device) { return {burn::nn::LinearConfig{4096, 4096}.init(device)}; }

void linear_f32(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto model = linear_4096(device);
    auto x = randn<2>({64, 4096}, device);
    device.sync();
    return [=] {
      auto y = model.forward(x);
      device.sync();
      benchmark::DoNotOptimize(y);
    };
  });
}

void linear_int8(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    const auto model = linear_4096(device);
    auto x = randn<2>({64, 4096}, device);
    const auto calibration = burn::quant::calibrate(model, [&](const OneLinear& m) { (void)m.forward(x); });
    auto quantized = burn::quant::quantize_model(
        model, calibration, burn::quant::QuantizeConfig{}.with_activations(burn::quant::ActivationScale::Dynamic));
    device.sync();
    // The weights' int8 form is prepared on first use: in the untimed call.
    return [=] {
      auto y = quantized.forward(x);
      device.sync();
      benchmark::DoNotOptimize(y);
    };
  });
}

// Three 4096 x 4096 Linear layers (192 MiB of f32 weights) quantized after
// training: quantize_model with per-channel int8 weights (calibration,
// untimed, before), against PyTorch's quantize_dynamic of the same model.
// Its peak memory (bench/run.sh, a fresh process) is the model plus what
// quantizing costs.
struct ThreeLinear {
  burn::nn::Linear fc1, fc2, fc3;
  BURN_MODULE(fc1, fc2, fc3)
  Tensor<2> forward(const Tensor<2>& x) const { return fc3.forward(fc2.forward(fc1.forward(x))); }
};

void quantize_three_linear(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    const burn::nn::LinearConfig config{4096, 4096};
    const ThreeLinear model{config.init(device), config.init(device), config.init(device)};
    auto x = randn<2>({64, 4096}, device);
    const auto calibration = burn::quant::calibrate(model, [&](const ThreeLinear& m) { (void)m.forward(x); });
    device.sync();
    return [=] {
      auto quantized = burn::quant::quantize_model(model, calibration);
      device.sync();
      benchmark::DoNotOptimize(quantized);
    };
  });
}

// Four conv + bias + relu layers with a 2x2 max pool after the second (two
// VGG stages), then the sum of the result: activations stay in oneDNN's
// blocked layout from one convolution to the next where the layers allow it
// (on cpu, relu runs inside the convolution; max pooling reads and writes
// the blocked layout).
template <MakeDevice Make>
void conv_chain_4(benchmark::State& state) {
  time_row(state, [] {
    auto device = Make();
    auto x = randn<4>({16, 64, 56, 56}, device);
    std::vector<Tensor<4>> ws;
    ws.reserve(4);
    for (int i = 0; i < 4; ++i) ws.push_back(randn<4>({64, 64, 3, 3}, device) * 0.05);
    auto bias = Tensor<1>::zeros({64}, device);
    device.sync();
    return [=] {
      auto h = x;
      for (std::size_t i = 0; i < ws.size(); ++i) {
        h = burn::activation::relu(burn::module::conv2d(h, ws[i], bias, pad1()));
        if (i == 1) h = burn::module::max_pool2d(h, {2, 2}, {2, 2});
      }
      auto total = h.sum();
      device.sync();
      benchmark::DoNotOptimize(total);
    };
  });
}

void conv2d_forward_backward(benchmark::State& state) {
  time_row(state, [] {
    auto device = Device::flex().autodiff();
    device.seed(kSeed);
    auto x = randn<4>({32, 64, 56, 56}, device).require_grad();
    auto w = (randn<4>({64, 64, 3, 3}, device) * 0.05).detach().require_grad();
    auto bias = Tensor<1>::zeros({64}, device).require_grad();
    device.sync();
    return [=] {
      auto y = burn::module::conv2d(x, w, bias, pad1());
      auto grads = y.sum().backward();  // seeds dy with ones, like torch's y.sum().backward()
      device.sync();
      benchmark::DoNotOptimize(grads);
    };
  });
}

void max_pool2d_k5s2(benchmark::State& state) {
  time_row(state, [] {
    auto device = flex();
    auto x = randn<4>({2, 32, 512, 512}, device);
    device.sync();
    return [=] {
      auto y = burn::module::max_pool2d(x, {5, 5}, {2, 2});
      device.sync();
      benchmark::DoNotOptimize(y);
    };
  });
}

// ---- MLP training step (bench/mlp_step.hpp) --------------------------------------
// Each call is one step (the step's own sync included); the steps continue
// from one repetition to the next, as the peers' do.
template <MakeDevice Make>
void mlp_train_step(benchmark::State& state) {
  time_row(state, [] { return [mlp = std::make_shared<burn_bench::MlpStep>(Make())] { mlp->step(); }; });
}

// The same step with the matmuls in bf16 under autocast (f32 master
// weights, as torch.autocast); its peak memory against the f32 step's is
// what bf16 training saves or costs.
template <MakeDevice Make>
void bf16_mlp_train_step(benchmark::State& state) {
  time_row(state, [] {
    return [mlp = std::make_shared<burn_bench::MlpStep>(Make(), burn_bench::MlpShape{}, burn::DType::BF16)] {
      mlp->step();
    };
  });
}

// The same step on a small model: about 80 ops on tiny tensors, so what it
// measures is each op's overhead (dispatch, autodiff, the fusion queue).
template <MakeDevice Make>
void mlp_small_step(benchmark::State& state) {
  time_row(state, [] {
    return [mlp = std::make_shared<burn_bench::MlpStep>(Make(), burn_bench::kSmallMlp)] { mlp->step(); };
  });
}

#if BURN_HAS_CAPTURE
// mlp_small_step through burn::trace: recorded once, replayed each step
// without dispatch or autodiff bookkeeping (the peers' row is
// mlp_small_step: JAX compiles that step once too).
template <MakeDevice Make>
void mlp_small_step_traced(benchmark::State& state) {
  time_row(state, [] {
    return [mlp = std::make_shared<burn_bench::TracedMlpStep>(Make(), burn_bench::kSmallMlp)] { mlp->step(); };
  });
}
#endif

// ---- per-op overhead --------------------------------------------------------------
template <MakeDevice Make>
void tiny_add_latency(benchmark::State& state) {
  time_row(state, [] {
    auto device = Make();
    auto a = Tensor<1>::from_floats({1.0, 2.0, 3.0, 4.0}, device);
    auto b = Tensor<1>::from_floats({4.0, 3.0, 2.0, 1.0}, device);
    device.sync();
    return [=] {
      auto c = a + b;
      device.sync();
      benchmark::DoNotOptimize(c);
    };
  });
}

// Iterations x repetitions are fixed so the whole run stays within minutes on
// two cores; run.sh reads the median of the repetitions.
void big(benchmark::internal::Benchmark* b, int iters, int reps) {
  b->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(iters)->Repetitions(reps);
}
void tiny(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(0.2)->Repetitions(5);
}

// What the run measured on: the CPU model and the instruction sets the
// kernels picked at run time (oneDNN's JIT and Highway's dispatch), so a
// table from another machine is never mistaken for this one's.
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

#if BURN_BENCH_REPORTS_ISA
std::string onednn_isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

// Highway dispatches to the best target this CPU supports among those
// compiled in; the lowest set bit is the best.
std::string highway_target() {
  const std::int64_t usable = hwy::SupportedTargets() & HWY_TARGETS;
  return usable == 0 ? "none" : hwy::TargetName(usable & -usable);
}
#endif

}  // namespace

BENCHMARK(square_matmul<burn::DType::F32>)
    ->Name("sgemm_32")
    ->Arg(32)
    ->Apply(tiny);  // small products: dnnl_sgemm (matmul.cpp)
BENCHMARK(square_matmul<burn::DType::F32>)->Name("sgemm_128")->Arg(128)->Apply(tiny);
BENCHMARK(square_matmul<burn::DType::F32>)->Name("sgemm_256")->Arg(256)->Apply([](auto* b) { big(b, 50, 3); });
BENCHMARK(square_matmul<burn::DType::F32>)->Name("sgemm_1024")->Arg(1024)->Apply([](auto* b) { big(b, 2, 3); });
BENCHMARK(square_matmul<burn::DType::F32>)->Name("sgemm_2048")->Arg(2048)->Apply([](auto* b) { big(b, 1, 3); });
BENCHMARK(batched_matmul)->Name("bmm_32x256")->Apply([](auto* b) { big(b, 2, 3); });
BENCHMARK(add_fresh)->Name("add_16m_fresh")->Apply([](auto* b) { big(b, 5, 5); });
BENCHMARK(add_inplace)->Name("add_16m_inplace")->Apply([](auto* b) { big(b, 5, 5); });
BENCHMARK(exp_fresh)->Name("exp_16m_fresh")->Apply([](auto* b) { big(b, 5, 5); });
BENCHMARK(exp_inplace)->Name("exp_16m_inplace")->Apply([](auto* b) { big(b, 6, 5); });
BENCHMARK(sum_16m)->Name("sum_16m")->Apply([](auto* b) { big(b, 5, 5); });
BENCHMARK(softmax_last<flex>)->Name("softmax_256x256x256")->Apply([](auto* b) { big(b, 3, 5); });
#if BURN_HAS_CPU
BENCHMARK(softmax_last<cpu>)->Name("softmax_256x256x256@cpu")->Apply([](auto* b) { big(b, 3, 5); });
#endif
BENCHMARK((layer_norm_rows<flex, 4096>))->Name("layer_norm_4096x1024")->Apply([](auto* b) { big(b, 3, 5); });
#if BURN_HAS_CPU
BENCHMARK((layer_norm_rows<cpu, 4096>))->Name("layer_norm_4096x1024@cpu")->Apply([](auto* b) { big(b, 3, 5); });
#endif
BENCHMARK(cumsum_last)->Name("cumsum_4096x4096")->Apply([](auto* b) { big(b, 3, 5); });
BENCHMARK(gather_dim1)->Name("gather_4096x4096")->Apply([](auto* b) { big(b, 3, 5); });
BENCHMARK(argmax_last)->Name("argmax_4096x4096")->Apply([](auto* b) { big(b, 3, 5); });
BENCHMARK(conv2d_forward)->Name("conv2d_fwd")->Apply([](auto* b) { big(b, 2, 3); });
BENCHMARK(square_matmul<burn::DType::BF16>)->Name("bf16_matmul_2048")->Arg(2048)->Apply([](auto* b) { big(b, 1, 3); });
BENCHMARK(bf16_conv2d_forward)->Name("bf16_conv2d_fwd")->Apply([](auto* b) { big(b, 2, 3); });
BENCHMARK(linear_f32)->Name("linear_4096_b64")->Apply([](auto* b) { big(b, 10, 3); });
BENCHMARK(linear_int8)->Name("int8_linear_4096_b64")->Apply([](auto* b) { big(b, 10, 3); });
BENCHMARK(quantize_three_linear)->Name("quantize_3x4096")->Apply([](auto* b) { big(b, 1, 3); });
// A row's cpu variant runs right after its flex variant: this machine's
// speed drifts by several per cent within minutes, and the pair's ratio is
// the number the cpu targets are about.
BENCHMARK(conv_chain_4<flex>)->Name("conv_chain_4")->Apply([](auto* b) { big(b, 2, 3); });
#if BURN_HAS_CPU
BENCHMARK(conv_chain_4<cpu>)->Name("conv_chain_4@cpu")->Apply([](auto* b) { big(b, 2, 3); });
#endif
BENCHMARK(conv2d_forward_backward)->Name("conv2d_fwd_bwd")->Apply([](auto* b) { big(b, 1, 3); });
BENCHMARK(max_pool2d_k5s2)->Name("max_pool2d_k5s2")->Apply([](auto* b) { big(b, 2, 3); });
BENCHMARK(mlp_train_step<flex>)->Name("mlp_train_step")->Apply([](auto* b) { big(b, 20, 5); });
#if BURN_HAS_CPU
BENCHMARK(mlp_train_step<cpu>)->Name("mlp_train_step@cpu")->Apply([](auto* b) { big(b, 20, 5); });
#endif
BENCHMARK(bf16_mlp_train_step<flex>)->Name("bf16_mlp_train_step")->Apply([](auto* b) { big(b, 5, 3); });
#if BURN_HAS_CPU
BENCHMARK(bf16_mlp_train_step<cpu>)->Name("bf16_mlp_train_step@cpu")->Apply([](auto* b) { big(b, 5, 3); });
#endif
BENCHMARK(mlp_small_step<flex>)->Name("mlp_small_step")->Apply([](auto* b) { big(b, 500, 5); });
#if BURN_HAS_CPU
BENCHMARK(mlp_small_step<cpu>)->Name("mlp_small_step@cpu")->Apply([](auto* b) { big(b, 500, 5); });
#endif
#if BURN_HAS_CAPTURE
BENCHMARK(mlp_small_step_traced<flex>)->Name("mlp_small_step_traced")->Apply([](auto* b) { big(b, 500, 5); });
#if BURN_HAS_CPU
BENCHMARK(mlp_small_step_traced<cpu>)->Name("mlp_small_step_traced@cpu")->Apply([](auto* b) { big(b, 500, 5); });
#endif
#endif
BENCHMARK(tiny_add_latency<flex>)->Name("tiny_add_4")->Apply(tiny);
#if BURN_HAS_CPU
BENCHMARK(tiny_add_latency<cpu>)->Name("tiny_add_4@cpu")->Apply(tiny);
#endif
BENCHMARK(gelu_16m<flex>)->Name("gelu_16m")->Apply([](auto* b) { big(b, 3, 5); });
#if BURN_HAS_CPU
BENCHMARK(gelu_16m<cpu>)->Name("gelu_16m@cpu")->Apply([](auto* b) { big(b, 3, 5); });
#endif
BENCHMARK((layer_norm_rows<flex, kRows16M>))->Name("layer_norm_16m")->Apply([](auto* b) { big(b, 3, 5); });
#if BURN_HAS_CPU
BENCHMARK((layer_norm_rows<cpu, kRows16M>))->Name("layer_norm_16m@cpu")->Apply([](auto* b) { big(b, 3, 5); });
#endif

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("cpu_model", cpu_model());
#if BURN_BENCH_REPORTS_ISA
  benchmark::AddCustomContext("onednn_isa", onednn_isa());
  benchmark::AddCustomContext("highway_target", highway_target());
#endif
  benchmark::AddCustomContext("burn_threads", std::to_string(burn::Device::flex().num_threads()));
  benchmark::RunSpecifiedBenchmarks();
  if (release_kept_row) release_kept_row();  // while the devices still exist
  benchmark::Shutdown();
  return 0;
}
