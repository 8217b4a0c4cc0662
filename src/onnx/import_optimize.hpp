// Graph rewrites import makes for models loaded for inference only.
#pragma once

#include <cstddef>

#include <onnx/onnx_pb.h>

namespace burn::onnx {

/// Folds each eval-mode BatchNormalization whose input is a Conv's only
/// use into that Conv's weight and bias (where every tensor involved is an
/// f32 initializer read by that node alone), removes the batch norms and the
/// initializers nothing reads any more. Returns how many it folded.
std::size_t fold_batch_norms(::onnx::ModelProto& model);

}  // namespace burn::onnx
