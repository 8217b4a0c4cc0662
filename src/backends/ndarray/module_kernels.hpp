// Kernels of the module operations (convolutions, pools, interpolation) and
// matmul for the ndarray backend. Included by kernels.hpp.
#pragma once

namespace burn::ndarray {

}  // namespace burn::ndarray
