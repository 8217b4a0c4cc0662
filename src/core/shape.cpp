#include <burn/shape.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include <burn/error.hpp>

namespace burn {

std::size_t Shape::checked_num_elements(std::string_view op, std::size_t element_size) const {
  constexpr auto limit = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  // A zero dim makes the count 0 whatever the others are.
  if (std::find(dims_.begin(), dims_.end(), std::size_t{0}) != dims_.end()) return 0;
  std::size_t n = 1;
  for (auto d : dims_)
    if (__builtin_mul_overflow(n, d, &n) || n > limit)
      throw Error(
          op, fmt::format("shape {} is too large: its element count overflows 64 bits; check the dims", to_string()));
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(n, element_size, &bytes) || bytes > limit)
    throw Error(op, fmt::format("shape {} is too large: {} elements of {} bytes overflow 64 bits; check the dims",
                                to_string(), n, element_size));
  return n;
}

std::vector<std::size_t> Shape::contiguous_strides() const {
  std::vector<std::size_t> strides(dims_.size());
  std::size_t s = 1;
  for (std::size_t i = dims_.size(); i-- > 0;) {
    strides[i] = s;
    s *= dims_[i];
  }
  return strides;
}

std::string Shape::to_string() const {
  std::string out = "[";
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(dims_[i]);
  }
  return out + "]";
}

std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << s.to_string(); }

}  // namespace burn
