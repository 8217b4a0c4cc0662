#include "backends/flex/element.hpp"

#include <string>

namespace burn::flex {

void no_kernel(std::string_view op, DType d) {
  throw Error(op, "the flex backend has no kernel for dtype " + std::string(dtype_name(d)) +
                      " (the op's dtype check should have rejected it)");
}

}  // namespace burn::flex
