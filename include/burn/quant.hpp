// burn::quant: quantized tensors (int8/int4 with f32 scales), int8 matmul,
// and post-training quantization of Linear and Conv2d layers. Not part of
// <burn/burn.hpp>; include it where quantization is used.
#pragma once

#include <burn/quant/ptq.hpp>
#include <burn/quant/quantized_tensor.hpp>
#include <burn/quant/scheme.hpp>
