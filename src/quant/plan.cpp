// Post-training quantization: the calibration and plan scopes, the layer
// hooks module::linear / module::conv call, and the plan builder.
#include <burn/quant/ptq.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <span>

#include <fmt/format.h>

#include "quant/hooks.hpp"
#include "quant/host_tensors.hpp"
#include "quant/int8_gemm.hpp"
#include "quant/layer.hpp"

namespace burn::quant::detail {

using burn::detail::TensorImpl;
using burn::detail::TensorRef;

thread_local constinit std::size_t open_scopes = 0;

namespace {

thread_local constinit const QuantPlan* active_plan = nullptr;

/// max |x| over the whole tensor, read back to the host.
float abs_max(const TensorRef& x) {
  TensorRef a = burn::detail::reduce_all(ir::ReduceOp::Max, burn::detail::unary(ir::UnaryOp::Abs, x));
  return burn::detail::to_data(a).convert<float>().to_vec<float>()[0];
}

float host_abs_max(std::span<const float> values) {
  // The simd reduction lets the compiler reorder the comparisons, which
  // plain loops may not without fast-math: vectorized, the pass runs at
  // memory speed (it was a fifth of an int8 Linear layer's time).
  float amax = 0.0f;
  const float* v = values.data();
  const std::size_t count = values.size();
#pragma omp simd reduction(max : amax)
  for (std::size_t i = 0; i < count; ++i) amax = std::max(amax, std::abs(v[i]));
  return amax;
}

float activation_scale(float amax) {
  return std::max(amax / static_cast<float>(kernels::exact_activation_qmax()), std::numeric_limits<float>::min());
}

/// A quantized layer's f32 input on the host, quantized to int8 with the
/// layer's calibrated scale or (dynamic) its own max |x|.
struct Int8Input {
  std::vector<std::int8_t> values;
  float scale = 1.0f;
};

Int8Input quantize_host_input(const QuantizedLayer& layer, const TensorRef& x) {
  const HostInput input(x);
  const std::span<const float> values = input.floats();
  Int8Input q;
  q.scale = activation_scale(layer.input_amax ? *layer.input_amax : host_abs_max(values));
  q.values.resize(values.size());
  kernels::quantize_activations(values.data(), values.size(), q.scale, kernels::exact_activation_qmax(),
                                q.values.data());
  return q;
}

/// x rounded to the activation grid of `scale` (on x's device): the values
/// the int8 product sees, in f32.
TensorRef fake_quantize(const TensorRef& x, float scale) {
  const double qmax = kernels::exact_activation_qmax();
  TensorRef q = burn::detail::unary(ir::UnaryOp::Round, burn::detail::binary_scalar(ir::BinaryOp::Div, x, scale));
  q = burn::detail::clamp(q, Scalar(-qmax), Scalar(qmax));
  return burn::detail::binary_scalar(ir::BinaryOp::Mul, q, scale);
}

/// Quantized layers compute without gradients (rounding has none worth
/// following); an input that autodiff tracks would silently lose its
/// gradient, so it is an error instead.
void check_untracked(const TensorRef& x, const char* op) {
  if (x->node && is_grad_enabled())
    throw Error(op,
                "a quantized layer got an input that records gradients; quantized models are for inference: "
                "run them under burn::NoGradGuard, or quantize model.valid()");
}

}  // namespace

void QuantPlan::add(const std::string& path, const TensorRef& weight, LayerKind kind, QuantizedRefs q,
                    const QuantScheme& scheme, std::optional<float> input_amax) {
  auto layer = std::make_shared<QuantizedLayer>();
  layer->kind = kind;
  layer->scheme = scheme;
  layer->q = std::move(q);
  layer->shape = layer->q.values->spec.shape;
  layer->input_amax = input_amax;
  layer->weight = weight;
  by_weight_[weight.get()] = entries_.size();
  entries_.push_back({path, std::move(layer)});
}

QuantizedLayer* QuantPlan::find(const TensorImpl* weight) const {
  auto it = by_weight_.find(weight);
  return it == by_weight_.end() ? nullptr : entries_[it->second].layer.get();
}

namespace {
/// Whether the model holds a placeholder for this layer's weight.
bool holds_placeholder(const QuantScheme& scheme, const Device& device) {
  return computes_in_int8(scheme) && kernels::host_memory_device(device);
}

/// The dequantized weight in the dtype the model's weight has.
TensorRef dequantize_as(const QuantizedRefs& q, const QuantScheme& scheme, DType dtype) {
  TensorRef d = detail::dequantize(q, scheme);
  return d->spec.dtype == dtype ? d : burn::detail::cast(d, dtype);
}
}  // namespace

TensorRef QuantPlan::dequantized(const TensorRef& weight) const {
  const QuantizedLayer* layer = find(weight.get());
  if (layer == nullptr || !holds_placeholder(layer->scheme, weight->device)) return weight;
  return dequantize_as(QuantizedRefs{layer->values(), layer->q.scales}, layer->scheme, weight->spec.dtype);
}

TensorRef held_weight(const QuantizedRefs& q, const QuantScheme& scheme, const TensorRef& like) {
  const DType dtype = like->spec.dtype;
  if (holds_placeholder(scheme, like->device)) {
    const Shape& shape = like->spec.shape;
    const TensorRef one = burn::detail::full(Shape(std::vector<std::size_t>(shape.rank(), 1)),
                                             Scalar(std::numeric_limits<double>::quiet_NaN()),
                                             TensorCreationOptions(like->device, dtype), TensorKind::Float);
    std::vector<std::int64_t> dims;
    for (std::size_t d : shape.dims()) dims.push_back(static_cast<std::int64_t>(d));
    return burn::detail::expand(one, dims);
  }
  return dequantize_as(q, scheme, dtype);
}

PlanScope::PlanScope(const QuantPlan& plan) : previous_(active_plan) {
  active_plan = &plan;
  ++open_scopes;
}
PlanScope::~PlanScope() {
  active_plan = previous_;
  --open_scopes;
}

struct CalibrationScope::State {
  std::map<const TensorImpl*, std::string> weights;
  std::map<std::string, LayerStats> layers;
  State* previous = nullptr;
};

namespace {
thread_local constinit CalibrationScope::State* active_calibration = nullptr;

void observe(const TensorRef& x, const TensorRef& weight, LayerKind kind) {
  for (CalibrationScope::State* s = active_calibration; s != nullptr; s = s->previous) {
    auto it = s->weights.find(weight.get());
    if (it == s->weights.end()) continue;
    LayerStats& stats = s->layers[it->second];
    stats.kind = kind;
    stats.input_amax = std::max(stats.input_amax, abs_max(x));
    ++stats.calls;
    return;
  }
}
}  // namespace

CalibrationScope::CalibrationScope(std::map<const TensorImpl*, std::string> weights)
    : state_(std::make_unique<State>()) {
  state_->weights = std::move(weights);
  state_->previous = active_calibration;
  active_calibration = state_.get();
  ++open_scopes;
}
CalibrationScope::~CalibrationScope() {
  active_calibration = state_->previous;
  --open_scopes;
}
Calibration CalibrationScope::result() const { return Calibration{state_->layers}; }

std::optional<TensorRef> linear_hook(const TensorRef& x, const TensorRef& weight, const burn::detail::OptRef& bias) {
  if (active_calibration) observe(x, weight, LayerKind::Linear);
  QuantizedLayer* layer = active_plan ? active_plan->find(weight.get()) : nullptr;
  if (layer == nullptr || !layer->quantizes_activations()) return std::nullopt;
  check_untracked(x, "quantized linear");

  const Shape x_shape = x->spec.shape;
  const std::size_t k = weight->spec.shape[0], n = weight->spec.shape[1];
  const std::size_t m = x_shape.num_elements() / k;
  Shape out_shape = x_shape;
  out_shape[x_shape.rank() - 1] = n;
  TensorRef rows = burn::detail::reshape_exact(x, Shape{m, k});
  if (rows->spec.dtype != DType::F32) rows = burn::detail::cast(rows, DType::F32);

  if (!kernels::host_memory_device(x->device)) {
    // The same values in f32 arithmetic on the device: the activations on the
    // int8 grid times the dequantized weight the model holds.
    const float scale = activation_scale(layer->input_amax ? *layer->input_amax : abs_max(rows));
    TensorRef y = burn::detail::matmul(fake_quantize(rows, scale), weight);
    if (bias) y = burn::detail::binary(ir::BinaryOp::Add, y, burn::detail::reshape_exact(*bias, Shape{1, n}));
    return burn::detail::reshape_exact(y, out_shape);
  }

  const Int8Input q = quantize_host_input(*layer, rows);
  HostOutput out(x->device, out_shape);
  std::shared_ptr<const std::vector<float>> b;
  if (bias) b = layer->bias_values(*bias);
  kernels::int8_matmul(q.values.data(), m, q.scale, layer->int8_weights(),
                       kernels::Int8Output{out.data<float>(), n, 1, b ? b->data() : nullptr});
  layer->release_values();
  return std::move(out).finish();
}

std::optional<TensorRef> conv2d_hook(const TensorRef& x, const TensorRef& weight, const burn::detail::OptRef& bias,
                                     const ir::Conv& op, const std::function<TensorRef(const TensorRef&)>& convolve) {
  if (active_calibration) observe(x, weight, LayerKind::Conv2d);
  QuantizedLayer* layer = active_plan ? active_plan->find(weight.get()) : nullptr;
  if (layer == nullptr || !layer->quantizes_activations()) return std::nullopt;
  check_untracked(x, "quantized conv2d");
  if (!kernels::host_memory_device(x->device))
    return convolve(fake_quantize(x, activation_scale(layer->input_amax ? *layer->input_amax : abs_max(x))));

  // The convolution's own checks (shapes, channels, groups, a kernel larger
  // than the padded input), with its errors, and its output shape.
  std::vector<ir::TensorSpec> specs{x->spec, weight->spec};
  if (bias) specs.push_back((*bias)->spec);
  const Shape out_shape = ir::infer_outputs(ir::Op{op}, specs).at(0).shape;
  const Shape& x_shape = x->spec.shape;
  const Shape& w_shape = weight->spec.shape;
  kernels::Int8Conv2dGeometry g;
  g.channels = x_shape[1];
  g.height = x_shape[2];
  g.width = x_shape[3];
  g.out_channels = w_shape[0];
  g.kernel_h = w_shape[2];
  g.kernel_w = w_shape[3];
  std::copy_n(op.stride.begin(), 2, g.stride.begin());
  std::copy_n(op.padding.begin(), 2, g.padding.begin());
  std::copy_n(op.dilation.begin(), 2, g.dilation.begin());
  g.groups = op.groups;
  if (const Shape int8_shape{x_shape[0], g.out_channels, g.out_height(), g.out_width()}; int8_shape != out_shape)
    throw Error("quantized conv2d", fmt::format("the int8 convolution's output {} differs from the convolution's {}",
                                                int8_shape.to_string(), out_shape.to_string()));

  const Int8Input q = quantize_host_input(*layer, x->spec.dtype == DType::F32 ? x : burn::detail::cast(x, DType::F32));
  HostOutput out(x->device, out_shape);
  std::shared_ptr<const std::vector<float>> b;
  if (bias) b = layer->bias_values(*bias);
  kernels::int8_conv2d(q.values.data(), x_shape[0], q.scale, g, layer->int8_conv_weights(g), b ? b->data() : nullptr,
                       out.data<float>());
  layer->release_values();
  return std::move(out).finish();
}

QuantScheme layer_scheme(const QuantScheme& configured, LayerKind kind) {
  QuantScheme s = configured;
  // Per channel means per output channel: Linear's weight is [d_in, d_out],
  // Conv2d's [out, in / groups, kh, kw].
  if (s.level == QuantLevel::Channel) s.axis = kind == LayerKind::Linear ? 1 : 0;
  return s;
}

PlanBuilder::PlanBuilder(const Calibration& calibration, const QuantizeConfig& config)
    : calibration_(&calibration), config_(config) {
  if (calibration.layers.empty())
    throw Error("quantize_model",
                "the calibration saw no Linear or Conv2d layer; run the model's forward inside calibrate()");
}

TensorRef PlanBuilder::quantize(const std::string& path, const TensorRef& weight) {
  if (calibration_ == nullptr) return weight;
  auto it = calibration_->layers.find(path);
  if (it == calibration_->layers.end()) return weight;
  const LayerStats& stats = it->second;
  Pending p{stats.kind, layer_scheme(config_.weights, stats.kind), {}, std::nullopt};
  if (config_.activations == ActivationScale::Static) p.input_amax = stats.input_amax;
  try {
    p.q = detail::quantize(weight, p.scheme);
  } catch (const Error& e) {
    throw Error("quantize_model", fmt::format("layer '{}': {}", path, e.what()));
  }
  TensorRef held = held_weight(p.q, p.scheme, weight);
  pending_[path] = std::move(p);
  return held;
}

void PlanBuilder::add_pending(const std::string& path, Pending pending) { pending_[path] = std::move(pending); }

void PlanBuilder::bind(const std::string& path, const TensorRef& weight) {
  auto it = pending_.find(path);
  if (it == pending_.end()) return;
  Pending& p = it->second;
  plan_->add(path, weight, p.kind, std::move(p.q), p.scheme, p.input_amax);
  pending_.erase(it);
}

std::shared_ptr<const QuantPlan> PlanBuilder::finish(const char* op) {
  if (!pending_.empty()) {
    std::string names;
    for (const auto& [path, p] : pending_) {
      if (!names.empty()) names += ", ";
      names += path;
    }
    throw Error(op, fmt::format("quantized layers {} are not parameters of the model", names));
  }
  return plan_;
}

}  // namespace burn::quant::detail
