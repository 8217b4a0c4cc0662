// The MLP training step both bench programs time: 784-1024-1024-10, batch
// 256 (or the small 64-64-64-10, batch 16, where per-op overhead is the
// cost), relu, cross-entropy as -mean(gather(log_softmax(logits, 1),
// labels)), backward, plain SGD (lr 0.01) written by hand; optionally under
// autocast (the matmuls in bf16, f32 master weights). torch_bench.py and
// jax_bench.py time the same. TracedMlpStep is the same step through
// burn::trace: recorded once, replayed on the device each step.
#pragma once

#include <burn/config.hpp>
#if BURN_HAS_CAPTURE
#include <burn/trace.hpp>
#endif

#include <burn/activation.hpp>
#include <burn/amp/autocast.hpp>
#include <burn/burn.hpp>
#include <burn/module/ops.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace burn_bench {

/// Input features, hidden width (both hidden layers), classes, batch.
struct MlpShape {
  std::size_t in = 784, hidden = 1024, classes = 10, batch = 256;
};
inline constexpr MlpShape kSmallMlp{64, 64, 10, 16};

class MlpStep {
 public:
  /// Parameters and inputs are drawn on `device` (seed it first), which
  /// gets autodiff; the forward runs under autocast to `autocast` if given.
  explicit MlpStep(const burn::Device& device, MlpShape shape = {}, std::optional<burn::DType> autocast = {})
      : device_(device.autodiff()), shape_(shape), autocast_(autocast) {
    device_.sync();
  }

  /// The parameters (w1, w2, w3, b1, b2, b3), the input batch and the
  /// labels, detached, in that order.
  std::vector<burn::detail::TensorRef> tensors() const {
    return {w1_.detach().ref(), w2_.detach().ref(), w3_.detach().ref(), b1_.detach().ref(),
            b2_.detach().ref(), b3_.detach().ref(), x_.ref(),           labels_.ref()};
  }

  /// One step, ending with a sync so queued work is counted.
  void step() {
    std::optional<burn::amp::Autocast> scope;
    if (autocast_) scope.emplace(device_, *autocast_);
    auto h1 = burn::activation::relu(burn::module::linear(x_, w1_, b1_));
    auto h2 = burn::activation::relu(burn::module::linear(h1, w2_, b2_));
    auto logits = burn::module::linear(h2, w3_, b3_);
    auto loss = burn::activation::log_softmax(logits, 1).gather(1, labels_).mean().neg();
    scope.reset();  // backward and the update in f32, as torch.autocast scopes the forward only
    auto grads = loss.backward();
    sgd(w1_, grads);
    sgd(w2_, grads);
    sgd(w3_, grads);
    sgd(b1_, grads);
    sgd(b2_, grads);
    sgd(b3_, grads);
    device_.sync();
  }

 private:
  burn::Tensor<2> param(std::size_t in, std::size_t out) const {
    // Kaiming-like scale keeps the loss finite over many steps.
    const double scale = 2.0 / static_cast<double>(in);
    return burn::Tensor<2>::random({in, out}, burn::Distribution::uniform(-scale, scale), device_)
        .detach()
        .require_grad();
  }
  burn::Tensor<1> bias(std::size_t n) const { return burn::Tensor<1>::zeros({n}, device_).require_grad(); }
  burn::Tensor<2, burn::Int> labels() const {
    std::vector<std::int64_t> v(shape_.batch);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>((i * 7) % shape_.classes);
    return burn::Tensor<2, burn::Int>::from_data(burn::TensorData(v, {shape_.batch, 1}), device_);
  }
  template <std::size_t D>
  static void sgd(burn::Tensor<D>& p, const burn::Gradients& g) {
    if (auto grad = p.grad(g)) p = (p.detach() - grad->detach() * 0.01).require_grad();
  }

  // Declaration order is draw order: the same values on every device.
  burn::Device device_;
  MlpShape shape_;
  std::optional<burn::DType> autocast_;
  burn::Tensor<2> w1_ = param(shape_.in, shape_.hidden), w2_ = param(shape_.hidden, shape_.hidden),
                  w3_ = param(shape_.hidden, shape_.classes);
  burn::Tensor<1> b1_ = bias(shape_.hidden), b2_ = bias(shape_.hidden), b3_ = bias(shape_.classes);
  burn::Tensor<2> x_ =
      burn::Tensor<2>::random({shape_.batch, shape_.in}, burn::Distribution::normal(0.0, 1.0), device_).detach();
  burn::Tensor<2, burn::Int> labels_ = labels();
};

#if BURN_HAS_CAPTURE
/// MlpStep's step recorded once with burn::trace and replayed on `device`
/// (without autodiff: the backward is part of the recording). Starts from
/// the parameters MlpStep draws on the same device.
class TracedMlpStep {
 public:
  using Tensors = burn::TracedFunction::Tensors;

  explicit TracedMlpStep(const burn::Device& device, MlpShape shape = {})
      : device_(device.without_autodiff()), step_(record(MlpStep(device, shape).tensors())) {
    for (auto& t : state_) t = burn::detail::with_context(t, device_);
  }

  void step() {
    const Tensors out = step_(state_);
    std::copy(out.begin(), out.end(), state_.begin());  // the six new parameters; x and labels stay
    device_.sync();
  }

 private:
  burn::TracedFunction record(Tensors start) {
    state_ = std::move(start);
    return burn::trace(
        [](const Tensors& in) -> Tensors {
          using burn::Tensor;
          Tensor<2> w1 = Tensor<2>(in[0]).require_grad(), w2 = Tensor<2>(in[1]).require_grad(),
                    w3 = Tensor<2>(in[2]).require_grad(), x(in[6]);
          Tensor<1> b1 = Tensor<1>(in[3]).require_grad(), b2 = Tensor<1>(in[4]).require_grad(),
                    b3 = Tensor<1>(in[5]).require_grad();
          const Tensor<2, burn::Int> labels(in[7]);
          auto h1 = burn::activation::relu(burn::module::linear(x, w1, b1));
          auto h2 = burn::activation::relu(burn::module::linear(h1, w2, b2));
          auto logits = burn::module::linear(h2, w3, b3);
          auto loss = burn::activation::log_softmax(logits, 1).gather(1, labels).mean().neg();
          auto grads = loss.backward();
          const auto sgd = [&](const auto& p) { return (p.detach() - p.grad(grads)->detach() * 0.01).ref(); };
          return {sgd(w1), sgd(w2), sgd(w3), sgd(b1), sgd(b2), sgd(b3)};
        },
        burn::specs_of(state_));
  }

  burn::Device device_;
  Tensors state_;
  burn::TracedFunction step_;
};
#endif

}  // namespace burn_bench
