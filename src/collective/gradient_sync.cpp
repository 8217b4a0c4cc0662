// Gradient synchronisation: buckets of gradients all-reduced on a
// communication thread while backward goes on.
//
// The buckets are laid out once per module structure, from the parameters in
// reverse declaration order (backward finishes the last layers first), one
// dtype per bucket. Every rank has the same layout and all-reduces the
// buckets in the same order, whatever order its gradients arrive in: a
// bucket starts when all its gradients have arrived and every bucket before
// it has started; after backward the remaining ones start with zeros where a
// gradient never came. Each bucket ends with one presence element per
// parameter (1 where this rank had a gradient), reduced with the gradients,
// so every rank learns which parameters any rank's loss reached without a
// second round trip. The communication thread only touches host buffers; the
// caller's thread does every device operation (reading each gradient as it
// completes, creating the averaged ones).
#include <burn/collective/gradient_sync.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include <burn/detail/ops.hpp>

namespace burn::collective {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// One parameter's place in its bucket (offsets in elements).
struct Member {
  std::size_t slot = 0;
  std::size_t offset = 0;
  std::size_t elements = 0;
};

struct Bucket {
  DType dtype = DType::F32;
  std::vector<Member> members;
  std::size_t payload = 0;  // gradient elements; the presence elements follow
  std::vector<std::byte> buffer;
  std::size_t pending = 0;         // members whose gradient has not arrived this step
  std::vector<std::byte> present;  // 1 in the bucket's dtype: a member's presence mark

  std::size_t total() const { return payload + members.size(); }
  std::size_t element_bytes() const { return dtype_size(dtype); }
  std::byte* at(std::size_t element) { return buffer.data() + element * element_bytes(); }
};

/// 1 in `dtype`, the presence mark.
std::vector<std::byte> one_in(DType dtype) {
  TensorData one = TensorData(std::vector<float>{1.0F}, {1}).convert(dtype);
  return std::move(one).into_bytes();
}

}  // namespace

struct GradientSync::Impl {
  ProcessGroup* group;
  GradientSyncOptions options;
  GradientSyncStats stats;

  // The layout, and the structure it was made for.
  std::vector<std::pair<DType, std::size_t>> structure;
  std::vector<Bucket> buckets;
  std::vector<std::pair<std::size_t, std::size_t>> place;  // slot -> (bucket, member)

  // This step.
  std::vector<ParamSlot> params;
  std::vector<bool> arrived;
  std::size_t next_launch = 0;

  // The communication thread.
  std::mutex mutex;
  std::condition_variable work_ready;
  std::condition_variable work_done;
  std::deque<std::size_t> queue;
  std::size_t finished = 0;
  std::exception_ptr failure;
  bool stopping = false;
  std::thread worker;

  Impl(ProcessGroup& g, GradientSyncOptions o) : group(&g), options(o) {
    if (options.bucket_bytes == 0)
      throw Error("GradientSync", "bucket_bytes must be positive (25 MiB is the usual size)");
    worker = std::thread([this] { communicate(); });
  }

  ~Impl() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    work_ready.notify_all();
    worker.join();
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void communicate() {
    for (;;) {
      std::size_t index = 0;
      {
        std::unique_lock lock(mutex);
        work_ready.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        index = queue.front();
        queue.pop_front();
        if (failure) {  // the step failed already: the rest is not sent
          ++finished;
          work_done.notify_all();
          continue;
        }
      }
      Bucket& bucket = buckets[index];
      std::exception_ptr error;
      const auto start = Clock::now();
      try {
        TensorData data(std::move(bucket.buffer), Shape{bucket.total()}, bucket.dtype);
        bucket.buffer = group->all_reduce_agreed(std::move(data), ReduceOp::Mean).into_bytes();
      } catch (...) {
        error = std::current_exception();
      }
      const double took = seconds_since(start);
      std::lock_guard lock(mutex);
      stats.communication_seconds += took;
      if (error && !failure) failure = error;
      ++finished;
      work_done.notify_all();
    }
  }

  void lay_out(const std::vector<ParamSlot>& slots) {
    std::vector<std::pair<DType, std::size_t>> wanted;
    wanted.reserve(slots.size());
    for (const ParamSlot& s : slots) wanted.emplace_back(s.value->spec.dtype, s.value->spec.shape.num_elements());
    if (wanted == structure && !buckets.empty()) return;
    check_same_structure(wanted);
    structure = std::move(wanted);
    buckets.clear();
    place.assign(slots.size(), {0, 0});
    // Reverse declaration order; a bucket per dtype being filled.
    std::unordered_map<int, std::size_t> open;  // dtype -> bucket index
    for (std::size_t i = slots.size(); i-- > 0;) {
      const auto [dtype, elements] = structure[i];
      const std::size_t bytes = elements * dtype_size(dtype);
      auto it = open.find(static_cast<int>(dtype));
      if (it == open.end() || (buckets[it->second].payload * dtype_size(dtype) + bytes > options.bucket_bytes &&
                               !buckets[it->second].members.empty())) {
        buckets.push_back(Bucket{dtype, {}, 0, {}, 0, one_in(dtype)});
        it = open.insert_or_assign(static_cast<int>(dtype), buckets.size() - 1).first;
      }
      Bucket& b = buckets[it->second];
      place[i] = {it->second, b.members.size()};
      b.members.push_back({i, b.payload, elements});
      b.payload += elements;
    }
    for (Bucket& b : buckets) b.buffer.assign(b.total() * b.element_bytes(), std::byte{0});
  }

  /// The buckets skip the per-call descriptor exchange, so the ranks check
  /// once, here, that their modules have the same parameters.
  void check_same_structure(const std::vector<std::pair<DType, std::size_t>>& mine) {
    std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a over (dtype, elements) pairs
    const auto mix = [&](std::uint64_t v) {
      for (int i = 0; i < 8; ++i) hash = (hash ^ ((v >> (8 * i)) & 0xFF)) * 1099511628211ULL;
    };
    mix(mine.size());
    for (const auto& [dtype, elements] : mine) {
      mix(static_cast<std::uint64_t>(dtype));
      mix(elements);
    }
    const std::vector<std::int64_t> all =
        group->all_gather_data(TensorData(std::vector<std::int64_t>{static_cast<std::int64_t>(hash)}, Shape{1}))
            .to_vec<std::int64_t>();
    for (std::size_t r = 0; r < all.size(); ++r)
      if (all[r] != static_cast<std::int64_t>(hash))
        throw Error("GradientSync::backward",
                    fmt::format("rank {}'s module has other parameters than this rank's ({} trainable here): every "
                                "rank must train a module of the same structure",
                                r, mine.size()));
  }

  void begin(std::vector<ParamSlot> slots) {
    {
      std::lock_guard lock(mutex);
      queue.clear();
      finished = 0;
      failure = nullptr;
    }
    lay_out(slots);
    params = std::move(slots);
    arrived.assign(params.size(), false);
    next_launch = 0;
    stats = GradientSyncStats{};
    for (Bucket& b : buckets) {
      b.pending = b.members.size();
      b.buffer.resize(b.total() * b.element_bytes());
      std::memset(b.at(b.payload), 0, b.members.size() * b.element_bytes());  // presence: none yet
      stats.bytes += b.buffer.size();
    }
    stats.buckets = buckets.size();
  }

  void launch(std::size_t index) {
    {
      std::lock_guard lock(mutex);
      queue.push_back(index);
    }
    work_ready.notify_one();
  }

  /// Starts, in order, every bucket whose gradients are all in.
  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) launch(next_launch++);
  }

  /// A parameter's gradient, complete: copied into its bucket.
  void deliver(std::size_t slot, const burn::detail::TensorRef& grad) {
    if (arrived[slot]) return;
    arrived[slot] = true;
    const auto [b, m] = place[slot];
    Bucket& bucket = buckets[b];
    const Member& member = bucket.members[m];
    TensorData data = burn::detail::to_data(grad);
    if (data.dtype() != bucket.dtype) data = data.convert(bucket.dtype);
    if (data.num_elements() != member.elements)
      throw Error("GradientSync::backward", fmt::format("a gradient of {} elements arrived for a parameter of {}",
                                                        data.num_elements(), member.elements));
    std::memcpy(bucket.at(member.offset), data.bytes().data(), data.bytes().size());
    std::memcpy(bucket.at(bucket.payload + m), bucket.present.data(), bucket.present.size());
    --bucket.pending;
    if (options.overlap) launch_ready();
  }

  /// Starts what is left (zeros for gradients that never came), waits for
  /// every bucket, and makes the averaged gradients.
  optim::GradientsParams finish() {
    for (std::size_t b = next_launch; b < buckets.size(); ++b) {
      Bucket& bucket = buckets[b];
      for (const Member& member : bucket.members)
        if (!arrived[member.slot]) std::memset(bucket.at(member.offset), 0, member.elements * bucket.element_bytes());
      bucket.pending = 0;
    }
    const auto waiting = Clock::now();
    launch_ready();
    wait_all();
    stats.exposed_seconds = seconds_since(waiting);
    if (failure) std::rethrow_exception(failure);

    optim::GradientsParams out;
    for (Bucket& bucket : buckets) {
      for (std::size_t m = 0; m < bucket.members.size(); ++m) {
        const Member& member = bucket.members[m];
        const std::byte* mark = bucket.at(bucket.payload + m);
        const double presence =
            TensorData(std::vector<std::byte>(mark, mark + bucket.element_bytes()), Shape{1}, bucket.dtype)
                .value_as_double(0);
        if (presence <= 0) continue;  // no rank had this gradient
        const ParamSlot& slot = params[member.slot];
        const std::byte* begin = bucket.at(member.offset);
        TensorData grad(std::vector<std::byte>(begin, begin + member.elements * bucket.element_bytes()),
                        slot.value->spec.shape, bucket.dtype);
        out.insert_ref(slot.id,
                       burn::detail::from_data(std::move(grad), {slot.value->device.without_autodiff(), bucket.dtype},
                                               TensorKind::Float));
      }
    }
    params.clear();
    return out;
  }

  void wait_all() {
    std::unique_lock lock(mutex);
    work_done.wait(lock, [&] { return finished == next_launch; });
  }

  /// After a failure in the caller's thread: lets the buckets already sent
  /// finish (the other ranks take part in them) before the error goes on.
  void abandon() noexcept {
    wait_all();
    params.clear();
  }
};

GradientSync::GradientSync(ProcessGroup& group, GradientSyncOptions options)
    : impl_(std::make_unique<Impl>(group, options)) {}
GradientSync::GradientSync(GradientSync&&) noexcept = default;
GradientSync& GradientSync::operator=(GradientSync&&) noexcept = default;
GradientSync::~GradientSync() = default;

const GradientSyncStats& GradientSync::last_stats() const noexcept { return impl_->stats; }
ProcessGroup& GradientSync::group() noexcept { return *impl_->group; }

burn::detail::TensorRef GradientSync::broadcast(const std::string& path, const module::ParamBase& p) {
  const burn::detail::TensorRef& value = p.ref();
  TensorData data;
  try {
    data = impl_->group->broadcast_data(burn::detail::to_data(value), 0);
  } catch (const ExecutionError&) {
    throw;
  } catch (const Error& e) {
    throw Error("GradientSync::broadcast_parameters",
                fmt::format("{}: {} (every rank must pass a module of the same structure)", path, e.what()));
  }
  return burn::detail::from_data(std::move(data), {value->device, value->spec.dtype}, kind_of_dtype(value->spec.dtype));
}

optim::GradientsParams GradientSync::backward_ref(const burn::detail::TensorRef& loss, std::vector<ParamSlot> params) {
  Impl& impl = *impl_;
  std::unordered_map<std::uint64_t, std::size_t> slot_of_leaf;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (auto id = burn::detail::leaf_id(params[i].value)) slot_of_leaf.emplace(*id, i);
  impl.begin(std::move(params));
  try {
    (void)burn::detail::backward(loss, [&](std::uint64_t leaf, const burn::detail::TensorRef& grad) {
      auto it = slot_of_leaf.find(leaf);
      if (it != slot_of_leaf.end()) impl.deliver(it->second, grad);
    });
  } catch (...) {
    impl.abandon();
    throw;
  }
  return impl.finish();
}

optim::GradientsParams GradientSync::all_reduce_ref(const optim::GradientsParams& grads,
                                                    std::vector<ParamSlot> params) {
  Impl& impl = *impl_;
  impl.begin(std::move(params));
  try {
    for (std::size_t i = 0; i < impl.params.size(); ++i)
      if (auto g = grads.get_ref(impl.params[i].id)) impl.deliver(i, *g);
  } catch (...) {
    impl.abandon();
    throw;
  }
  return impl.finish();
}

}  // namespace burn::collective
