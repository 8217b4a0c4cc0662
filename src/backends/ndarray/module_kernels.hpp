// Kernels of the module operations (convolutions, pools, interpolation,
// layer norm) and matmul for the ndarray backend. Included by kernels.hpp.
#pragma once

namespace burn::ndarray {

// matmul.cpp
Result kernel(const Context&, const ir::Matmul&, Inputs, Outputs);
// conv.cpp
Result kernel(const Context&, const ir::Conv&, Inputs, Outputs);
Result kernel(const Context&, const ir::ConvTranspose&, Inputs, Outputs);
Result kernel(const Context&, const ir::ConvWeightGrad&, Inputs, Outputs);
// pool.cpp
Result kernel(const Context&, const ir::MaxPool&, Inputs, Outputs);
Result kernel(const Context&, const ir::AvgPool&, Inputs, Outputs);
Result kernel(const Context&, const ir::AdaptiveAvgPool&, Inputs, Outputs);
// interpolate.cpp
Result kernel(const Context&, const ir::Interpolate&, Inputs, Outputs);
// layer_norm.cpp
Result kernel(const Context&, const ir::LayerNorm&, Inputs, Outputs);
// batch_norm.cpp
Result kernel(const Context&, const ir::BatchNorm&, Inputs, Outputs);

}  // namespace burn::ndarray
