// ONNX interchange: export what a model computes as an ONNX file, and run an
// ONNX file on any device.
//
//   // Export: the forward pass runs on Device::capture(), which records the
//   // ops; they are written as ONNX operators, the parameters as initializers.
//   burn::onnx::export_model(model, example_batch, "model.onnx",
//                            burn::onnx::ExportOptions{}.with_names({"pixels"}, {"logits"}).with_dynamic_batch());
//
//   // Import: any device, autodiff included (the initializers become Params).
//   auto model = burn::onnx::Model::load("model.onnx", device);
//   std::vector<burn::TensorData> out = model.run({input});
//
// Built with BURN_ONNX (needs BURN_CAPTURE and Debian's libonnx-dev, whose
// protobuf schema and checker do the encoding and validation).
// docs/onnx.md has the operator tables.
#pragma once

#include <burn/config.hpp>

#if BURN_HAS_ONNX

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <burn/detail/tensor_ref.hpp>
#include <burn/device.hpp>
#include <burn/module/module.hpp>
#include <burn/tensor.hpp>
#include <burn/tensor_data.hpp>

namespace burn::onnx {

/// The ONNX operator set export writes.
inline constexpr std::int64_t kOpsetVersion = 17;
/// The operator sets import reads: 13 (the oldest that PyTorch's exporters
/// still write) to 26 (PyTorch 2.x's `torch.onnx.export` writes 18 to 20 by
/// default and Attention and RMSNormalization from 23 when asked; 26 adds
/// CumProd and BitCast).
inline constexpr std::int64_t kOldestImportOpset = 13;
inline constexpr std::int64_t kNewestImportOpset = 26;

struct ExportOptions {
  /// Names of the graph's inputs and outputs, in order ("input_0", "output_0", ... when empty or short).
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  /// Dim 0 of every input is symbolic (named `batch_dim_name`): one file
  /// serves any batch size. Shorthand for a DynamicAxis {i, 0,
  /// batch_dim_name} per input.
  bool dynamic_batch = false;
  std::string batch_dim_name = "batch";
  /// Symbolic dims of the inputs (a sequence length, an image size): input
  /// `input`'s dim `dim` is called `name`; dims that share a name have one
  /// size. The function is traced twice, at the examples' sizes and at
  /// others, to find what depends on them; an op whose attributes depend on
  /// them in a way ONNX cannot express without the sizes is an error naming it.
  struct DynamicAxis {
    std::size_t input = 0;
    std::size_t dim = 0;
    std::string name;
  };
  std::vector<DynamicAxis> dynamic_axes;
  /// Keep the parameters of 1 KiB and more in an external data file beside
  /// the model, `<file name>.data` (as PyTorch 2.x's exporter does), instead
  /// of inside the .onnx file. Export does so by itself for a model over
  /// protobuf's 2 GiB limit. Import and ONNX Runtime read the pair by the
  /// model's path; move the two files together.
  bool external_data = false;
  /// The graph's name and the model's doc string.
  std::string graph_name = "burn";
  std::string doc_string;

  ExportOptions with_names(std::vector<std::string> inputs, std::vector<std::string> outputs) const {
    auto o = *this;
    o.input_names = std::move(inputs);
    o.output_names = std::move(outputs);
    return o;
  }
  ExportOptions with_dynamic_batch(std::string name = "batch") const {
    auto o = *this;
    o.dynamic_batch = true;
    o.batch_dim_name = std::move(name);
    return o;
  }
  ExportOptions with_dynamic_axis(std::size_t input, std::size_t dim, std::string name) const {
    auto o = *this;
    o.dynamic_axes.push_back({input, dim, std::move(name)});
    return o;
  }
  ExportOptions with_external_data(bool on = true) const {
    auto o = *this;
    o.external_data = on;
    return o;
  }
  ExportOptions with_graph_name(std::string name) const {
    auto o = *this;
    o.graph_name = std::move(name);
    return o;
  }
};

/// A function of tensors, as export records it.
using GraphFunction = std::function<std::vector<burn::detail::TensorRef>(std::span<const burn::detail::TensorRef>)>;

/// Records `fn` on Device::capture() with inputs shaped and typed like
/// `examples` and writes the ONNX model to `path` (atomically). `params`
/// names the constants fn reads that are parameters (a module's, moved to
/// the capture device): they become initializers under those names; other
/// constants get generated names. Throws burn::Error("[onnx::export] ...")
/// naming the op that ONNX cannot express.
void export_graph(const GraphFunction& fn, std::span<const TensorData> examples,
                  std::span<const std::pair<std::string, burn::detail::TensorRef>> params, const std::string& path,
                  const ExportOptions& options = {});

/// Exports `model.forward(x)` for inputs like `example` (any device: only
/// its shape and dtype matter). The initializers are named by the module's
/// parameter paths ("fc1.weight"), as records name them.
template <module::Module M, std::size_t D, class K>
void export_model(const M& model, const Tensor<D, K>& example, const std::string& path,
                  const ExportOptions& options = {}) {
  const M captured = module::valid(module::to_device(model, Device::capture()));
  std::vector<std::pair<std::string, burn::detail::TensorRef>> params;
  module::for_each_tensor(captured,
                          [&](const std::string& p, const module::ParamBase& t) { params.emplace_back(p, t.ref()); });
  const std::vector<TensorData> examples{TensorData::zeros(example.shape(), example.dtype())};
  export_graph(
      [&captured](std::span<const burn::detail::TensorRef> in) -> std::vector<burn::detail::TensorRef> {
        return {captured.forward(Tensor<D, K>(in[0])).ref()};
      },
      examples, params, path, options);
}

/// A tensor of any rank: what an imported model's parameters hold.
class AnyTensor {
 public:
  explicit AnyTensor(burn::detail::TensorRef ref) : ref_(std::move(ref)) {}
  const burn::detail::TensorRef& ref() const noexcept { return ref_; }
  AnyTensor detach() const;

 private:
  burn::detail::TensorRef ref_;
};

/// An ONNX model loaded for running on one device. Float initializers of
/// rank 1 and more become parameters (trainable when `trainable`); integer
/// ones and float scalars are constants. The model is a burn module: records save and load it, optimisers update it, and on an
/// autodiff device gradients flow through forward().
class Model {
 public:
  /// Reads, checks (ONNX checker) and prepares `path` for `device`, with the
  /// tensors it keeps in external data files beside it (as PyTorch 2.x's
  /// exporter writes `model.onnx.data`). Throws
  /// burn::Error("[onnx::Model::load] ...") for a missing, truncated or
  /// corrupt file or data file, an opset outside kOldestImportOpset to
  /// kNewestImportOpset, and any operator this version does not run
  /// (listing the operator, its node and what is supported).
  /// With `trainable` false the model is loaded in its inference form: each
  /// batch norm after a convolution is folded into that convolution's
  /// weight and bias (docs/onnx.md, "Import").
  static Model load(const std::string& path, const Device& device, bool trainable = true);
  /// The same from the file's bytes; a model with external data is an error
  /// here (nothing says where its files are): load it by path.
  static Model from_bytes(std::span<const std::byte> bytes, const Device& device, bool trainable = true,
                          const std::string& source = "<memory>");

  /// Host data in and out, by the graph's input and output order.
  std::vector<TensorData> run(const std::vector<TensorData>& inputs) const;
  /// Tensors in and out (on the model's device; autodiff records through it).
  std::vector<burn::detail::TensorRef> forward(const std::vector<burn::detail::TensorRef>& inputs) const;
  /// Typed convenience for one input and one output.
  template <std::size_t DOut, class KOut = Float, std::size_t DIn, class KIn>
  Tensor<DOut, KOut> forward(const Tensor<DIn, KIn>& input) const {
    return Tensor<DOut, KOut>(forward(std::vector<burn::detail::TensorRef>{input.ref()}).at(0));
  }

  const std::vector<std::string>& input_names() const;
  const std::vector<std::string>& output_names() const;

  /// Module support (records, optimisers, fork/to_device): the initializers
  /// by their ONNX names, dots and slashes as they are.
  void visit_fields(module::Visitor& v, const std::string& prefix);

  /// The prepared graph (src/onnx/import.cpp), shared by copies; the
  /// parameters are each copy's own, as in every module.
  struct Program;
  Model(std::shared_ptr<const Program> program, std::vector<module::Param<AnyTensor>> params);

 private:
  std::shared_ptr<const Program> program_;
  std::vector<module::Param<AnyTensor>> params_;
};

}  // namespace burn::onnx

#endif  // BURN_HAS_ONNX
