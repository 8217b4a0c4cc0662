#include "backends/cuda/cudnn.hpp"

#if __has_include(<cudnn.h>)
#include <cudnn.h>
#define BURN_CUDA_HAS_CUDNN 1
#else
#define BURN_CUDA_HAS_CUDNN 0
#endif

#include <array>
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/dynamic_library.hpp"

#ifndef BURN_CUDA_CUDNN_LIBRARY
#error "the build defines BURN_CUDA_CUDNN_LIBRARY (cmake/backends/cuda.cmake)"
#endif

#if BURN_CUDA_HAS_CUDNN

namespace burn::cuda {
namespace {

struct DnnApi {
  decltype(&::cudnnGetVersion) get_version = nullptr;
  decltype(&::cudnnGetErrorString) get_error_string = nullptr;
  decltype(&::cudnnCreate) create = nullptr;
  decltype(&::cudnnDestroy) destroy = nullptr;
  decltype(&::cudnnSetStream) set_stream = nullptr;
  decltype(&::cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&::cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&::cudnnSetTensorNdDescriptor) set_tensor = nullptr;
  decltype(&::cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&::cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&::cudnnSetFilterNdDescriptor) set_filter = nullptr;
  decltype(&::cudnnCreateConvolutionDescriptor) create_conv = nullptr;
  decltype(&::cudnnDestroyConvolutionDescriptor) destroy_conv = nullptr;
  decltype(&::cudnnSetConvolutionNdDescriptor) set_conv = nullptr;
  decltype(&::cudnnSetConvolutionGroupCount) set_groups = nullptr;
  decltype(&::cudnnSetConvolutionMathType) set_math = nullptr;
  decltype(&::cudnnGetConvolutionForwardAlgorithm_v7) forward_algorithms = nullptr;
  decltype(&::cudnnGetConvolutionBackwardDataAlgorithm_v7) backward_data_algorithms = nullptr;
  decltype(&::cudnnGetConvolutionBackwardFilterAlgorithm_v7) backward_filter_algorithms = nullptr;
  decltype(&::cudnnConvolutionForward) forward = nullptr;
  decltype(&::cudnnConvolutionBackwardData) backward_data = nullptr;
  decltype(&::cudnnConvolutionBackwardFilter) backward_filter = nullptr;
  decltype(&::cudnnAddTensor) add_tensor = nullptr;
};

struct Dnn {
  DnnApi api;
  std::string unavailable;
  std::size_t version = 0;
};

#define BURN_DNN_RESOLVE(member, name) library.resolve(dnn.api.member, #name)

const Dnn& dnn() {
  static const Dnn loaded = [] {
    Dnn dnn;
    static DynamicLibrary library(BURN_CUDA_CUDNN_LIBRARY);
    BURN_DNN_RESOLVE(get_version, cudnnGetVersion);
    BURN_DNN_RESOLVE(get_error_string, cudnnGetErrorString);
    BURN_DNN_RESOLVE(create, cudnnCreate);
    BURN_DNN_RESOLVE(destroy, cudnnDestroy);
    BURN_DNN_RESOLVE(set_stream, cudnnSetStream);
    BURN_DNN_RESOLVE(create_tensor, cudnnCreateTensorDescriptor);
    BURN_DNN_RESOLVE(destroy_tensor, cudnnDestroyTensorDescriptor);
    BURN_DNN_RESOLVE(set_tensor, cudnnSetTensorNdDescriptor);
    BURN_DNN_RESOLVE(create_filter, cudnnCreateFilterDescriptor);
    BURN_DNN_RESOLVE(destroy_filter, cudnnDestroyFilterDescriptor);
    BURN_DNN_RESOLVE(set_filter, cudnnSetFilterNdDescriptor);
    BURN_DNN_RESOLVE(create_conv, cudnnCreateConvolutionDescriptor);
    BURN_DNN_RESOLVE(destroy_conv, cudnnDestroyConvolutionDescriptor);
    BURN_DNN_RESOLVE(set_conv, cudnnSetConvolutionNdDescriptor);
    BURN_DNN_RESOLVE(set_groups, cudnnSetConvolutionGroupCount);
    BURN_DNN_RESOLVE(set_math, cudnnSetConvolutionMathType);
    BURN_DNN_RESOLVE(forward_algorithms, cudnnGetConvolutionForwardAlgorithm_v7);
    BURN_DNN_RESOLVE(backward_data_algorithms, cudnnGetConvolutionBackwardDataAlgorithm_v7);
    BURN_DNN_RESOLVE(backward_filter_algorithms, cudnnGetConvolutionBackwardFilterAlgorithm_v7);
    BURN_DNN_RESOLVE(forward, cudnnConvolutionForward);
    BURN_DNN_RESOLVE(backward_data, cudnnConvolutionBackwardData);
    BURN_DNN_RESOLVE(backward_filter, cudnnConvolutionBackwardFilter);
    BURN_DNN_RESOLVE(add_tensor, cudnnAddTensor);
    if (!library.error().empty()) {
      dnn.unavailable = library.error() + " (cuDNN 9: NVIDIA's cudnn9-cuda-13 package; docs/cuda.md)";
      return dnn;
    }
    dnn.version = dnn.api.get_version();
    return dnn;
  }();
  return loaded;
}

#undef BURN_DNN_RESOLVE

void check(cudnnStatus_t status, const char* call, std::string_view op) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  const char* text = dnn().api.get_error_string ? dnn().api.get_error_string(status) : nullptr;
  throw ExecutionError(
      op, fmt::format("cuDNN's {} failed: {} ({})", call, text ? text : "unknown status", static_cast<int>(status)));
}

cudnnDataType_t data_type(DType d) {
  switch (d) {
    case DType::F64: return CUDNN_DATA_DOUBLE;
    case DType::F16: return CUDNN_DATA_HALF;
    case DType::BF16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}

/// A device address as the pointer cuDNN's signatures take: the host never
/// dereferences it.
void* device_pointer(std::uint64_t address) {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a device address, not host memory
  return reinterpret_cast<void*>(address);
}

/// The convolution's geometry, whichever op carries it.
struct Geometry {
  std::vector<std::size_t> stride, padding, dilation;
  std::size_t groups = 1;
  bool has_bias = false;
};

Geometry geometry_of(const ir::Op& op) {
  if (const auto* c = std::get_if<ir::Conv>(&op)) return {c->stride, c->padding, c->dilation, c->groups, c->has_bias};
  if (const auto* t = std::get_if<ir::ConvTranspose>(&op))
    return {t->stride, t->padding, t->dilation, t->groups, t->has_bias};
  const auto& w = std::get<ir::ConvWeightGrad>(op);
  return {w.stride, w.padding, w.dilation, w.groups, false};
}

/// A 1-d geometry gets a leading dim of extent 1 (stride 1, padding 0).
std::vector<int> spatial(const std::vector<std::size_t>& values, std::size_t fill) {
  std::vector<int> out;
  if (values.size() == 1) out.push_back(static_cast<int>(fill));
  for (const std::size_t v : values) out.push_back(static_cast<int>(v));
  return out;
}

}  // namespace

const std::string& cudnn_unavailable() { return dnn().unavailable; }
std::size_t cudnn_version() { return dnn().version; }

std::vector<int> cudnn_dims(const Shape& shape) {
  std::vector<int> dims;
  for (std::size_t d = 0; d < shape.rank(); ++d) {
    if (d == 2 && shape.rank() == 3) dims.push_back(1);
    dims.push_back(static_cast<int>(shape[d]));
  }
  return dims;
}

bool cudnn_takes(const ir::Op& op, std::span<const ir::TensorSpec> inputs, std::span<const ir::TensorSpec> outputs) {
  if (!std::holds_alternative<ir::Conv>(op) && !std::holds_alternative<ir::ConvTranspose>(op) &&
      !std::holds_alternative<ir::ConvWeightGrad>(op))
    return false;
  const DType d = inputs[0].dtype;
  if (d != DType::F32 && d != DType::F16 && d != DType::BF16 && d != DType::F64) return false;
  const std::size_t rank = inputs[0].shape.rank();
  if (rank < 3 || rank > 5) return false;
  // A transposed convolution is cuDNN's backward data, which needs the
  // forward convolution of its output to give back its input: true only
  // while each output padding is below the stride. (PyTorch also allows an
  // output padding below the dilation; those run on the generated kernel.)
  if (const auto* t = std::get_if<ir::ConvTranspose>(&op))
    for (std::size_t i = 0; i < t->padding_out.size(); ++i)
      if (t->padding_out[i] >= t->stride[i]) return false;
  for (const auto* specs : {&inputs, &outputs})
    for (const ir::TensorSpec& s : *specs) {
      if (s.dtype != d || s.shape.num_elements() == 0) return false;
      // cuDNN's dims and strides are ints.
      if (s.shape.num_elements() > 0x7fffffffu) return false;
    }
  return true;
}

struct DnnConv::Plan {
  enum class Kind : std::uint8_t { Forward, BackwardData, BackwardFilter } kind = Kind::Forward;
  cudnnTensorDescriptor_t x = nullptr;  // the convolution's input (ConvTranspose: its output)
  cudnnTensorDescriptor_t y = nullptr;  // the convolution's output (ConvTranspose: its input)
  cudnnTensorDescriptor_t bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t forward_algo{};
  cudnnConvolutionBwdDataAlgo_t data_algo{};
  cudnnConvolutionBwdFilterAlgo_t filter_algo{};
  std::size_t workspace = 0;
  bool found = false;
  bool wide = false;  // f64: alpha and beta are doubles

  ~Plan() {
    const DnnApi& api = dnn().api;
    for (cudnnTensorDescriptor_t t : {x, y, bias})
      if (t) (void)api.destroy_tensor(t);
    if (w) (void)api.destroy_filter(w);
    if (conv) (void)api.destroy_conv(conv);
  }
};

DnnConv::DnnConv(CUstream stream, bool allow_tf32) : stream_(stream), allow_tf32_(allow_tf32) {
  if (!dnn().unavailable.empty()) throw ConfigurationError("conv", dnn().unavailable);
  cudnnHandle_t handle = nullptr;
  if (const cudnnStatus_t s = dnn().api.create(&handle); s != CUDNN_STATUS_SUCCESS) {
    const char* text = dnn().api.get_error_string(s);
    throw ConfigurationError("conv", fmt::format("cuDNN's cudnnCreate failed: {}", text ? text : "unknown status"));
  }
  handle_ = handle;
  check(dnn().api.set_stream(handle, stream_), "cudnnSetStream", "conv");
}

DnnConv::~DnnConv() {
  plans_.clear();
  if (handle_) (void)dnn().api.destroy(static_cast<cudnnHandle_t>(handle_));
}

DnnConv::Plan& DnnConv::plan_for(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs) {
  // The key: the op's kind and geometry, every operand's dims, the dtype.
  const Geometry g = geometry_of(op);
  std::vector<std::int64_t> key{static_cast<std::int64_t>(op.index()), static_cast<std::int64_t>(g.groups),
                                g.has_bias ? 1 : 0, static_cast<std::int64_t>(inputs[0].spec.dtype)};
  for (const auto* v : {&g.stride, &g.padding, &g.dilation}) {
    key.push_back(-1);
    for (const std::size_t x : *v) key.push_back(static_cast<std::int64_t>(x));
  }
  for (const auto* ops : {&inputs, &outputs})
    for (const Operand& o : *ops) {
      key.push_back(-2);
      for (std::size_t d = 0; d < o.spec.shape.rank(); ++d) key.push_back(static_cast<std::int64_t>(o.spec.shape[d]));
    }
  auto& slot = plans_[key];
  if (slot) return *slot;

  const DnnApi& api = dnn().api;
  auto plan = std::make_unique<Plan>();
  const DType d = inputs[0].spec.dtype;
  plan->wide = d == DType::F64;
  const cudnnDataType_t type = data_type(d);
  // Which operand is which pass's x, y and w.
  const Shape* x_shape = &inputs[0].spec.shape;
  const Shape* y_shape = &outputs[0].spec.shape;
  const Shape* w_shape = &inputs[1].spec.shape;
  if (std::holds_alternative<ir::ConvTranspose>(op)) {
    plan->kind = Plan::Kind::BackwardData;
    x_shape = &outputs[0].spec.shape;
    y_shape = &inputs[0].spec.shape;
  } else if (std::holds_alternative<ir::ConvWeightGrad>(op)) {
    plan->kind = Plan::Kind::BackwardFilter;
    y_shape = &inputs[1].spec.shape;
    w_shape = &outputs[0].spec.shape;
  }
  const auto tensor = [&](cudnnTensorDescriptor_t& t, const std::vector<int>& dims) {
    check(api.create_tensor(&t), "cudnnCreateTensorDescriptor", "conv");
    std::vector<int> strides(dims.size());
    int step = 1;
    for (std::size_t k = dims.size(); k-- > 0;) {
      strides[k] = step;
      step *= dims[k];
    }
    check(api.set_tensor(t, type, static_cast<int>(dims.size()), dims.data(), strides.data()),
          "cudnnSetTensorNdDescriptor", "conv");
  };
  tensor(plan->x, cudnn_dims(*x_shape));
  tensor(plan->y, cudnn_dims(*y_shape));
  if (g.has_bias) {
    std::vector<int> dims(cudnn_dims(*y_shape).size(), 1);
    dims[1] = static_cast<int>((*y_shape)[1]);
    if (plan->kind == Plan::Kind::BackwardData) dims[1] = static_cast<int>((*x_shape)[1]);
    tensor(plan->bias, dims);
  }
  const std::vector<int> w_dims = cudnn_dims(*w_shape);
  check(api.create_filter(&plan->w), "cudnnCreateFilterDescriptor", "conv");
  check(api.set_filter(plan->w, type, CUDNN_TENSOR_NCHW, static_cast<int>(w_dims.size()), w_dims.data()),
        "cudnnSetFilterNdDescriptor", "conv");
  check(api.create_conv(&plan->conv), "cudnnCreateConvolutionDescriptor", "conv");
  const std::vector<int> pads = spatial(g.padding, 0), strides = spatial(g.stride, 1),
                         dilations = spatial(g.dilation, 1);
  check(api.set_conv(plan->conv, static_cast<int>(pads.size()), pads.data(), strides.data(), dilations.data(),
                     CUDNN_CROSS_CORRELATION, plan->wide ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT),
        "cudnnSetConvolutionNdDescriptor", "conv");
  check(api.set_groups(plan->conv, static_cast<int>(g.groups)), "cudnnSetConvolutionGroupCount", "conv");
  // f32 stays f32 unless TF32 is allowed (the default math type lets
  // cuDNN use TF32 on the GPUs that have it); the half types use tensor cores.
  const cudnnMathType_t math = (d == DType::F16 || d == DType::BF16) ? CUDNN_TENSOR_OP_MATH
                               : (d == DType::F32 && !allow_tf32_)   ? CUDNN_FMA_MATH
                                                                     : CUDNN_DEFAULT_MATH;
  check(api.set_math(plan->conv, math), "cudnnSetConvolutionMathType", "conv");

  // cuDNN's heuristic ranks the algorithms; take the best that works.
  const auto handle = static_cast<cudnnHandle_t>(handle_);
  constexpr int kWanted = 8;
  int returned = 0;
  switch (plan->kind) {
    case Plan::Kind::Forward: {
      std::array<cudnnConvolutionFwdAlgoPerf_t, kWanted> perf{};
      check(api.forward_algorithms(handle, plan->x, plan->w, plan->conv, plan->y, kWanted, &returned, perf.data()),
            "cudnnGetConvolutionForwardAlgorithm_v7", "conv");
      for (std::size_t k = 0; k < static_cast<std::size_t>(returned) && !plan->found; ++k)
        if (perf[k].status == CUDNN_STATUS_SUCCESS) {
          plan->forward_algo = perf[k].algo;
          plan->workspace = perf[k].memory;
          plan->found = true;
        }
      break;
    }
    case Plan::Kind::BackwardData: {
      std::array<cudnnConvolutionBwdDataAlgoPerf_t, kWanted> perf{};
      check(
          api.backward_data_algorithms(handle, plan->w, plan->y, plan->conv, plan->x, kWanted, &returned, perf.data()),
          "cudnnGetConvolutionBackwardDataAlgorithm_v7", "conv_transpose");
      for (std::size_t k = 0; k < static_cast<std::size_t>(returned) && !plan->found; ++k)
        if (perf[k].status == CUDNN_STATUS_SUCCESS) {
          plan->data_algo = perf[k].algo;
          plan->workspace = perf[k].memory;
          plan->found = true;
        }
      break;
    }
    case Plan::Kind::BackwardFilter: {
      std::array<cudnnConvolutionBwdFilterAlgoPerf_t, kWanted> perf{};
      check(api.backward_filter_algorithms(handle, plan->x, plan->y, plan->conv, plan->w, kWanted, &returned,
                                           perf.data()),
            "cudnnGetConvolutionBackwardFilterAlgorithm_v7", "conv_weight_grad");
      for (std::size_t k = 0; k < static_cast<std::size_t>(returned) && !plan->found; ++k)
        if (perf[k].status == CUDNN_STATUS_SUCCESS) {
          plan->filter_algo = perf[k].algo;
          plan->workspace = perf[k].memory;
          plan->found = true;
        }
      break;
    }
  }
  slot = std::move(plan);
  return *slot;
}

bool DnnConv::prepare(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs,
                      std::size_t& workspace_bytes) {
  const Plan& plan = plan_for(op, inputs, outputs);
  workspace_bytes = plan.workspace;
  return plan.found;
}

void DnnConv::run(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs,
                  std::uint64_t workspace) {
  Plan& plan = plan_for(op, inputs, outputs);
  const DnnApi& api = dnn().api;
  const auto handle = static_cast<cudnnHandle_t>(handle_);
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const void* one = plan.wide ? static_cast<const void*>(&one64) : static_cast<const void*>(&one32);
  const void* zero = plan.wide ? static_cast<const void*>(&zero64) : static_cast<const void*>(&zero32);
  void* work = device_pointer(workspace);
  switch (plan.kind) {
    case Plan::Kind::Forward:
      check(api.forward(handle, one, plan.x, device_pointer(inputs[0].address), plan.w,
                        device_pointer(inputs[1].address), plan.conv, plan.forward_algo, work, plan.workspace, zero,
                        plan.y, device_pointer(outputs[0].address)),
            "cudnnConvolutionForward", "conv");
      break;
    case Plan::Kind::BackwardData:
      check(api.backward_data(handle, one, plan.w, device_pointer(inputs[1].address), plan.y,
                              device_pointer(inputs[0].address), plan.conv, plan.data_algo, work, plan.workspace, zero,
                              plan.x, device_pointer(outputs[0].address)),
            "cudnnConvolutionBackwardData", "conv_transpose");
      break;
    case Plan::Kind::BackwardFilter:
      check(api.backward_filter(handle, one, plan.x, device_pointer(inputs[0].address), plan.y,
                                device_pointer(inputs[1].address), plan.conv, plan.filter_algo, work, plan.workspace,
                                zero, plan.w, device_pointer(outputs[0].address)),
            "cudnnConvolutionBackwardFilter", "conv_weight_grad");
      break;
  }
  // The bias, broadcast over batch and space: out = 1·bias + 1·out.
  if (plan.bias)
    check(api.add_tensor(handle, one, plan.bias, device_pointer(inputs[2].address), one,
                         plan.kind == Plan::Kind::BackwardData ? plan.x : plan.y, device_pointer(outputs[0].address)),
          "cudnnAddTensor", ir::op_name(op));
}

}  // namespace burn::cuda

#else  // built without cuDNN's header: the convolutions run on burn's kernels

namespace burn::cuda {

const std::string& cudnn_unavailable() {
  static const std::string why = "burn was built without cuDNN's header (cudnn.h); rebuild with cuDNN 9 installed";
  return why;
}
std::size_t cudnn_version() { return 0; }
std::vector<int> cudnn_dims(const Shape& shape) {
  std::vector<int> dims;
  for (std::size_t d = 0; d < shape.rank(); ++d) dims.push_back(static_cast<int>(shape[d]));
  return dims;
}
bool cudnn_takes(const ir::Op&, std::span<const ir::TensorSpec>, std::span<const ir::TensorSpec>) { return false; }

struct DnnConv::Plan {};
DnnConv::DnnConv(CUstream stream, bool allow_tf32) : stream_(stream), allow_tf32_(allow_tf32) {
  throw ConfigurationError("conv", cudnn_unavailable());
}
DnnConv::~DnnConv() = default;
bool DnnConv::prepare(const ir::Op&, std::span<const Operand>, std::span<const Operand>, std::size_t&) { return false; }
void DnnConv::run(const ir::Op&, std::span<const Operand>, std::span<const Operand>, std::uint64_t) {}

}  // namespace burn::cuda

#endif
