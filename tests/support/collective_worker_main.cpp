// One rank of a process group, for tests/collective: started by the test
// with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set, it runs one
// scenario and exits 0 when every value it checked was right (1 with the
// first wrong one on stderr, 3 when a collective threw).
//
//   burn_collective_worker values   every collective, f32, f16 and i64, checked
//   burn_collective_worker large N  an all-reduce of N f32 elements, checked
//   burn_collective_worker die R    rank R is killed before an all-reduce; the
//                                   others must throw an ExecutionError naming it
//   burn_collective_worker mismatch rank 1 passes another shape; every rank
//                                   must throw an Error naming rank 1
//   burn_collective_worker train sgd|adam DIR BUCKET_BYTES
//                                   data-parallel training of the test MLP on
//                                   this rank's rows of each batch; writes the
//                                   final parameters to DIR/rankR.params
//   burn_collective_worker partial BUCKET_BYTES
//                                   a parameter only rank 0's loss reaches and
//                                   one no rank's: GradientSync's averages
//                                   checked against per-tensor all-reduces
//   burn_collective_worker die-in-step R
//                                   rank R is killed before a synchronised
//                                   backward; the others must throw naming it
#include <signal.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <burn/burn.hpp>

#include "data_parallel_model.hpp"

using namespace burn;
namespace coll = burn::collective;
namespace dp = burn::testing::data_parallel;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "rank %s: wrong: %s\n", std::getenv("RANK"), what.c_str());
  ++failures;
}

template <class T>
void check_values(const std::vector<T>& got, const std::vector<double>& want, const std::string& what) {
  check(got.size() == want.size(), what + ": size " + std::to_string(got.size()));
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (std::abs(static_cast<double>(got[i]) - want[i]) > 1e-6 * std::max(1.0, std::abs(want[i]))) {
      check(false, what + " at " + std::to_string(i) + ": " + std::to_string(static_cast<double>(got[i])) +
                       " instead of " + std::to_string(want[i]));
      return;
    }
  }
}

// Rank r holds (r + 1) * (i + 1) at element i: sums, maxima and means are
// then simple closed forms of n and i.
int values(coll::ProcessGroup& group) {
  const int r = group.rank();
  const int n = group.world_size();
  const std::size_t len = 4 * static_cast<std::size_t>(n);  // divides by n, for reduce_scatter
  const Device device = Device::flex();
  std::vector<float> mine(len);
  std::vector<std::int64_t> mine_int(len);
  std::vector<double> sum(len), max(len), mean(len), root_values(len);
  const double ranks_sum = n * (n + 1) / 2.0;
  for (std::size_t i = 0; i < len; ++i) {
    const double k = static_cast<double>(i + 1);
    mine[i] = static_cast<float>((r + 1) * k);
    mine_int[i] = static_cast<std::int64_t>((r + 1) * k);
    sum[i] = ranks_sum * k;
    max[i] = n * k;
    mean[i] = ranks_sum / n * k;
    root_values[i] = n * k;  // the root is the last rank
  }
  const auto t = Tensor<1>::from_data(TensorData(mine, {len}), device);
  check_values(group.all_reduce(t, coll::ReduceOp::Sum).to_data().to_vec<float>(), sum, "f32 all_reduce Sum");
  check_values(group.all_reduce(t, coll::ReduceOp::Max).to_data().to_vec<float>(), max, "f32 all_reduce Max");
  check_values(group.all_reduce(t, coll::ReduceOp::Mean).to_data().to_vec<float>(), mean, "f32 all_reduce Mean");
  check_values(group.broadcast(t, n - 1).to_data().to_vec<float>(), root_values, "f32 broadcast");

  const auto ti = Tensor<1, Int>::from_data(TensorData(mine_int, {len}), device);
  check_values(group.all_reduce(ti, coll::ReduceOp::Sum).to_data().to_vec<std::int64_t>(), sum, "i64 all_reduce Sum");
  check_values(group.all_reduce(ti, coll::ReduceOp::Max).to_data().to_vec<std::int64_t>(), max, "i64 all_reduce Max");

  // f16: small integers, exact in half precision.
  const TensorData half = TensorData(mine, {len}).convert(DType::F16);
  const TensorData half_sum = group.all_reduce_data(half, coll::ReduceOp::Sum);
  check(half_sum.dtype() == DType::F16, "f16 all_reduce keeps the dtype");
  check_values(half_sum.convert(DType::F32).to_vec<float>(), sum, "f16 all_reduce Sum");

  // all_gather: rank q's rows, in rank order.
  const auto rows = Tensor<2>::from_data(TensorData(std::vector<float>{float(r), float(r) + 0.5f}, {1, 2}), device);
  const auto gathered = group.all_gather(rows);
  check(gathered.shape() == Shape{static_cast<std::size_t>(n), 2}, "all_gather shape " + gathered.shape().to_string());
  std::vector<double> want_gather;
  for (int q = 0; q < n; ++q) want_gather.insert(want_gather.end(), {double(q), q + 0.5});
  check_values(gathered.to_data().to_vec<float>(), want_gather, "all_gather");

  // reduce_scatter: this rank's quarter... its 1/n of the sum.
  const auto part = group.reduce_scatter(t, coll::ReduceOp::Sum);
  check(part.shape() == Shape{len / n}, "reduce_scatter shape " + part.shape().to_string());
  const std::vector<double> want_part(sum.begin() + static_cast<std::ptrdiff_t>(r * len / n),
                                      sum.begin() + static_cast<std::ptrdiff_t>((r + 1) * len / n));
  check_values(part.to_data().to_vec<float>(), want_part, "reduce_scatter Sum");

  // Bad input on every rank alike: a clear error, and the group still works.
  try {
    (void)group.all_reduce(ti, coll::ReduceOp::Mean);
    check(false, "Mean of an int tensor was accepted");
  } catch (const Error& e) {
    check(std::string(e.what()).find("needs a float dtype") != std::string::npos, e.what());
  }
  group.barrier();
  check_values(group.all_reduce(t, coll::ReduceOp::Sum).to_data().to_vec<float>(), sum, "all_reduce after an error");
  return failures == 0 ? 0 : 1;
}

int large(coll::ProcessGroup& group, std::size_t len) {
  const int r = group.rank();
  const int n = group.world_size();
  // Element i holds r + (i mod 7): exact in f32 at any length.
  std::vector<float> mine(len);
  for (std::size_t i = 0; i < len; ++i) mine[i] = static_cast<float>(r + static_cast<int>(i % 7));
  const TensorData out = group.all_reduce_data(TensorData(std::move(mine), {len}), coll::ReduceOp::Sum);
  const auto* got = reinterpret_cast<const float*>(out.bytes().data());
  const double ranks = n * (n - 1) / 2.0;
  for (std::size_t i = 0; i < len; ++i) {
    const double want = ranks + n * static_cast<double>(i % 7);
    if (got[i] != static_cast<float>(want)) {
      check(false, "large all_reduce at " + std::to_string(i) + ": " + std::to_string(got[i]));
      break;
    }
  }
  return failures == 0 ? 0 : 1;
}

/// 0 when a survivor's error names the killed rank. Rank 0 hosts the
/// rendezvous, so its death is told by that going too.
int names_the_victim(const ExecutionError& e, int rank, int victim) {
  std::printf("rank %d: ExecutionError: %s\n", rank, e.what());
  const std::string named = victim == 0 ? "rank 0 is gone" : "rank " + std::to_string(victim) + " died";
  return std::string(e.what()).find(named) != std::string::npos ? 0 : 1;
}

int die(coll::ProcessGroup& group, int victim) {
  group.barrier();
  if (group.rank() == victim) ::raise(SIGKILL);
  const auto t = Tensor<1>::ones({1024}, Device::flex());
  try {
    (void)group.all_reduce(t, coll::ReduceOp::Sum);
    std::fprintf(stderr, "rank %d: the all_reduce with a dead rank returned\n", group.rank());
    return 1;
  } catch (const ExecutionError& e) {
    return names_the_victim(e, group.rank(), victim);
  }
}

int mismatch(coll::ProcessGroup& group) {
  const std::size_t len = group.rank() == 1 ? 5 : 4;
  const auto t = Tensor<1>::ones({len}, Device::flex());
  try {
    (void)group.all_reduce(t, coll::ReduceOp::Sum);
    std::fprintf(stderr, "rank %d: an all_reduce of mismatched shapes returned\n", group.rank());
    return 1;
  } catch (const Error& e) {
    std::printf("rank %d: Error: %s\n", group.rank(), e.what());
    // Every rank names a rank whose call differs from its own.
    const std::string other = group.rank() == 1 ? "rank 0 passed" : "rank 1 passed";
    return std::string(e.what()).find(other) != std::string::npos ? 0 : 1;
  }
}

/// Rows of each kBatch batch this rank trains on.
std::pair<std::size_t, std::size_t> my_rows(const coll::ProcessGroup& group) {
  const std::size_t rows = dp::kBatch / static_cast<std::size_t>(group.world_size());
  return {rows * static_cast<std::size_t>(group.rank()), rows};
}

int train(coll::ProcessGroup& group, const std::string& optimizer, const std::string& dir, std::size_t bucket_bytes) {
  const Device device = Device::flex().autodiff();
  coll::GradientSync sync(group, {bucket_bytes, true});
  // Each rank starts from its own random values: the broadcast must align them.
  dp::Mlp model = sync.broadcast_parameters(dp::make_mlp(device, 100 + static_cast<std::uint64_t>(group.rank())));
  auto optim = dp::make_optimizer(optimizer);
  const auto [begin, rows] = my_rows(group);
  for (int step = 0; step < dp::kSteps; ++step) {
    const auto [x, y] = dp::batch_rows(step, begin, rows, device);
    const Tensor<1> loss = nn::loss::MseLoss{}.forward(model.forward(x), y);
    optim::GradientsParams grads = sync.backward(loss, model);
    // fc1 and fc2 (weight and bias); side and never are in no rank's loss.
    check(grads.size() == 4, "step " + std::to_string(step) + ": " + std::to_string(grads.size()) + " gradients");
    model = optim.step(dp::learning_rate(optimizer), model, std::move(grads));
  }
  check(sync.last_stats().buckets > 1, "more than one bucket");
  dp::write_floats(dir + "/rank" + std::to_string(group.rank()) + ".params", dp::flat_params(model));
  return failures == 0 ? 0 : 1;
}

int partial(coll::ProcessGroup& group, std::size_t bucket_bytes) {
  const Device device = Device::flex().autodiff();
  dp::Mlp model = coll::GradientSync(group).broadcast_parameters(dp::make_mlp(device, 7));
  const auto [begin, rows] = my_rows(group);
  const auto [x, y] = dp::batch_rows(0, begin, rows, device);
  const auto loss_of = [&, x = x, y = y] {
    Tensor<1> loss = nn::loss::MseLoss{}.forward(model.forward(x), y);
    if (group.rank() == 0) loss = loss + model.side.forward(x).sum() * 0.1;
    return loss;
  };
  // The reference: this rank's own gradients, each all-reduced on its own
  // (a parameter without one contributes zeros).
  Gradients plain = loss_of().backward();
  std::vector<std::vector<float>> want;
  module::for_each_param(model, [&](const std::string&, const module::ParamBase& p) {
    const auto g = burn::detail::grad(p.ref(), plain);
    TensorData local = g ? burn::detail::to_data(*g) : TensorData::zeros(p.ref()->spec.shape, DType::F32);
    want.push_back(group.all_reduce_data(std::move(local), coll::ReduceOp::Mean).to_vec<float>());
  });
  const auto compare = [&](const optim::GradientsParams& got, const std::string& how) {
    std::size_t index = 0;
    module::for_each_param(model, [&](const std::string& path, const module::ParamBase& p) {
      const std::string what = path + " (" + how + ")";
      const auto g = got.get_ref(p.id());
      const bool reached = path.rfind("never", 0) != 0;  // every parameter but never's has a gradient on some rank
      check(g.has_value() == reached, what + (reached ? " has no gradient" : " has a gradient"));
      if (g) {
        std::vector<double> expected(want[index].begin(), want[index].end());
        check_values(burn::detail::to_data(*g).to_vec<float>(), expected, what);
      }
      ++index;
    });
  };
  for (const bool overlap : {true, false}) {
    coll::GradientSync sync(group, {bucket_bytes, overlap});
    compare(sync.backward(loss_of(), model), overlap ? "overlap" : "after backward");
  }
  // Gradients from a plain backward pass, averaged afterwards.
  coll::GradientSync sync(group, {bucket_bytes, true});
  Gradients again = loss_of().backward();
  compare(sync.all_reduce(optim::GradientsParams::from_grads(again, model), model), "all_reduce");
  return failures == 0 ? 0 : 1;
}

int die_in_step(coll::ProcessGroup& group, int victim) {
  const Device device = Device::flex().autodiff();
  coll::GradientSync sync(group, {256, true});
  dp::Mlp model = sync.broadcast_parameters(dp::make_mlp(device, 7));
  auto optim = dp::make_optimizer("sgd");
  const auto [begin, rows] = my_rows(group);
  try {
    for (int step = 0; step < dp::kSteps; ++step) {
      if (step == 3 && group.rank() == victim) ::raise(SIGKILL);
      const auto [x, y] = dp::batch_rows(step, begin, rows, device);
      const Tensor<1> loss = nn::loss::MseLoss{}.forward(model.forward(x), y);
      model = optim.step(0.05, model, sync.backward(loss, model));
    }
    std::fprintf(stderr, "rank %d: training with a dead rank went on\n", group.rank());
    return 1;
  } catch (const ExecutionError& e) {
    return names_the_victim(e, group.rank(), victim);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  try {
    coll::ProcessGroup group = coll::ProcessGroup::from_env();
    if (scenario == "values") return values(group);
    if (scenario == "large" && argc > 2) return large(group, std::stoull(argv[2]));
    if (scenario == "die" && argc > 2) return die(group, std::stoi(argv[2]));
    if (scenario == "mismatch") return mismatch(group);
    if (scenario == "train" && argc > 4) return train(group, argv[2], argv[3], std::stoull(argv[4]));
    if (scenario == "partial" && argc > 2) return partial(group, std::stoull(argv[2]));
    if (scenario == "die-in-step" && argc > 2) return die_in_step(group, std::stoi(argv[2]));
    std::fprintf(stderr,
                 "usage: burn_collective_worker values|large N|die R|mismatch|train sgd|adam DIR BUCKET_BYTES|"
                 "partial BUCKET_BYTES|die-in-step R\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %s: %s\n", std::getenv("RANK"), e.what());
    return 3;
  }
}
