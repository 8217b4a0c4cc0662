// The output specs of one op, held inline for the one or two that every op
// has: dispatch asks for them on every op, and a std::vector would be one
// heap allocation per op. Only the slots in use are constructed, so an op
// with one output pays for one spec.
#pragma once

#include <cstddef>
#include <new>
#include <span>
#include <utility>
#include <vector>

#include <burn/ir/op.hpp>

namespace burn::ir {

class SpecList {
 public:
  static constexpr std::size_t kInline = 2;

  SpecList() = default;
  // Not initializer_list constructors: those copy every spec once more.
  SpecList(TensorSpec a) { push_back(std::move(a)); }  // NOLINT: `return {{shape, dtype}};` reads best
  SpecList(TensorSpec a, TensorSpec b) {
    push_back(std::move(a));
    push_back(std::move(b));
  }
  SpecList(SpecList&& o) noexcept : n_(o.n_), heap_(std::move(o.heap_)) {
    if (n_ <= kInline)
      for (std::size_t i = 0; i < n_; ++i) new (slot(i)) TensorSpec(std::move(*o.slot(i)));
  }
  SpecList(const SpecList&) = delete;
  SpecList& operator=(const SpecList&) = delete;
  SpecList& operator=(SpecList&&) = delete;
  ~SpecList() { destroy_inline(); }

  /// Appends {shape, dtype}, built in place (Shape is a const& or an rvalue).
  template <class S>
  TensorSpec& emplace_back(S&& shape, DType dtype) {
    if (n_ < kInline) {
      TensorSpec* s = new (slot(n_)) TensorSpec{std::forward<S>(shape), dtype};
      ++n_;
      return *s;
    }
    if (n_ == kInline) {  // from now on every spec lives on the heap
      heap_.reserve(kInline + 1);
      for (std::size_t i = 0; i < kInline; ++i) heap_.push_back(std::move(*slot(i)));
      destroy_inline();
    }
    ++n_;
    return heap_.emplace_back(TensorSpec{std::forward<S>(shape), dtype});
  }
  void push_back(TensorSpec spec) { emplace_back(std::move(spec.shape), spec.dtype); }

  std::size_t size() const noexcept { return n_; }
  const TensorSpec* data() const noexcept { return n_ <= kInline ? slot(0) : heap_.data(); }
  TensorSpec* data() noexcept { return n_ <= kInline ? slot(0) : heap_.data(); }
  const TensorSpec& operator[](std::size_t i) const noexcept { return data()[i]; }
  const TensorSpec* begin() const noexcept { return data(); }
  const TensorSpec* end() const noexcept { return data() + n_; }
  TensorSpec* begin() noexcept { return data(); }
  TensorSpec* end() noexcept { return data() + n_; }
  std::span<const TensorSpec> span() const noexcept { return {data(), n_}; }

 private:
  TensorSpec* slot(std::size_t i) const noexcept {
    return std::launder(reinterpret_cast<TensorSpec*>(const_cast<std::byte*>(storage_))) + i;
  }
  void destroy_inline() noexcept {
    if (n_ <= kInline)
      for (std::size_t i = 0; i < n_; ++i) slot(i)->~TensorSpec();
  }

  std::size_t n_ = 0;
  alignas(TensorSpec) std::byte storage_[kInline * sizeof(TensorSpec)];
  std::vector<TensorSpec> heap_;
};

/// infer_outputs without the std::vector (same validation, same errors).
SpecList infer_output_list(const Op& op, std::span<const TensorSpec> inputs);

}  // namespace burn::ir
