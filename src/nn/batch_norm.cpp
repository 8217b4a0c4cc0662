// BatchNorm. In training, on the [N, C, L] view of the input (L = the
// product of the spatial dims): the batch-norm op (ir::BatchNorm: statistics
// and output in one kernel) where the backend has it; elsewhere per-channel
// statistics as two chained mean reductions (over L, then over N;
// equal-sized groups make the mean of means exact) and the affine transform
// folded into one per-channel scale and shift: two full reductions and four
// elementwise ops. In evaluation, two elementwise ops on the input as it is.
#include <fmt/format.h>

#include <array>
#include <vector>

#include <burn/amp/autocast.hpp>
#include <burn/nn/batch_norm.hpp>

namespace burn::nn {

namespace {

/// Mean over dims 2 and 0 of [N, C, L], as [1, C, 1]; size-1 dims are skipped.
Tensor<3> channel_mean(const Tensor<3>& t) {
  Tensor<3> m = t.dims()[2] == 1 ? t : t.mean_dim(2);
  return m.dims()[0] == 1 ? m : m.mean_dim(0);
}

}  // namespace

BatchNorm BatchNormConfig::init(const TensorCreationOptions& options) const {
  if (num_features == 0) throw Error("BatchNormConfig", "num_features must be positive");
  if (!(epsilon > 0.0)) throw Error("BatchNormConfig", fmt::format("epsilon must be positive, got {}", epsilon));
  if (!(momentum >= 0.0 && momentum <= 1.0))
    throw Error("BatchNormConfig", fmt::format("momentum must be in [0, 1], got {}", momentum));
  const Shape shape{num_features};
  return BatchNorm{module::Param(Tensor<1>::ones(shape, options)),
                   module::Param(Tensor<1>::zeros(shape, options)),
                   module::RunningState(Tensor<1>::zeros(shape, options)),
                   module::RunningState(Tensor<1>::ones(shape, options)),
                   momentum,
                   epsilon,
                   {}};
}

namespace detail {

burn::detail::TensorRef batch_norm(const BatchNorm& layer, const burn::detail::TensorRef& x_in, bool training) {
  const burn::detail::TensorRef x_ref = amp::detail::float32_input(x_in);
  const Shape& shape = x_ref->spec.shape;
  const std::size_t c = layer.weight->dims()[0];
  if (shape[1] != c)
    throw Error("BatchNorm", fmt::format("input {} has {} channels (dim 1) but the layer has {} features",
                                         shape.to_string(), shape[1], c));
  if (!training) {
    // The input keeps its own shape: y = x * scale + shift with [1, C, 1...]
    // operands broadcast over it. On a fusing device the two ops then join
    // the convolution before them and the relu after them; a reshape of x
    // to [N, C, L] and back would have cut them into separate passes, each
    // writing the whole activation (the burn-train CNN's test pass: two
    // extra passes over 100 MB per batch of 1000).
    std::vector<std::size_t> per_channel(shape.rank(), 1);
    per_channel[1] = c;
    const auto channel = [&](const burn::detail::TensorRef& t) {
      return burn::detail::reshape_exact(t, Shape(per_channel));
    };
    const auto scale = burn::detail::binary(
        ir::BinaryOp::Mul, channel(layer.weight->ref()),
        burn::detail::unary(
            ir::UnaryOp::Rsqrt,
            burn::detail::binary_scalar(ir::BinaryOp::Add, channel(layer.running_var->ref()), layer.epsilon)));
    const auto shift =
        burn::detail::binary(ir::BinaryOp::Sub, channel(layer.bias->ref()),
                             burn::detail::binary(ir::BinaryOp::Mul, channel(layer.running_mean->ref()), scale));
    auto out = burn::detail::binary(ir::BinaryOp::Add, burn::detail::binary(ir::BinaryOp::Mul, x_ref, scale), shift);
    burn::detail::mark_composite(
        out, burn::detail::Composite::BatchNorm,
        {x_ref, layer.weight->ref(), layer.bias->ref(), layer.running_mean->ref(), layer.running_var->ref()}, 0,
        layer.epsilon);
    return out;
  }
  const std::size_t n = shape[0];
  std::size_t l = 1;
  for (std::size_t i = 2; i < shape.rank(); ++i) l *= shape[i];
  const Tensor<3> x(burn::detail::reshape_exact(x_ref, Shape{n, c, l}));
  const std::array<std::size_t, 3> per_channel{1, c, 1};
  const Tensor<3> weight = layer.weight->reshape(per_channel);
  const Tensor<3> bias = layer.bias->reshape(per_channel);

  const std::size_t count = n * l;
  if (count < 2)
    throw Error("BatchNorm", fmt::format("training needs more than one value per channel, got input {}; use a "
                                         "larger batch or evaluation mode",
                                         shape.to_string()));
  // One kernel where the backend has it: the statistics and y in two
  // reads of x instead of a dozen passes, and one backward rule.
  const ir::BatchNorm op{layer.epsilon};
  std::vector<burn::detail::TensorRef> fused;
  if (x_ref->device.supports_op(op)) {
    const std::array<burn::detail::TensorRef, 3> inputs{x_ref, layer.weight->ref(), layer.bias->ref()};
    fused = burn::detail::execute(op, inputs);
  }
  const Shape stats_shape{1, c, 1};
  const Tensor<3> mean =
      fused.empty() ? channel_mean(x) : Tensor<3>(burn::detail::reshape_exact(fused[1], stats_shape));
  Tensor<3> var = mean;
  Tensor<3> y = x;
  if (fused.empty()) {
    const Tensor<3> diff = x - mean;
    var = channel_mean(diff * diff);  // biased: what normalises the batch
    y = diff * (weight * (var + layer.epsilon).rsqrt()) + bias;
  } else {
    var = Tensor<3>(burn::detail::reshape_exact(fused[2], stats_shape));
    y = Tensor<3>(burn::detail::reshape_exact(fused[0], Shape{n, c, l}));
  }

  {
    // The running statistics never join the autodiff graph (the output,
    // made after this scope, does).
    NoGradGuard no_grad;
    const double m = layer.momentum;
    const double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
    const std::array<std::size_t, 1> flat{c};
    layer.running_mean.update(layer.running_mean.val() * (1.0 - m) + mean.detach().reshape(flat) * m);
    layer.running_var.update(layer.running_var.val() * (1.0 - m) + var.detach().reshape(flat) * (m * unbias));
  }
  return burn::detail::reshape_exact(y.ref(), shape);
}

}  // namespace detail

}  // namespace burn::nn
