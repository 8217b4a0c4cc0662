// Post-training quantization of a module's Linear and Conv2d layers.
//
//   // 1. Calibrate: run the f32 model over a few batches; every Linear and
//   //    Conv2d layer records the range of its inputs.
//   auto calibration = burn::quant::calibrate(model, [&](const Model& m) {
//     for (auto& batch : calibration_batches) m.forward(batch.images);
//   });
//   // 2. Quantize the weights of the layers seen (int8 per output channel
//   //    by default) and fix the input scales from the calibration.
//   auto qmodel = burn::quant::quantize_model(model, calibration);
//   // 3. Run: the layers compute in int8 with f32 outputs.
//   auto logits = qmodel.forward(images);
//   burn::quant::save_quantized(qmodel, "model-int8.safetensors");
//   auto again = burn::quant::load_quantized(ModelConfig{}.init(device), "model-int8.safetensors");
//
// How a quantized layer computes, for input x and weight W:
//  - weights with an int8 per-tensor or per-channel scheme: x is quantized
//    per tensor with the calibrated scale (static) or its own max|x| (dynamic,
//    as PyTorch's quantize_dynamic), the product runs in int8 with 32-bit
//    accumulation, and the bias is added in f32. On the host devices (cpu,
//    flex, ndarray) Linear and Conv2d layers compute in integers (a
//    convolution unfolds its input into the same int8 GEMM); other devices
//    compute the same values in f32 (the quantized input times the
//    dequantized weight).
//  - block schemes (int8 or int4 blocks) quantize the weights only: the layer
//    computes in f32 with the dequantized weight (memory, not arithmetic, is
//    what they save).
// `qmodel.model()` is the same network with the dequantized weights, usable on
// any device and by code that does not know about quantization.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <burn/autodiff.hpp>
#include <burn/module/module.hpp>
#include <burn/quant/quantized_tensor.hpp>
#include <burn/tensor_data.hpp>

namespace burn::quant {

/// The layers a quantized model replaces.
enum class LayerKind { Linear, Conv2d };

/// What calibration saw of one layer, keyed by its weight's path.
struct LayerStats {
  LayerKind kind = LayerKind::Linear;
  /// max |input| over every call.
  float input_amax = 0.0f;
  std::size_t calls = 0;
};

/// The result of calibrate(): the Linear/Conv2d layers a model's forward
/// used, by weight path ("fc1.weight"), with their input ranges.
struct Calibration {
  std::map<std::string, LayerStats> layers;
};

/// How activations get their scale.
enum class ActivationScale {
  /// The calibrated max |input| of each layer (PyTorch's static quantization).
  Static,
  /// Each call's own max |input| (PyTorch's dynamic quantization).
  Dynamic,
};

struct QuantizeConfig {
  /// The weights' scheme. Channel level means per output channel: the axis
  /// is chosen per layer (1 for Linear's [d_in, d_out], 0 for Conv2d's
  /// [out, in, kh, kw]); block schemes quantize weights only.
  QuantScheme weights = QuantScheme::int8_per_channel(0);
  ActivationScale activations = ActivationScale::Static;

  QuantizeConfig with_weights(QuantScheme s) const {
    auto c = *this;
    c.weights = s;
    return c;
  }
  QuantizeConfig with_activations(ActivationScale a) const {
    auto c = *this;
    c.activations = a;
    return c;
  }
};

namespace detail {

/// One quantized layer; opaque outside src/quant.
struct QuantizedLayer;

/// The quantized layers of a model, keyed by their weight tensors: while a
/// plan is in scope, module::linear and module::conv2d called with one of
/// these weights compute the quantized layer instead.
class QuantPlan {
 public:
  struct Entry {
    std::string path;
    std::shared_ptr<QuantizedLayer> layer;
  };
  /// Registers `weight` (the tensor now in the model: see held_weight) as layer `path`.
  void add(const std::string& path, const burn::detail::TensorRef& weight, LayerKind kind, QuantizedRefs q,
           const QuantScheme& scheme, std::optional<float> input_amax);
  const std::vector<Entry>& entries() const noexcept { return entries_; }
  /// The layer whose weight is `weight` (by identity), or null.
  QuantizedLayer* find(const burn::detail::TensorImpl* weight) const;
  /// The dequantized value of the layer whose held weight is `weight`
  /// (made now where the model holds a placeholder); `weight` itself for a
  /// tensor that is not a quantized layer's.
  burn::detail::TensorRef dequantized(const burn::detail::TensorRef& weight) const;

 private:
  std::vector<Entry> entries_;
  std::map<const burn::detail::TensorImpl*, std::size_t> by_weight_;
};

/// While alive, this thread's Linear/Conv2d calls use `plan` (the innermost scope's plan wins).
class PlanScope {
 public:
  explicit PlanScope(const QuantPlan& plan);
  ~PlanScope();
  PlanScope(const PlanScope&) = delete;
  PlanScope& operator=(const PlanScope&) = delete;

 private:
  const QuantPlan* previous_;
};

/// While alive, this thread's Linear/Conv2d calls whose weight is one of
/// `weights` (TensorImpl identity -> path) record their input ranges.
class CalibrationScope {
 public:
  explicit CalibrationScope(std::map<const burn::detail::TensorImpl*, std::string> weights);
  ~CalibrationScope();
  CalibrationScope(const CalibrationScope&) = delete;
  CalibrationScope& operator=(const CalibrationScope&) = delete;
  Calibration result() const;

  struct State;  // defined in src/quant/plan.cpp

 private:
  std::unique_ptr<State> state_;
};

/// The scheme a layer of `kind` gets from the configured one (per channel
/// means per output channel).
QuantScheme layer_scheme(const QuantScheme& configured, LayerKind kind);

/// What a quantized model holds for a layer's weight `like` (its shape,
/// dtype and device). An int8 per-tensor or per-channel layer on a host
/// device computes from its int8 values alone, so it holds a placeholder of
/// the weight's shape that takes no memory: one NaN, broadcast, so that a
/// read other than through the layer shows NaN rather than plausible
/// numbers. Every other layer holds its dequantized weight.
burn::detail::TensorRef held_weight(const QuantizedRefs& q, const QuantScheme& scheme,
                                    const burn::detail::TensorRef& like);

/// Builds a plan in two passes over a model: quantize() replaces each
/// calibrated layer's weight by its dequantized value (inside map_params),
/// then bind() keys the layer by the tensor the model ended up holding
/// (preparing a parameter may wrap it in a new autodiff leaf).
class PlanBuilder {
 public:
  struct Pending {
    LayerKind kind;
    QuantScheme scheme;
    QuantizedRefs q;
    std::optional<float> input_amax;
  };
  PlanBuilder() = default;
  PlanBuilder(const Calibration& calibration, const QuantizeConfig& config);
  /// The tensor the model should hold at `path`: `weight` itself for a
  /// layer that is not quantized.
  burn::detail::TensorRef quantize(const std::string& path, const burn::detail::TensorRef& weight);
  /// Adds a layer whose quantized data is already known (a loaded record).
  void add_pending(const std::string& path, Pending pending);
  void bind(const std::string& path, const burn::detail::TensorRef& weight);
  /// Throws burn::Error naming `op` if a layer was never bound.
  std::shared_ptr<const QuantPlan> finish(const char* op);

 private:
  const Calibration* calibration_ = nullptr;
  QuantizeConfig config_;
  std::map<std::string, Pending> pending_;
  std::shared_ptr<QuantPlan> plan_ = std::make_shared<QuantPlan>();
};

/// A quantized record being read: the quantized layers and the other tensors.
class QuantizedRecordReader {
 public:
  explicit QuantizedRecordReader(const std::filesystem::path& path);
  /// The value the module's tensor at `path` gets: the dequantized weight of
  /// a quantized layer, else the stored tensor in the parameter's dtype, on
  /// its device. Throws burn::Error for a missing key or a shape mismatch.
  burn::detail::TensorRef value(const std::string& path, const module::ParamBase& p);
  /// The quantized layers value() met, on their weights' devices.
  void add_layers(PlanBuilder& builder);
  /// Throws burn::Error listing the file's entries that matched no tensor.
  void check_all_used() const;

 private:
  struct Layer {
    LayerKind kind;
    QuantScheme scheme;
    std::optional<float> input_amax;
    TensorData values, scales;
    std::optional<PlanBuilder::Pending> placed;  // set by value(), on the weight's device
  };
  std::filesystem::path path_;
  std::map<std::string, TensorData> tensors_;
  std::map<std::string, Layer> layers_;
  std::map<std::string, bool> used_;
};

/// Collects a quantized model's tensors and writes them.
class QuantizedRecordWriter {
 public:
  explicit QuantizedRecordWriter(const QuantPlan& plan);
  /// Adds the module tensor at `path` (skipped for quantized weights, which
  /// the plan supplies).
  void add(const std::string& path, const burn::detail::TensorRef& value);
  /// Writes atomically; throws burn::Error("[save_quantized] ...") on failure.
  /// Adds the quantized layers to what add() collected (once: the writer
  /// is spent after it).
  void save(const std::filesystem::path& path);

 private:
  const QuantPlan& plan_;
  std::map<std::string, TensorData> tensors_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace detail

/// A model whose Linear/Conv2d layers compute quantized. Call forward() as on
/// the model itself; model() is the same network with dequantized weights.
/// The int8 layers on host devices keep only their int8 form (the model
/// holds placeholders for their weights: detail::held_weight): the int8
/// values until a layer first runs, then the kernel's packed copy alone
/// (about a quarter of the f32 weights' memory), from which records and
/// model() read the values back.
template <module::Module M>
class QuantizedModel {
 public:
  QuantizedModel(M model, std::shared_ptr<const detail::QuantPlan> plan)
      : model_(std::move(model)), plan_(std::move(plan)) {}

  template <class... Args>
  auto forward(Args&&... args) const {
    detail::PlanScope scope(*plan_);
    return model_.forward(std::forward<Args>(args)...);
  }
  /// Runs `f(model())` with the quantized layers in scope (for models whose
  /// entry point is not called forward).
  template <class F>
  decltype(auto) run(F&& f) const {
    detail::PlanScope scope(*plan_);
    return std::forward<F>(f)(model_);
  }

  /// The same network with each quantized layer's dequantized weight (the
  /// values the quantized layers multiply by), made on each call where the
  /// quantized model holds a placeholder; it runs on its own, without the
  /// quantized layers.
  M model() const {
    return module::map_params(
        model_, [&](const std::string&, const module::ParamBase& p) { return plan_->dequantized(p.ref()); });
  }
  const detail::QuantPlan& plan() const noexcept { return *plan_; }
  /// The paths of the quantized layers' weights.
  std::vector<std::string> quantized_layers() const {
    std::vector<std::string> out;
    for (const auto& e : plan_->entries()) out.push_back(e.path);
    return out;
  }

 private:
  M model_;
  std::shared_ptr<const detail::QuantPlan> plan_;
};

/// Runs `run(model)` (a few forward passes over calibration data) and returns
/// the input range of every Linear and Conv2d layer it used. Gradients are
/// not recorded.
template <module::Module M, class F>
Calibration calibrate(const M& model, F&& run) {
  std::map<const burn::detail::TensorImpl*, std::string> weights;
  module::for_each_param(model,
                         [&](const std::string& path, const module::ParamBase& p) { weights[p.ref().get()] = path; });
  detail::CalibrationScope scope(std::move(weights));
  {
    NoGradGuard no_grad;
    std::forward<F>(run)(model);
  }
  return scope.result();
}

/// Quantizes the weights of the layers `calibration` saw; throws
/// burn::Error("[quantize_model] ...") when it saw none.
template <module::Module M>
QuantizedModel<M> quantize_model(const M& model, const Calibration& calibration, const QuantizeConfig& config = {}) {
  detail::PlanBuilder builder(calibration, config);
  M quantized = module::map_params(
      model, [&](const std::string& path, const module::ParamBase& p) { return builder.quantize(path, p.ref()); });
  module::for_each_param(quantized,
                         [&](const std::string& path, const module::ParamBase& p) { builder.bind(path, p.ref()); });
  return QuantizedModel<M>(std::move(quantized), builder.finish("quantize_model"));
}

/// Saves a quantized model as safetensors: quantized weights as I8 values
/// (int4 packed two per byte as U8) with F32 "<path>.scales", their scheme and
/// calibrated input range in the metadata, every other tensor as it is.
template <module::Module M>
void save_quantized(const QuantizedModel<M>& model, const std::filesystem::path& path) {
  detail::QuantizedRecordWriter writer(model.plan());
  // The model as held: the quantized layers' weights come from the plan.
  model.run([&](const M& held) {
    module::for_each_tensor(held, [&](const std::string& p, const module::ParamBase& t) { writer.add(p, t.ref()); });
  });
  writer.save(path);
}

/// Loads what save_quantized wrote into a model of the same structure (for
/// example freshly initialised from its config), on that model's devices.
/// Throws burn::Error("[load_quantized] ...") for a missing, corrupt or
/// mismatched file.
template <module::Module M>
QuantizedModel<M> load_quantized(M model, const std::filesystem::path& path) {
  detail::QuantizedRecordReader reader(path);
  M loaded = module::map_tensors(std::move(model),
                                 [&](const std::string& p, const module::ParamBase& t) { return reader.value(p, t); });
  reader.check_all_used();
  detail::PlanBuilder builder;
  reader.add_layers(builder);
  module::for_each_param(loaded, [&](const std::string& p, const module::ParamBase& t) { builder.bind(p, t.ref()); });
  return QuantizedModel<M>(std::move(loaded), builder.finish("load_quantized"));
}

}  // namespace burn::quant
