// What the two ATen translation units of the LibTorch backend share (engine.cpp
// and ops.cpp; nothing else may include this header, it pulls in ATen): the
// primitive wrapping an at::Tensor, the Engine, and dtype/shape conversions.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "backends/libtorch/engine.hpp"

namespace burn::libtorch {

/// A tensor of the libtorch backend. Never requires grad: burn's autodiff
/// records the graph, torch's autograd is never involved.
class TorchPrimitive final : public backend::Primitive {
 public:
  explicit TorchPrimitive(at::Tensor t) : tensor(std::move(t)) {}
  at::Tensor tensor;
};

class Engine {
 public:
  explicit Engine(at::Device d) : device(d) {}
  at::Device device;
  std::mutex rng_mutex;  ///< one random op at a time draws from `generator`
  at::Generator generator;
};

/// Every entry point runs under this guard: InferenceMode skips the autograd
/// dispatch keys entirely, so torch can neither record nor refuse anything.
using TorchGuard = c10::InferenceMode;

inline at::ScalarType scalar_type(DType d) {
  switch (d) {
    case DType::F64: return at::kDouble;
    case DType::F32: return at::kFloat;
    case DType::F16: return at::kHalf;
    case DType::BF16: return at::kBFloat16;
    case DType::I64: return at::kLong;
    case DType::I32: return at::kInt;
    case DType::I16: return at::kShort;
    case DType::I8: return at::kChar;
    case DType::U8: return at::kByte;
    case DType::Bool: return at::kBool;
    case DType::U64:
    case DType::U32:
    case DType::U16: break;
  }
  throw Error("libtorch", fmt::format("LibTorch has no dtype {}; cast to a supported dtype first", dtype_name(d)));
}

inline std::vector<std::int64_t> sizes_of(const Shape& shape) {
  std::vector<std::int64_t> out;
  out.reserve(shape.rank());
  for (std::size_t d : shape.dims()) out.push_back(static_cast<std::int64_t>(d));
  return out;
}

inline const at::Tensor& tensor_of(const backend::PrimitivePtr& p) {
  return static_cast<const TorchPrimitive&>(*p).tensor;
}

inline backend::PrimitivePtr wrap(at::Tensor t) { return std::make_shared<TorchPrimitive>(std::move(t)); }

/// Runs f, turning ATen's exceptions (bad input it checks itself, failed
/// allocations) into burn::Error "[op] LibTorch: <first line>".
template <class F>
decltype(auto) translating_errors(std::string_view op, F&& f) {
  try {
    return f();
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    throw Error(op, fmt::format("LibTorch: {}", message.substr(0, message.find('\n'))));
  }
}

}  // namespace burn::libtorch
