// Shape: the extent of each dimension.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <burn/small_vector.hpp>

namespace burn {

class Shape {
 public:
  /// The extents, inline up to six dims (no heap allocation per copy).
  using Dims = SmallVector<std::size_t, 6>;

  Shape() = default;
  Shape(std::initializer_list<std::size_t> dims) : dims_(dims) {}
  explicit Shape(const std::vector<std::size_t>& dims) : dims_(dims.begin(), dims.end()) {}
  explicit Shape(Dims dims) : dims_(std::move(dims)) {}
  template <std::size_t D>
  Shape(const std::array<std::size_t, D>& dims) : dims_(dims.begin(), dims.end()) {}

  std::size_t rank() const noexcept { return dims_.size(); }
  std::size_t num_elements() const noexcept {
    std::size_t n = 1;
    for (auto d : dims_) n *= d;
    return n;
  }
  /// The element count, checked: throws burn::Error("[op] ...") when the
  /// count, or the byte size with `element_size` bytes per element, exceeds
  /// 2^63 - 1 (sizes, strides and offsets are signed 64-bit). num_elements()
  /// would wrap around instead; use this where dims come from a caller.
  std::size_t checked_num_elements(std::string_view op, std::size_t element_size = 1) const;
  std::size_t operator[](std::size_t i) const { return dims_.at(i); }
  std::size_t& operator[](std::size_t i) { return dims_.at(i); }
  const Dims& dims() const noexcept { return dims_; }
  Dims& dims() noexcept { return dims_; }
  auto begin() const noexcept { return dims_.begin(); }
  auto end() const noexcept { return dims_.end(); }

  /// Row-major (C order) strides in elements.
  std::vector<std::size_t> contiguous_strides() const;
  /// "[2, 3]"
  std::string to_string() const;

  friend bool operator==(const Shape&, const Shape&) = default;

 private:
  Dims dims_;
};

std::ostream& operator<<(std::ostream& os, const Shape& s);

}  // namespace burn
