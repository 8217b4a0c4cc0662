// What module::linear and module::conv call into quantization
// (include/burn/quant/ptq.hpp): a check cheap enough for every layer call,
// then the calibration record or the quantized layer.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include <burn/detail/ops.hpp>
#include <burn/ir/op.hpp>
#include <burn/module/ops.hpp>

namespace burn::quant::detail {

/// How many calibration or plan scopes this thread has open.
extern thread_local constinit std::size_t open_scopes;

inline bool may_apply() noexcept { return open_scopes != 0; }

/// The output of the quantized Linear layer whose weight is `weight`, or
/// nullopt when the layer computes as usual (records its input range under
/// calibration).
std::optional<burn::detail::TensorRef> linear_hook(const burn::detail::TensorRef& x,
                                                   const burn::detail::TensorRef& weight,
                                                   const burn::detail::OptRef& bias);

/// The output of the quantized Conv2d layer whose weight is `weight`, or
/// nullopt when the layer computes as usual (records its input range under
/// calibration). `op` is the call's 2-D convolution; `convolve` runs it on
/// another input: devices outside host memory convolve the quantized input
/// in f32.
std::optional<burn::detail::TensorRef> conv2d_hook(
    const burn::detail::TensorRef& x, const burn::detail::TensorRef& weight, const burn::detail::OptRef& bias,
    const ir::Conv& op, const std::function<burn::detail::TensorRef(const burn::detail::TensorRef&)>& convolve);

}  // namespace burn::quant::detail
