// Kernels of the module operations (convolutions, pools, interpolation,
// layer norm) and matmul for the flex backend. Included by kernels.hpp. They
// use oneDNN (dnnl_engine.hpp) where it supports the case exactly and fall
// back to multi-threaded loops of their own elsewhere (f64, ints, layouts or
// modes oneDNN lacks); layer norm is loops of its own.
#pragma once

namespace burn::flex {

// matmul.cpp
Result kernel(const Context&, const ir::Matmul&, Inputs, Outputs);
// conv.cpp
Result kernel(const Context&, const ir::Conv&, Inputs, Outputs);
// conv_transpose.cpp
Result kernel(const Context&, const ir::ConvTranspose&, Inputs, Outputs);
Result kernel(const Context&, const ir::ConvWeightGrad&, Inputs, Outputs);
// max_pool.cpp
Result kernel(const Context&, const ir::MaxPool&, Inputs, Outputs);
// avg_pool.cpp
Result kernel(const Context&, const ir::AvgPool&, Inputs, Outputs);
Result kernel(const Context&, const ir::AdaptiveAvgPool&, Inputs, Outputs);
// interpolate.cpp
Result kernel(const Context&, const ir::Interpolate&, Inputs, Outputs);
// layer_norm.cpp
Result kernel(const Context&, const ir::LayerNorm&, Inputs, Outputs);
// batch_norm.cpp
Result kernel(const Context&, const ir::BatchNorm&, Inputs, Outputs);

}  // namespace burn::flex
