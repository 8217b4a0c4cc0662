#include "backends/cuda/staging.hpp"

#include <algorithm>
#include <cstring>

namespace burn::cuda {

StagedCopies::~StagedCopies() {
  for (std::size_t slot = 0; slot < buffers_.size(); ++slot) {
    if (buffers_[slot] == nullptr) continue;
    // A copy may still read the buffer: let it finish first.
    try {
      device_.wait(slot);
    } catch (...) {  // the device failed; its memory goes with it
    }
    device_.free_pinned(buffers_[slot]);
  }
}

bool StagedCopies::available() {
  if (!tried_) {
    tried_ = true;
    buffers_[0] = device_.allocate_pinned(chunk_);
    buffers_[1] = buffers_[0] ? device_.allocate_pinned(chunk_) : nullptr;
    if (buffers_[1] == nullptr && buffers_[0] != nullptr) {
      device_.free_pinned(buffers_[0]);
      buffers_[0] = nullptr;
    }
  }
  return buffers_[0] != nullptr;
}

void StagedCopies::to_device(std::uint64_t dst, std::span<const std::byte> src) {
  std::size_t chunk = 0;
  for (std::size_t at = 0; at < src.size(); at += chunk_, ++chunk) {
    const std::size_t slot = chunk % 2;
    const std::size_t bytes = std::min(chunk_, src.size() - at);
    device_.wait(slot);  // the buffer's previous copy has read it
    std::memcpy(buffers_[slot], src.data() + at, bytes);
    device_.copy_to_device(dst + at, buffers_[slot], bytes);
    device_.mark(slot);
  }
}

void StagedCopies::to_host(std::span<std::byte> dst, std::uint64_t src) {
  const std::size_t chunks = (dst.size() + chunk_ - 1) / chunk_;
  const auto copy_out = [&](std::size_t chunk) {
    const std::size_t slot = chunk % 2;
    const std::size_t at = chunk * chunk_;
    device_.wait(slot);
    std::memcpy(dst.data() + at, buffers_[slot], std::min(chunk_, dst.size() - at));
  };
  // Chunk k + 1 is queued before chunk k is copied out, so the device fills
  // one buffer while the host empties the other.
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    const std::size_t slot = chunk % 2;
    const std::size_t at = chunk * chunk_;
    device_.copy_to_host(buffers_[slot], src + at, std::min(chunk_, dst.size() - at));
    device_.mark(slot);
    if (chunk > 0) copy_out(chunk - 1);
  }
  if (chunks > 0) copy_out(chunks - 1);
}

}  // namespace burn::cuda
