// Per-thread recycling of the small objects every op creates: the tensor
// handle, the CPU primitive and its buffer record, each in one block with its
// shared_ptr control block. A tiny op is dominated by such allocations, and a
// thread-local free list serves them in a few instructions where malloc and
// free take well over a hundred.
//
// Any thread may free a block another thread allocated: the blocks of one
// size class are interchangeable (plain operator new blocks), so a freed
// block simply joins the freeing thread's list. Each list is bounded; past the
// bound, and once a thread has exited, blocks go back to operator delete.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace burn::detail {

/// Largest request served from the free lists; larger ones use operator new.
inline constexpr std::size_t kPoolMaxBytes = 256;

/// A block of at least `bytes` bytes, aligned for any fundamental type.
void* pool_allocate(std::size_t bytes);
/// Returns a block from pool_allocate with the same `bytes`.
void pool_deallocate(void* block, std::size_t bytes) noexcept;

/// A standard allocator over the pool, for std::allocate_shared.
template <class T>
class PoolAllocator {
 public:
  using value_type = T;

  PoolAllocator() noexcept = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit by contract

  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "the pool only guarantees operator new's alignment");
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(pool_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { pool_deallocate(p, n * sizeof(T)); }

  friend bool operator==(const PoolAllocator&, const PoolAllocator&) noexcept { return true; }
};

/// std::make_shared with the object and its control block taken from the pool.
template <class T, class... Args>
std::shared_ptr<T> make_pooled(Args&&... args) {
  return std::allocate_shared<T>(PoolAllocator<T>{}, std::forward<Args>(args)...);
}

}  // namespace burn::detail
