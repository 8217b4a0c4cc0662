// Runs a scope's int8 products on one int8 kernel, then goes back to the
// default choice.
#pragma once

#include <burn/quant.hpp>

namespace burn::testing {

class Int8KernelScope {
 public:
  explicit Int8KernelScope(quant::detail::Int8Kernel k) { quant::detail::use_int8_kernel(k); }
  ~Int8KernelScope() { quant::detail::use_int8_kernel(quant::detail::Int8Kernel::Auto); }
  Int8KernelScope(const Int8KernelScope&) = delete;
  Int8KernelScope& operator=(const Int8KernelScope&) = delete;
};

}  // namespace burn::testing
