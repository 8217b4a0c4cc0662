// Kernels of the module operations (convolutions, pools, interpolation) and
// matmul for the flex backend. Included by kernels.hpp.
#pragma once

namespace burn::flex {

}  // namespace burn::flex
