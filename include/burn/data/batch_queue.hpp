// BatchQueue: the batches of one epoch, in order, optionally built ahead by
// worker threads. DataLoader::iter() returns one; it is the range you loop over.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace burn::data::detail {

template <class Batch>
class BatchQueue {
 public:
  using MakeBatch = std::function<Batch(std::size_t)>;

  /// `make(k)` builds batch k for k in [0, num_batches). With workers == 0 it
  /// runs on the consumer's thread; otherwise `workers` threads build batches
  /// ahead, at most `capacity` (>= 1) beyond the one the consumer is on.
  BatchQueue(std::size_t num_batches, MakeBatch make, std::size_t workers, std::size_t capacity)
      : s_(std::make_unique<Shared>(num_batches, std::move(make), capacity)) {
    if (workers > num_batches) workers = num_batches;  // idle threads would only cost
    s_->threads.reserve(workers);
    for (std::size_t i = 0; i < workers; ++i) s_->threads.emplace_back([s = s_.get()] { s->work(); });
  }

  /// Number of batches in this epoch.
  std::size_t size() const noexcept { return s_->total; }

  /// The next batch, or nullopt after the last. Blocks until a worker has it
  /// ready. An exception thrown while building a batch is rethrown here, at
  /// that batch's position; the epoch then ends.
  std::optional<Batch> next() {
    Shared& s = *s_;
    if (s.finished || s.consumed == s.total) return std::nullopt;
    if (s.threads.empty()) {
      try {
        return s.make(s.consumed++);
      } catch (...) {
        s.finished = true;
        throw;
      }
    }
    std::unique_lock lock(s.mutex);
    s.ready_cv.wait(lock, [&] { return s.ready.contains(s.consumed); });
    auto node = s.ready.extract(s.consumed);
    ++s.consumed;
    if (node.mapped().error) {
      s.finished = true;
      s.stop = true;
      lock.unlock();
      s.space_cv.notify_all();
      std::rethrow_exception(node.mapped().error);
    }
    lock.unlock();
    s.space_cv.notify_all();
    return std::move(node.mapped().batch);
  }

  class iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    Batch& operator*() const { return *q_->s_->current; }
    Batch* operator->() const { return &*q_->s_->current; }
    iterator& operator++() {
      q_->advance();
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator& it, std::default_sentinel_t) { return it.at_end(); }

   private:
    friend class BatchQueue;
    explicit iterator(BatchQueue* q) : q_(q) {}
    bool at_end() const { return !q_->s_->current; }
    BatchQueue* q_ = nullptr;
  };

  /// Starts the iteration (fetching the first batch); later calls continue
  /// where it stands.
  iterator begin() {
    if (!s_->started) {
      s_->started = true;
      advance();
    }
    return iterator(this);
  }
  std::default_sentinel_t end() const noexcept { return {}; }

 private:
  struct Slot {
    std::optional<Batch> batch;
    std::exception_ptr error;
  };

  struct Shared {
    Shared(std::size_t n, MakeBatch m, std::size_t cap) : total(n), capacity(cap), make(std::move(m)) {}
    // Stopping here (not in ~BatchQueue) keeps moves trivial and also covers a
    // constructor that failed after starting some threads.
    ~Shared() {
      {
        std::lock_guard lock(mutex);
        stop = true;
      }
      space_cv.notify_all();
      for (auto& t : threads) t.join();
    }

    void work() {
      for (;;) {
        std::size_t k;
        {
          std::unique_lock lock(mutex);
          space_cv.wait(lock, [&] { return stop || next_task >= total || next_task < consumed + capacity; });
          if (stop || next_task >= total) return;
          k = next_task++;
        }
        Slot slot;
        try {
          slot.batch.emplace(make(k));
        } catch (...) {
          slot.error = std::current_exception();
        }
        const bool failed = slot.error != nullptr;
        {
          std::lock_guard lock(mutex);
          // Batches before k were all claimed earlier and still get delivered,
          // so the consumer sees the error exactly where one worker would.
          if (failed) stop = true;
          ready.emplace(k, std::move(slot));
        }
        ready_cv.notify_all();
        if (failed) space_cv.notify_all();
      }
    }

    const std::size_t total;
    const std::size_t capacity;
    MakeBatch make;
    std::vector<std::thread> threads;
    std::mutex mutex;
    std::condition_variable ready_cv;  // a batch was added to `ready`
    std::condition_variable space_cv;  // the consumer moved on, or stop
    std::map<std::size_t, Slot> ready;
    std::size_t next_task = 0;  // guarded by mutex
    std::size_t consumed = 0;   // guarded by mutex when workers run
    bool stop = false;          // guarded by mutex
    // Consumer-side only.
    bool finished = false;
    bool started = false;
    std::optional<Batch> current;
  };

  void advance() {
    s_->current.reset();
    s_->current = next();
  }

  std::unique_ptr<Shared> s_;
};

}  // namespace burn::data::detail
