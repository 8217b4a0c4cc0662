// ProcessGroup over Gloo's TCP transport: a full mesh of connections made
// through the rendezvous store (store.hpp), and Gloo's ring algorithms for
// the collectives. Each collective first all-gathers a small descriptor of
// what every rank asked for (which collective, dtype, element count, root),
// so ranks that disagree get an error naming the rank instead of Gloo
// reading mismatched buffers or waiting out its timeout.
//
// With Engine::Nccl the data of reductions, broadcasts and gathers goes over
// NCCL between the ranks' GPUs instead (nccl/nccl_comm.hpp); Gloo still
// forms the group, checks the descriptors and runs barriers.
#include <burn/collective.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>
#include <type_traits>

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include <burn/error.hpp>

#include "collective/store.hpp"
#if BURN_HAS_NCCL
#include "collective/nccl/nccl_comm.hpp"
#endif

namespace burn::collective {

namespace {

enum class Kind : std::uint8_t { AllReduce = 1, Broadcast, AllGather, ReduceScatter, Barrier };

const char* name_of(Kind k) {
  switch (k) {
    case Kind::AllReduce: return "ProcessGroup::all_reduce";
    case Kind::Broadcast: return "ProcessGroup::broadcast";
    case Kind::AllGather: return "ProcessGroup::all_gather";
    case Kind::ReduceScatter: return "ProcessGroup::reduce_scatter";
    case Kind::Barrier: return "ProcessGroup::barrier";
  }
  return "ProcessGroup";
}

/// What one rank asked for; every rank's must match.
struct Descriptor {
  std::uint8_t kind = 0;
  std::uint8_t dtype = 0;
  std::uint8_t op = 0;
  std::uint8_t unused = 0;
  std::int32_t root = 0;
  std::uint64_t elements = 0;
  std::uint64_t dim0 = 0;
};
static_assert(sizeof(Descriptor) == 24 && std::is_trivially_copyable_v<Descriptor>);

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "Sum";
    case ReduceOp::Mean: return "Mean";
    case ReduceOp::Max: return "Max";
  }
  return "?";
}

template <class T>
void sum_into(void* out, const void* a, const void* b, std::size_t n) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) o[i] = static_cast<T>(x[i] + y[i]);
}

template <class T>
void max_into(void* out, const void* a, const void* b, std::size_t n) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) o[i] = std::max(x[i], y[i]);
}

/// Calls f with a null pointer of the C++ type of a dtype Gloo can reduce
/// (every dtype but the half floats, which are reduced as f32, and bool).
template <class F>
void with_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F64: return f(static_cast<double*>(nullptr));
    case DType::F32: return f(static_cast<float*>(nullptr));
    case DType::I64: return f(static_cast<std::int64_t*>(nullptr));
    case DType::I32: return f(static_cast<std::int32_t*>(nullptr));
    case DType::I16: return f(static_cast<std::int16_t*>(nullptr));
    case DType::I8: return f(static_cast<std::int8_t*>(nullptr));
    case DType::U64: return f(static_cast<std::uint64_t*>(nullptr));
    case DType::U32: return f(static_cast<std::uint32_t*>(nullptr));
    case DType::U16: return f(static_cast<std::uint16_t*>(nullptr));
    case DType::U8: return f(static_cast<std::uint8_t*>(nullptr));
    default: break;
  }
  throw Error("ProcessGroup", fmt::format("dtype {} cannot be reduced", dtype_name(dtype)));
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

long parse_env_int(const char* name, long min, long max, bool required, long fallback) {
  const std::string v = env_or_empty(name);
  if (v.empty()) {
    if (required)
      throw ConfigurationError("ProcessGroup::from_env",
                               fmt::format("{} is not set: start the job with burn-run (or torchrun), or set RANK, "
                                           "WORLD_SIZE, MASTER_ADDR and MASTER_PORT for every process",
                                           name));
    return fallback;
  }
  char* end = nullptr;
  const long parsed = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0' || parsed < min || parsed > max)
    throw ConfigurationError("ProcessGroup::from_env",
                             fmt::format("{}={:?} is not a whole number from {} to {}", name, v, min, max));
  return parsed;
}

bool is_loopback(const std::string& host) { return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0; }

}  // namespace

struct ProcessGroup::Impl {
  GroupOptions options;
  std::unique_ptr<StoreServer> server;  // rank 0 only
  std::unique_ptr<StoreClient> store;
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
#if BURN_HAS_NCCL
  std::unique_ptr<nccl::Communicator> nccl;  // Engine::Nccl only
#endif
  std::uint32_t next_tag = 0;

#if BURN_HAS_NCCL
  /// The NCCL communicator when this group's engine is NCCL and it takes `dtype`.
  nccl::Communicator* nccl_for(DType dtype) { return nccl && nccl::supports(dtype) ? nccl.get() : nullptr; }
#endif

  std::string where() const { return fmt::format("rank {} of {}", options.rank, options.world_size); }

  // Runs one Gloo call; its failures become an ExecutionError for `kind`.
  template <class F>
  void run(Kind kind, F&& f) {
    try {
      f();
    } catch (const gloo::Exception& e) {
      throw ExecutionError(name_of(kind), fmt::format("{}: {} (Gloo: {})", where(), who_failed(), e.what()));
    }
  }

  /// Where and why, after another engine's collective failed.
  std::string failure() { return fmt::format("{}: {}", where(), who_failed()); }

  // After a failed collective: which rank went, as the rendezvous saw it.
  std::string who_failed() {
    std::string gone;
    try {
      gone = store->departed(std::chrono::milliseconds(1000));
    } catch (const Error&) {
      return fmt::format("rank 0 is gone (its rendezvous at {}:{} does not answer either)", options.master_addr,
                         options.master_port);
    }
    if (gone.empty())
      return fmt::format(
          "a peer did not answer within {} ms (every rank alive: a rank may be stuck, or calling "
          "other collectives)",
          options.timeout.count());
    std::string list;
    for (std::size_t at = 0, nl; (nl = gone.find('\n', at)) != std::string::npos; at = nl + 1)
      list += (list.empty() ? "" : "; ") + gone.substr(at, nl - at);
    return list + "; the job cannot go on without it: restart every rank";
  }

  std::uint32_t tag() { return next_tag++; }

  // All-gathers every rank's descriptor and checks they match ours.
  void agree(Kind kind, const Descriptor& mine) {
    std::vector<Descriptor> all(static_cast<std::size_t>(options.world_size));
    run(kind, [&] {
      gloo::AllgatherOptions opts(context);
      opts.setInput(reinterpret_cast<std::uint8_t*>(const_cast<Descriptor*>(&mine)), sizeof(Descriptor));
      opts.setOutput(reinterpret_cast<std::uint8_t*>(all.data()), all.size() * sizeof(Descriptor));
      opts.setTag(tag());
      opts.setTimeout(options.timeout);
      gloo::allgather(opts);
    });
    for (std::size_t r = 0; r < all.size(); ++r) {
      const Descriptor& d = all[r];
      if (std::memcmp(&d, &mine, sizeof(Descriptor)) == 0) continue;
      std::string theirs;
      if (d.kind != mine.kind) theirs = fmt::format("called {}", name_of(static_cast<Kind>(d.kind)));
      else if (d.dtype != mine.dtype) theirs = fmt::format("passed dtype {}", dtype_name(static_cast<DType>(d.dtype)));
      else if (d.elements != mine.elements || d.dim0 != mine.dim0)
        theirs = fmt::format("passed {} elements ({} along dimension 0), this rank {} ({})", d.elements, d.dim0,
                             mine.elements, mine.dim0);
      else if (d.op != mine.op) theirs = fmt::format("asked for {}", op_name(static_cast<ReduceOp>(d.op)));
      else theirs = fmt::format("named root {}", d.root);
      throw Error(name_of(kind),
                  fmt::format("{}: rank {} {}; every rank must make the same collective calls, in the same order, "
                              "with tensors of the same shape and dtype",
                              where(), r, theirs));
    }
  }

  static Descriptor describe(Kind kind, const TensorData& data, ReduceOp op = ReduceOp::Sum, int root = 0) {
    Descriptor d;
    d.kind = static_cast<std::uint8_t>(kind);
    d.dtype = static_cast<std::uint8_t>(data.dtype());
    d.op = static_cast<std::uint8_t>(op);
    d.root = root;
    d.elements = data.num_elements();
    d.dim0 = data.shape().rank() == 0 ? 1 : data.shape().dims()[0];
    return d;
  }

  // The reduction itself, in place, after the ranks agreed.
  void reduce(Kind kind, TensorData& data, ReduceOp op) {
    const std::size_t n = data.num_elements();
    with_type(data.dtype(), [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      const auto on_gloo = [&] {
        run(kind, [&] {
          gloo::AllreduceOptions opts(context);
          opts.setOutput(reinterpret_cast<T*>(data.bytes_mut().data()), n);
          opts.setReduceFunction(op == ReduceOp::Max ? &max_into<T> : &sum_into<T>);
          opts.setTag(tag());
          opts.setTimeout(options.timeout);
          gloo::allreduce(opts);
        });
      };
#if BURN_HAS_NCCL
      if (auto* comm = nccl_for(data.dtype())) {
        comm->all_reduce(data.bytes_mut().data(), n, data.dtype(), op == ReduceOp::Max, [&] { return failure(); });
      } else {
        on_gloo();
      }
#else
      on_gloo();
#endif
      if (op == ReduceOp::Mean) {
        if constexpr (std::is_floating_point_v<T>) {
          auto* values = reinterpret_cast<T*>(data.bytes_mut().data());
          const T count = static_cast<T>(options.world_size);
          for (std::size_t i = 0; i < n; ++i) values[i] /= count;
        }
      }
    });
  }

  // Checks what a reduction can take; half floats travel as f32. `check`:
  // first agree with the other ranks on what is being reduced.
  TensorData reduced(Kind kind, TensorData data, ReduceOp op, bool check = true) {
    if (is_bool(data.dtype()))
      throw Error(name_of(kind), "bool tensors cannot be reduced: convert to an int dtype first");
    if (op == ReduceOp::Mean && !is_float(data.dtype()))
      throw Error(name_of(kind), fmt::format("Mean of a {} tensor: Mean needs a float dtype (use Sum, then divide)",
                                             dtype_name(data.dtype())));
    if (check) agree(kind, describe(kind, data, op));
    if (is_half(data.dtype())) {
      TensorData wide = data.convert(DType::F32);
      reduce(kind, wide, op);
      return wide.convert(data.dtype());
    }
    reduce(kind, data, op);
    return data;
  }
};

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::ProcessGroup(ProcessGroup&&) noexcept = default;
ProcessGroup& ProcessGroup::operator=(ProcessGroup&& other) noexcept {
  if (this != &other) {
    if (impl_ && impl_->store) impl_->store->bye();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
ProcessGroup::~ProcessGroup() {
  if (impl_ && impl_->store) impl_->store->bye();
}

int ProcessGroup::rank() const { return impl_->options.rank; }
int ProcessGroup::world_size() const { return impl_->options.world_size; }
Engine ProcessGroup::engine() const { return impl_->options.engine; }

int nccl_device_count() noexcept {
#if BURN_HAS_NCCL
  return nccl::device_count();
#else
  return 0;
#endif
}

ProcessGroup ProcessGroup::from_env() {
  GroupOptions o;
  o.world_size = static_cast<int>(parse_env_int("WORLD_SIZE", 1, 1 << 20, true, 1));
  o.rank = static_cast<int>(parse_env_int("RANK", 0, o.world_size - 1, true, 0));
  o.master_addr = env_or_empty("MASTER_ADDR");
  if (o.master_addr.empty())
    throw ConfigurationError("ProcessGroup::from_env",
                             "MASTER_ADDR is not set: the address of rank 0's machine (127.0.0.1 on one machine)");
  o.master_port = static_cast<std::uint16_t>(parse_env_int("MASTER_PORT", 1, 65535, true, 0));
  o.timeout = std::chrono::milliseconds(parse_env_int("BURN_COLLECTIVE_TIMEOUT_MS", 1, 86'400'000, false, 30'000));
  o.local_addr = env_or_empty("BURN_COLLECTIVE_LOCAL_ADDR");
  o.local_rank = static_cast<int>(parse_env_int("LOCAL_RANK", 0, 1 << 20, false, 0));
  const std::string engine = env_or_empty("BURN_COLLECTIVE_ENGINE");
  if (engine == "nccl") {
    o.engine = Engine::Nccl;
  } else if (!engine.empty() && engine != "gloo") {
    throw ConfigurationError("ProcessGroup::from_env",
                             fmt::format("BURN_COLLECTIVE_ENGINE={:?}: use gloo (the default) or nccl", engine));
  }
  return create(o);
}

ProcessGroup ProcessGroup::create(const GroupOptions& options) { return create_with(options, nullptr); }

std::vector<ProcessGroup> ProcessGroup::create_local(int world_size, std::chrono::milliseconds timeout) {
  if (world_size < 1)
    throw ConfigurationError("ProcessGroup::create_local",
                             fmt::format("a group needs at least one rank, got {}", world_size));
  auto server = std::make_unique<StoreServer>("127.0.0.1", 0);
  GroupOptions options;
  options.world_size = world_size;
  options.master_port = server->port();
  options.timeout = timeout;
  // Each rank's create() returns only once all have connected: one thread each.
  const auto n = static_cast<std::size_t>(world_size);
  std::vector<std::optional<ProcessGroup>> made(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r, server = r == 0 ? std::move(server) : nullptr]() mutable {
      GroupOptions mine = options;
      mine.rank = static_cast<int>(r);
      try {
        made[r].emplace(create_with(mine, std::move(server)));
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<ProcessGroup> groups;
  groups.reserve(n);
  for (auto& g : made) groups.push_back(std::move(*g));
  return groups;
}

ProcessGroup ProcessGroup::create_with(const GroupOptions& options, std::unique_ptr<StoreServer> server) {
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size)
    throw ConfigurationError("ProcessGroup::create", fmt::format("rank {} is not in a world of size {}: ranks run "
                                                                 "from 0 to world_size - 1",
                                                                 options.rank, options.world_size));
  if (options.timeout.count() <= 0) throw ConfigurationError("ProcessGroup::create", "the timeout must be positive");
  // Gloo writes to its sockets with writev, which raises SIGPIPE when a peer
  // has died; the default action would kill this rank instead of letting
  // the collective throw. A program that installed its own handler keeps it.
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (impl->options.local_addr.empty()) {
    if (is_loopback(options.master_addr)) {
      impl->options.local_addr = "127.0.0.1";
    } else {
      char host[256] = {};
      ::gethostname(host, sizeof(host) - 1);
      impl->options.local_addr = host;
    }
  }
  if (options.rank == 0)
    impl->server = server ? std::move(server) : std::make_unique<StoreServer>(options.master_addr, options.master_port);
  impl->store = std::make_unique<StoreClient>(options.master_addr, options.master_port, options.timeout);
  impl->store->hello(options.rank);

  // Ranks that disagree on the world size would wait for each other forever.
  const std::string size_text = std::to_string(options.world_size);
  if (options.rank == 0) {
    impl->store->set("burn/world_size", std::vector<char>(size_text.begin(), size_text.end()));
  } else {
    const auto theirs = impl->store->get("burn/world_size");
    if (std::string(theirs.begin(), theirs.end()) != size_text)
      throw ExecutionError("ProcessGroup::create",
                           fmt::format("WORLD_SIZE is {} on rank {} but {} on rank 0: start every rank with the "
                                       "same WORLD_SIZE",
                                       size_text, options.rank, std::string(theirs.begin(), theirs.end())));
  }

  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = impl->options.local_addr;
    impl->device = gloo::transport::tcp::CreateDevice(attr);
    impl->context = std::make_shared<gloo::rendezvous::Context>(options.rank, options.world_size);
    impl->context->setTimeout(options.timeout);
    impl->context->connectFullMesh(*impl->store, impl->device);
  } catch (const gloo::Exception& e) {
    throw ExecutionError("ProcessGroup::create",
                         fmt::format("rank {} of {} could not connect to the other ranks (this rank listens on {}; "
                                     "set BURN_COLLECTIVE_LOCAL_ADDR to an address they can reach): {}",
                                     options.rank, options.world_size, impl->options.local_addr, e.what()));
  }
  if (options.engine == Engine::Nccl) {
#if BURN_HAS_NCCL
    // Rank 0's NCCL id goes to the others through the rendezvous store.
    StoreClient& store = *impl->store;
    impl->nccl = nccl::Communicator::create(
        options.rank, options.world_size, options.local_rank,
        [&](const std::string& mine) {
          if (options.rank == 0) store.set("burn/nccl_id", std::vector<char>(mine.begin(), mine.end()));
          const std::vector<char> id = store.get("burn/nccl_id");
          return std::string(id.begin(), id.end());
        },
        options.timeout);
#else
    throw ConfigurationError("ProcessGroup::create",
                             "the NCCL engine was asked for, but this build of burn has none (configured without "
                             "the CUDA toolkit's nccl.h, or with BURN_NCCL=OFF): use the Gloo engine, or rebuild "
                             "where the toolkit is");
#endif
  }
  return ProcessGroup(std::move(impl));
}

TensorData ProcessGroup::all_reduce_data(TensorData data, ReduceOp op) {
  return impl_->reduced(Kind::AllReduce, std::move(data), op);
}

TensorData ProcessGroup::all_reduce_agreed(TensorData data, ReduceOp op) {
  return impl_->reduced(Kind::AllReduce, std::move(data), op, false);
}

TensorData ProcessGroup::broadcast_data(TensorData data, int root) {
  if (root < 0 || root >= world_size())
    throw Error("ProcessGroup::broadcast",
                fmt::format("root {} is not a rank of this group (0 to {})", root, world_size() - 1));
  impl_->agree(Kind::Broadcast, Impl::describe(Kind::Broadcast, data, ReduceOp::Sum, root));
  const std::size_t bytes = data.bytes().size();
  if (bytes == 0) return data;
#if BURN_HAS_NCCL
  if (impl_->nccl) {
    impl_->nccl->broadcast(data.bytes_mut().data(), bytes, root, [&] { return impl_->failure(); });
    return data;
  }
#endif
  impl_->run(Kind::Broadcast, [&] {
    gloo::BroadcastOptions opts(impl_->context);
    auto* p = reinterpret_cast<std::uint8_t*>(data.bytes_mut().data());
    if (rank() == root) opts.setInput(p, bytes);
    opts.setOutput(p, bytes);
    opts.setRoot(root);
    opts.setTag(impl_->tag());
    opts.setTimeout(impl_->options.timeout);
    gloo::broadcast(opts);
  });
  return data;
}

TensorData ProcessGroup::all_gather_data(const TensorData& data) {
  if (data.shape().rank() == 0)
    throw Error("ProcessGroup::all_gather", "a scalar (rank-0) tensor has no dimension 0 to gather along");
  impl_->agree(Kind::AllGather, Impl::describe(Kind::AllGather, data));
  const std::size_t bytes = data.bytes().size();
  std::vector<std::byte> out(bytes * static_cast<std::size_t>(world_size()));
  bool done = bytes == 0;
#if BURN_HAS_NCCL
  if (impl_->nccl && !done) {
    impl_->nccl->all_gather(data.bytes().data(), out.data(), bytes, [&] { return impl_->failure(); });
    done = true;
  }
#endif
  if (!done) {
    impl_->run(Kind::AllGather, [&] {
      gloo::AllgatherOptions opts(impl_->context);
      opts.setInput(reinterpret_cast<std::uint8_t*>(const_cast<std::byte*>(data.bytes().data())), bytes);
      opts.setOutput(reinterpret_cast<std::uint8_t*>(out.data()), out.size());
      opts.setTag(impl_->tag());
      opts.setTimeout(impl_->options.timeout);
      gloo::allgather(opts);
    });
  }
  std::vector<std::size_t> dims(data.shape().dims().begin(), data.shape().dims().end());
  dims[0] *= static_cast<std::size_t>(world_size());
  return TensorData(std::move(out), Shape(dims), data.dtype());
}

TensorData ProcessGroup::reduce_scatter_data(const TensorData& data, ReduceOp op) {
  const auto n = static_cast<std::size_t>(world_size());
  if (data.shape().rank() == 0 || data.shape().dims()[0] % n != 0)
    throw Error("ProcessGroup::reduce_scatter",
                fmt::format("dimension 0 of {} must divide by the world size {}", data.shape().to_string(), n));
  // The whole tensor is reduced, then this rank keeps its part: twice the
  // traffic of a true reduce-scatter, which Gloo offers only in its older,
  // in-place algorithm API.
  TensorData all = impl_->reduced(Kind::ReduceScatter, data, op);
  const std::size_t part = all.bytes().size() / n;
  const auto begin = all.bytes().begin() + static_cast<std::ptrdiff_t>(part * static_cast<std::size_t>(rank()));
  std::vector<std::byte> mine(begin, begin + static_cast<std::ptrdiff_t>(part));
  std::vector<std::size_t> dims(data.shape().dims().begin(), data.shape().dims().end());
  dims[0] /= n;
  return TensorData(std::move(mine), Shape(dims), data.dtype());
}

void ProcessGroup::barrier() {
  Descriptor d;
  d.kind = static_cast<std::uint8_t>(Kind::Barrier);
  impl_->agree(Kind::Barrier, d);
}

}  // namespace burn::collective
