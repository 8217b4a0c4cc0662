// SmallVector: a vector of trivially copyable values that keeps its first N
// elements inline and only allocates beyond them. Shapes and strides have a
// handful of entries and are copied on every operation; keeping them out of
// the heap is most of what makes a tiny op cheap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace burn {

template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable values only");
  static_assert(N > 0);

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  SmallVector() noexcept {}  // NOLINT: user-provided, so a const SmallVector may be default-constructed
  explicit SmallVector(size_type n, const T& value = T{}) { assign(n, value); }
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  template <std::input_iterator It>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  // Implicit on purpose: shapes and strides are often built as std::vector.
  SmallVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT
  SmallVector(const SmallVector& o) { copy_from(o); }
  SmallVector(SmallVector&& o) noexcept { take(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~SmallVector() { release(); }

  /// A std::vector copy, for APIs that want one.
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  template <std::input_iterator It>
  void assign(It first, It last) {
    if constexpr (std::forward_iterator<It>) {
      const auto n = static_cast<size_type>(std::distance(first, last));
      size_ = 0;
      reserve(n);
      std::copy(first, last, data_);
      size_ = n;
    } else {
      clear();
      for (; first != last; ++first) push_back(*first);
    }
  }
  void assign(size_type n, const T& value) {
    size_ = 0;
    reserve(n);
    std::fill_n(data_, n, value);
    size_ = n;
  }

  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return capacity_; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }

  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cbegin() const noexcept { return data_; }
  const_iterator cend() const noexcept { return data_ + size_; }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  T& operator[](size_type i) noexcept { return data_[i]; }
  const T& operator[](size_type i) const noexcept { return data_[i]; }
  T& at(size_type i) {
    if (i >= size_) throw std::out_of_range("SmallVector::at");
    return data_[i];
  }
  const T& at(size_type i) const {
    if (i >= size_) throw std::out_of_range("SmallVector::at");
    return data_[i];
  }
  T& front() noexcept { return data_[0]; }
  const T& front() const noexcept { return data_[0]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& back() const noexcept { return data_[size_ - 1]; }

  void reserve(size_type n) {
    if (n <= capacity_) return;
    const size_type cap = std::max(n, capacity_ * 2);
    T* fresh = static_cast<T*>(::operator new(cap * sizeof(T)));
    if (size_) std::memcpy(fresh, data_, size_ * sizeof(T));
    release();
    data_ = fresh;
    capacity_ = cap;
  }
  void resize(size_type n, const T& value = T{}) {
    reserve(n);
    if (n > size_) std::fill(data_ + size_, data_ + n, value);
    size_ = n;
  }
  void clear() noexcept { size_ = 0; }
  void push_back(const T& v) {
    if (size_ == capacity_) {
      const T copy = v;  // v may live in this vector's storage
      reserve(size_ + 1);
      data_[size_++] = copy;
      return;
    }
    data_[size_++] = v;
  }
  template <class... A>
  T& emplace_back(A&&... args) {
    push_back(T(std::forward<A>(args)...));
    return back();
  }
  void pop_back() noexcept { --size_; }

  iterator insert(const_iterator pos, const T& v) { return insert(pos, size_type{1}, v); }
  iterator insert(const_iterator pos, size_type n, const T& v) {
    const T copy = v;
    const size_type at = index_of(pos);
    open_gap(at, n);
    std::fill_n(data_ + at, n, copy);
    return data_ + at;
  }
  template <std::forward_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    const SmallVector copy(first, last);  // the range may alias this vector
    const size_type at = index_of(pos);
    open_gap(at, copy.size());
    std::copy(copy.begin(), copy.end(), data_ + at);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_type a = index_of(first), b = index_of(last);
    std::copy(data_ + b, data_ + size_, data_ + a);
    size_ -= b - a;
    return data_ + a;
  }

  // A plain loop: std::equal on trivial types becomes a call to memcmp,
  // several times the cost of comparing a handful of extents.
  friend bool operator==(const SmallVector& a, const SmallVector& b) noexcept {
    if (a.size_ != b.size_) return false;
    for (size_type i = 0; i < a.size_; ++i)
      if (!(a.data_[i] == b.data_[i])) return false;
    return true;
  }
  friend bool operator==(const SmallVector& a, const std::vector<T>& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool is_inline() const noexcept { return data_ == inline_; }
  size_type index_of(const_iterator p) const noexcept { return static_cast<size_type>(p - data_); }
  void open_gap(size_type at, size_type n) {
    reserve(size_ + n);
    std::copy_backward(data_ + at, data_ + size_, data_ + size_ + n);
    size_ += n;
  }
  void release() noexcept {
    if (!is_inline()) ::operator delete(data_);
    data_ = inline_;
    capacity_ = N;
  }
  // A copy that fits inline moves all N slots: a fixed-size copy is a few
  // register moves, where a size-dependent one is a call to memcpy (copies
  // of shapes are the most frequent thing a tiny op does). Every source has
  // at least N readable slots (inline storage, or a larger heap block).
  void copy_from(const SmallVector& o) {
    if (o.size_ <= N) {
      if (!is_inline()) release();
      std::memcpy(inline_, o.data_, sizeof(inline_));
      size_ = o.size_;
      return;
    }
    assign(o.begin(), o.end());
  }
  void take(SmallVector& o) noexcept {
    if (o.is_inline()) {
      std::memcpy(inline_, o.inline_, sizeof(inline_));
      data_ = inline_;
      capacity_ = N;
    } else {
      data_ = o.data_;
      capacity_ = o.capacity_;
      o.data_ = o.inline_;
      o.capacity_ = N;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T* data_ = inline_;
  size_type size_ = 0;
  size_type capacity_ = N;
  // Value-initialised so that the fixed-size copies above never read
  // indeterminate values.
  T inline_[N]{};
};

}  // namespace burn
