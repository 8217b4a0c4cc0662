#include "backends/flex/packed_weights.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "backends/flex/dnnl_engine.hpp"

namespace burn::flex::dnn {
namespace {

// Enough for the weights of the models this backend serves (ResNet-50 has
// 100 MB of them); beyond it the least recently used copies go first.
constexpr std::size_t kMaxBytes = std::size_t(512) << 20;
// Buffers seen once, remembered so their second use can be cached.
constexpr std::size_t kMaxSightings = 512;

struct Key {
  const host::Buffer* buffer = nullptr;
  std::int64_t offset = 0;
  dnnl::memory::desc plain, packed;
  std::uint32_t form = 0;  // 0: oneDNN's `packed` layout; else a transform of burn's own (transformed_weights)

  bool operator==(const Key& o) const {
    return buffer == o.buffer && offset == o.offset && plain == o.plain && packed == o.packed && form == o.form;
  }
};

struct Entry {
  Key key;
  std::shared_ptr<host::Buffer> source;  // pins the weights' bytes (see the header)
  host::CpuTensorPtr packed;
  std::size_t bytes = 0;
  std::uint64_t last_use = 0;
  bool orphan = false;  // drop_orphans' verdict
};

struct Sighting {
  Key key;
  std::weak_ptr<host::Buffer> source;  // tells a live buffer from a new one at the same address
};

class Cache {
 public:
  /// A cached copy (hit), or whether the caller should pack one now and
  /// insert it (a second use) rather than reorder into scratch (a first).
  struct Found {
    host::CpuTensorPtr hit;
    bool pack = false;
  };
  Found lookup(const Key& key, const host::CpuTensor& t) {
    std::lock_guard lock(mutex_);
    drop_orphans();
    for (Entry& e : entries_)
      if (e.key == key) {
        e.last_use = ++tick_;
        return {e.packed, false};
      }
    const auto seen = std::find_if(sightings_.begin(), sightings_.end(),
                                   [&](const Sighting& s) { return s.key == key && s.source.lock() == t.buffer; });
    if (seen != sightings_.end()) {
      sightings_.erase(seen);
      return {nullptr, true};
    }
    if (sightings_.size() == kMaxSightings) sightings_.erase(sightings_.begin());
    sightings_.push_back({key, t.buffer});
    return {nullptr, false};
  }

  host::CpuTensorPtr insert(Entry entry) {
    std::lock_guard lock(mutex_);
    for (const Entry& e : entries_)
      if (e.key == entry.key) return e.packed;  // another thread packed it meanwhile
    entry.last_use = ++tick_;
    bytes_ += entry.bytes;
    entries_.push_back(std::move(entry));
    while (bytes_ > kMaxBytes && entries_.size() > 1) {
      const auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                           [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
      bytes_ -= oldest->bytes;
      entries_.erase(oldest);
    }
    return entries_.back().packed;
  }

  std::size_t bytes() {
    std::lock_guard lock(mutex_);
    drop_orphans();
    return bytes_;
  }

  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
    sightings_.clear();
    bytes_ = 0;
  }

 private:
  /// Entries whose weights nobody but the cache still holds. One buffer
  /// may have several entries (a layer's weights packed for the forward
  /// and for the backward convolution, a matrix and its transpose), each
  /// holding a reference: it is an orphan when those are all there are.
  /// Every entry is judged before any is erased, as erasing one lowers its
  /// buffer's count.
  void drop_orphans() {
    sources_.clear();
    for (const Entry& e : entries_) sources_.push_back(e.source.get());
    std::sort(sources_.begin(), sources_.end());
    for (Entry& e : entries_) {
      const auto [first, last] = std::equal_range(sources_.begin(), sources_.end(), e.source.get());
      e.orphan = e.source.use_count() == last - first;
    }
    std::erase_if(entries_, [&](const Entry& e) {
      if (!e.orphan) return false;
      bytes_ -= e.bytes;
      return true;
    });
  }

  std::mutex mutex_;
  std::vector<Entry> entries_;
  std::vector<Sighting> sightings_;
  std::vector<const host::Buffer*> sources_;  // drop_orphans' scratch, kept to spare an allocation per call
  std::size_t bytes_ = 0;
  std::uint64_t tick_ = 0;
};

Cache& cache() {
  static Cache c;
  return c;
}

}  // namespace

host::CpuTensorPtr packed_weights(const Context& ctx, const host::CpuTensor& t, const dnnl::memory::desc& plain,
                                  const dnnl::memory::desc& packed) {
  if (!t.buffer || t.is_opaque()) return nullptr;
  const Key key{t.buffer.get(), t.offset, plain, packed, 0};
  auto [hit, pack] = cache().lookup(key, t);
  if (hit || !pack) return hit;
  auto out = ctx.output({Shape{packed.get_size()}, DType::U8});
  dnnl::memory from = wrap(plain, t);
  dnnl::memory to(packed, engine(), static_cast<void*>(out->base()));
  reorder(from, to);
  return cache().insert({key, t.buffer, std::move(out), packed.get_size(), 0});
}

host::CpuTensorPtr transformed_weights(const Context& ctx, const host::CpuTensor& t, const dnnl::memory::desc& plain,
                                       std::uint32_t form, std::size_t bytes,
                                       const std::function<void(const host::CpuTensor&, std::byte*)>& transform) {
  auto make = [&] {
    auto out = ctx.output({Shape{bytes}, DType::U8});
    transform(t, out->base());
    return out;
  };
  if (!t.buffer || t.is_opaque()) return make();
  const Key key{t.buffer.get(), t.offset, plain, dnnl::memory::desc(), form};
  auto [hit, pack] = cache().lookup(key, t);
  if (hit) return hit;
  auto out = make();
  if (!pack) return out;
  return cache().insert({key, t.buffer, std::move(out), bytes, 0});
}

std::size_t packed_weights_bytes() { return cache().bytes(); }

void clear_packed_weights() { cache().clear(); }

}  // namespace burn::flex::dnn
