// What module::linear and module::conv call into quantization
// (include/burn/quant/ptq.hpp): a check cheap enough for every layer call,
// then the calibration record or the quantized layer.
#pragma once

#include <cstddef>
#include <optional>

#include <burn/detail/ops.hpp>
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

/// The input the Conv2d layer whose weight is `weight` should convolve (its
/// quantized activations), or nullopt to use `x` (records under calibration).
std::optional<burn::detail::TensorRef> conv2d_input_hook(const burn::detail::TensorRef& x,
                                                         const burn::detail::TensorRef& weight);

}  // namespace burn::quant::detail
