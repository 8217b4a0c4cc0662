#include <burn/shape.hpp>

namespace burn {

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
