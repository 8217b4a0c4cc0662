#include "core/object_pool.hpp"

#include <cstdint>

namespace burn::detail {
namespace {

constexpr std::size_t kClassBytes = 32;
constexpr std::size_t kClasses = kPoolMaxBytes / kClassBytes;
static_assert(kClassBytes % __STDCPP_DEFAULT_NEW_ALIGNMENT__ == 0, "every class size keeps operator new's alignment");

#if defined(__SANITIZE_ADDRESS__)
// Address sanitizer builds keep nothing, so it still sees every use after free.
constexpr std::uint32_t kKeepPerClass = 0;
#else
// Blocks a thread keeps per size class: at most 8 x 256 x 256 B = 512 KiB.
constexpr std::uint32_t kKeepPerClass = 256;
#endif

struct FreeBlock {
  FreeBlock* next;
};

enum class State : std::uint8_t { Fresh, Live, Exited };

// Trivially destructible, so it stays usable while the thread's other
// thread_local objects are destroyed (they may free pooled objects).
struct ThreadLists {
  FreeBlock* head[kClasses];
  std::uint32_t count[kClasses];
  State state;
};
constinit thread_local ThreadLists lists{};

// Returns the thread's blocks when it exits; later frees bypass the lists.
struct ExitDrain {
  bool armed = false;
  ~ExitDrain() {
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = lists.head[c]) {
        lists.head[c] = b->next;
        ::operator delete(b);
      }
      lists.count[c] = 0;
    }
    lists.state = State::Exited;
  }
};
thread_local ExitDrain exit_drain;

std::size_t class_of(std::size_t bytes) noexcept { return bytes == 0 ? 0 : (bytes - 1) / kClassBytes; }

}  // namespace

void* pool_allocate(std::size_t bytes) {
  if (bytes > kPoolMaxBytes) return ::operator new(bytes);
  const std::size_t c = class_of(bytes);
  ThreadLists& l = lists;
  if (FreeBlock* b = l.head[c]) {
    l.head[c] = b->next;
    --l.count[c];
    return b;
  }
  return ::operator new((c + 1) * kClassBytes);
}

void pool_deallocate(void* block, std::size_t bytes) noexcept {
  if (!block) return;
  if (bytes > kPoolMaxBytes) {
    ::operator delete(block);
    return;
  }
  const std::size_t c = class_of(bytes);
  ThreadLists& l = lists;
  if (l.state != State::Live) {
    if (l.state == State::Exited || kKeepPerClass == 0) {
      ::operator delete(block);
      return;
    }
    exit_drain.armed = true;  // constructs it, which registers its destructor for thread exit
    l.state = State::Live;
  }
  if (l.count[c] >= kKeepPerClass) {
    ::operator delete(block);
    return;
  }
  auto* b = static_cast<FreeBlock*>(block);
  b->next = l.head[c];
  l.head[c] = b;
  ++l.count[c];
}

}  // namespace burn::detail
