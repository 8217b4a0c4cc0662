// The remote backend: a device of a burn-server. Every op is sent as its IR
// value (the same description autodiff and fusion consume), so the autodiff
// graph stays on the client and the server only computes.
#include <cstdlib>
#include <future>
#include <unordered_set>

#include <fmt/format.h>

#include <burn/backend/registry.hpp>
#include <burn/remote.hpp>

#include "backends/remote/client.hpp"
#include "device/runtime.hpp"

namespace burn {
namespace remote {
namespace {

/// A tensor of the session: only its id lives here. Dropping the last
/// reference tells the server (with the next batch) to free it.
class RemotePrimitive final : public backend::Primitive {
 public:
  RemotePrimitive(std::uint64_t id, const std::shared_ptr<ClientSession>& session)
      : id_(id), session_(session), connection_(session.get()) {}
  ~RemotePrimitive() override {
    if (auto s = session_.lock()) s->drop(id_);
  }
  RemotePrimitive(const RemotePrimitive&) = delete;
  RemotePrimitive& operator=(const RemotePrimitive&) = delete;
  std::uint64_t id() const noexcept { return id_; }
  /// The connection the tensor lives on, only compared: the tensor's device
  /// keeps that session alive, so no later one can have its address.
  const ClientSession* connection() const noexcept { return connection_; }

 private:
  std::uint64_t id_;
  std::weak_ptr<ClientSession> session_;
  const ClientSession* connection_;
};

/// The tensor's id on `session`'s server, for `op` (null: to_data). A
/// tensor made over an earlier connection to the same device (before its
/// server restarted) names nothing on this one.
std::uint64_t id_on(const backend::PrimitivePtr& p, const ClientSession& session, const ir::Op* op) {
  const auto& remote = static_cast<const RemotePrimitive&>(*p);
  if (remote.connection() != &session)
    throw ExecutionError(op ? std::string(ir::op_name(*op)) : std::string("to_data"),
                         fmt::format("this tensor was made over an earlier connection to burn-server at {}, "
                                     "which was lost with the tensor's data; make it again on the device",
                                     session.address()));
  return remote.id();
}

/// A profile window on the server device's clock: the server measures the
/// window's work there (on the device's own clock where it has one, else on
/// the server's wall clock between the two points of the session's work), so
/// the network's round trips are not in the measurement.
class RemoteClockWindow final : public backend::DeviceClockWindow {
 public:
  RemoteClockWindow(std::shared_ptr<ClientSession> session, std::uint64_t id) : session_(std::move(session)), id_(id) {}
  std::shared_future<std::optional<ProfileTicks>> close() override {
    session_->profile_close(id_);
    // Asked for only when resolved: closing must not wait for the server.
    return std::async(std::launch::deferred, [session = session_, id = id_] { return session->profile_result(id); })
        .share();
  }

 private:
  std::shared_ptr<ClientSession> session_;
  std::uint64_t id_;
};

/// A recorded program kept by the server (DefineProgram): a call is one
/// RunProgram command naming the caller's tensors and ids for the results,
/// instead of one command per op.
class RemoteProgram final : public detail::CompiledProgram {
 public:
  RemoteProgram(std::shared_ptr<ClientSession> session, std::uint64_t id, const detail::Program& program)
      : session_(std::move(session)),
        id_(id),
        program_(program),
        computed_results_(detail::computed_results(program)) {}
  ~RemoteProgram() override { session_->drop_program(id_); }
  RemoteProgram(const RemoteProgram&) = delete;
  RemoteProgram& operator=(const RemoteProgram&) = delete;

  void run(std::vector<backend::PrimitivePtr>& slots) const override {
    std::vector<std::uint64_t> inputs(program_.first_computed);
    for (std::size_t k = 0; k < inputs.size(); ++k) inputs[k] = id_on(slots[k], *session_, &program_.steps.front().op);
    // One id per computed result, as the server stores them; a slot
    // returned twice is one tensor, named by its first id (the other is
    // dropped at once).
    std::vector<std::uint64_t> results(computed_results_.size());
    for (auto& id : results) id = session_->new_id();
    session_->run_program(id_, inputs, results);
    for (std::size_t k = 0; k < results.size(); ++k) {
      auto& slot = slots[computed_results_[k]];
      auto tensor = std::make_shared<RemotePrimitive>(results[k], session_);
      if (!slot) slot = std::move(tensor);
    }
  }

 private:
  std::shared_ptr<ClientSession> session_;
  std::uint64_t id_;
  const detail::Program& program_;
  std::vector<std::uint32_t> computed_results_;
};

class RemoteBackend final : public backend::Backend,
                            public backend::Stream,
                            public backend::MemoryManager,
                            public detail::ProgramCompiler {
 public:
  RemoteBackend(std::shared_ptr<ClientSession> session, DeviceInfo info, std::string server)
      : session_(std::move(session)),
        info_(std::move(info)),
        server_(std::move(server)),
        supported_(info_.supported_ops.begin(), info_.supported_ops.end()) {}

  std::string name() const override { return "remote"; }
  std::string description() const override {
    return fmt::format("{} on burn-server {} ({}): {}", info_.name, session_->address(), server_, info_.description);
  }
  std::string display_name() const override { return fmt::format("remote:{}/{}", session_->address(), info_.name); }
  PhysicalIdentity identity() const override {
    // The card is on the server's machine: its PCI address means nothing here.
    PhysicalIdentity id;
    id.label = fmt::format("remote:{}/{}", session_->address(),
                           info_.identity.label.empty() ? info_.name : info_.identity.label);
    return id;
  }
  std::string physical_name() const override {
    return fmt::format("{} (at {})", info_.physical_name, session_->address());
  }
  bool supports_dtype(DType d) const override { return (info_.dtypes >> static_cast<unsigned>(d)) & 1u; }
  bool supports_op(const ir::Op& op) const override { return supported_.contains(op_support_key(op)); }
  DeviceSettings default_settings() const override { return info_.settings; }

  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override {
    constexpr std::size_t kInline = 4;
    std::uint64_t in_ids[kInline];
    std::vector<std::uint64_t> in_heap;
    std::span<const std::uint64_t> in_span;
    if (inputs.size() <= kInline) {
      for (std::size_t i = 0; i < inputs.size(); ++i) in_ids[i] = id_on(inputs[i].primitive, *session_, &op);
      in_span = {in_ids, inputs.size()};
    } else {
      for (const auto& in : inputs) in_heap.push_back(id_on(in.primitive, *session_, &op));
      in_span = in_heap;
    }
    std::vector<std::uint64_t> out_ids(outputs.size());
    for (auto& id : out_ids) id = session_->new_id();
    session_->execute(op, in_span, out_ids, outputs);
    std::vector<backend::PrimitivePtr> out;
    out.reserve(outputs.size());
    for (auto id : out_ids) out.push_back(std::make_shared<RemotePrimitive>(id, session_));
    return out;
  }

  /// The server keeps the program and runs it on one command per call.
  /// A recording too large for one message runs op by op.
  std::unique_ptr<detail::CompiledProgram> compile(const detail::Program& program) override {
    if (program.steps.empty() || program.slot_count > kMaxProgramSlots || program.steps.size() > kMaxProgramSteps)
      return nullptr;
    // The caller's slots' specs, from the steps that read them.
    std::vector<std::optional<ir::TensorSpec>> caller_specs(program.first_computed);
    for (const auto& step : program.steps)
      for (std::size_t j = 0; j < step.inputs.size(); ++j)
        if (step.inputs[j] < program.first_computed && !caller_specs[step.inputs[j]])
          caller_specs[step.inputs[j]] = step.input_specs[j];
    Writer encoded;
    write_program(encoded, program, caller_specs);
    if (encoded.size() > kMaxProgramBytes) return nullptr;
    const auto id = session_->new_id();
    session_->define_program(id, encoded.view());
    return std::make_unique<RemoteProgram>(session_, id, program);
  }

  backend::PrimitivePtr from_data(TensorData data) override {
    const auto id = session_->new_id();
    session_->upload(id, std::make_shared<const TensorData>(std::move(data)));
    return std::make_shared<RemotePrimitive>(id, session_);
  }

  TensorData to_data(const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec) override {
    return session_->read(id_on(primitive, *session_, nullptr), spec);
  }

  void seed(std::uint64_t seed) override { session_->seed(seed); }
  bool connection_lost() const override { return session_->lost(); }

  // Stream: the batch is the queue.
  void sync() override { session_->sync(); }
  std::unique_ptr<backend::DeviceClockWindow> open_profile_window() override {
    const auto id = session_->new_id();
    session_->profile_open(id);
    return std::make_unique<RemoteClockWindow>(session_, id);
  }
  void flush() override { session_->flush(); }

  // Memory: the server device's allocator.
  void cleanup() override { session_->cleanup(); }
  std::optional<std::vector<SlicedPoolReport>> pool_report() const override { return session_->memory().reports; }
  std::optional<MemoryPoolUsage> pool_usage() const override { return session_->memory().usage; }
  void set_persistent(bool on) override { session_->set_persistent(on); }

  backend::Stream* stream() override { return this; }
  backend::MemoryManager* memory() override { return info_.has_memory_manager ? this : nullptr; }

 private:
  std::shared_ptr<ClientSession> session_;
  DeviceInfo info_;
  std::string server_;
  std::unordered_set<std::uint16_t> supported_;
};

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::move(fallback);
}

/// `ms` (nothing: not a number) as a timeout of 1 ms up to a day, as
/// collectives take: a deadline past the clock's range would overflow.
/// `given` names where the value came from.
std::chrono::milliseconds checked_timeout(std::optional<long long> ms, const std::string& given) {
  if (!ms || *ms <= 0 || *ms > 86'400'000)
    throw DeviceError(DeviceErrorKind::NotAvailable, "Device::remote",
                      fmt::format("{} is not a number of milliseconds from 1 to 86400000 (a day)", given));
  return std::chrono::milliseconds(*ms);
}

std::chrono::milliseconds default_timeout() {
  const std::string text = env_or("BURN_REMOTE_TIMEOUT_MS", "");
  if (text.empty()) return std::chrono::milliseconds(10'000);
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  return checked_timeout(*end == '\0' ? std::optional(v) : std::nullopt, "BURN_REMOTE_TIMEOUT_MS=" + text);
}

struct Connected {
  std::unique_ptr<backend::Backend> backend;
  std::size_t index;
};

Connected connect(ConnectOptions options) {
  ServerWelcome welcome;
  auto session = ClientSession::open(options, welcome);
  if (!welcome.chosen)
    throw DeviceError(DeviceErrorKind::NotAvailable, "Device::remote",
                      fmt::format("burn-server at {} chose no device", options.address));
  const std::size_t index = *welcome.chosen;
  return {std::make_unique<RemoteBackend>(std::move(session), welcome.devices[index], welcome.server), index};
}

ConnectOptions options_from_env(const DeviceType& type) {
  ConnectOptions o;
  o.address = type.host()->address;
  o.token = env_or("BURN_REMOTE_TOKEN", "");
  o.timeout = default_timeout();
  const std::string ca = env_or("BURN_REMOTE_TLS_CA", "");
  if (ca == "system") o.tls = ClientTls{};
  else if (!ca.empty()) o.tls = ClientTls{ca};
  return o;
}

}  // namespace
}  // namespace remote

// ---- the public entry points --------------------------------------------------------------------

RemoteOptions Device::remote_options(const RemoteHost& host) { return RemoteOptions(host); }

Device RemoteOptions::init() const {
  remote::ConnectOptions o = remote::options_from_env(DeviceType::remote(host_));
  if (token_) o.token = *token_;
  if (timeout_)
    o.timeout =
        remote::checked_timeout(timeout_->count(), fmt::format("RemoteOptions::timeout of {} ms", timeout_->count()));
  if (tls_ca_) o.tls = remote::ClientTls{*tls_ca_};
  if (device_) {
    o.selection = remote::DeviceSelection::ByName;
    o.device_name = *device_;
  }
  auto connected = remote::connect(std::move(o));
  const DispatchDevice id{DeviceType::remote(host_), connected.index};
  // A second init() for the same server device keeps the first connection
  // (a Device names one compute resource); this one closes.
  detail::install_runtime(id, std::move(connected.backend));
  return Device(id);
}

Devices RemoteHost::devices() const { return Device::enumerate(DeviceType::remote(*this)); }

namespace backend {
BackendFactory remote_factory() {
  BackendFactory f{DeviceType(DeviceType::Kind::Remote), [] { return default_rank::kRemote; },
                   // No device on this machine: a remote device is always named with its host.
                   [] { return std::size_t{0}; },
                   [](std::size_t) -> std::unique_ptr<Backend> {
                     throw DeviceError(
                         DeviceErrorKind::NotAvailable, "Device",
                         "a remote device needs its server: Device::remote_options(RemoteHost(\"host:port\")).init()");
                   }};
  f.hosted_device_count = [](const DeviceType& type) -> std::size_t {
    auto o = remote::options_from_env(type);
    o.selection = remote::DeviceSelection::None;
    remote::ServerWelcome welcome;
    remote::ClientSession::open(o, welcome);
    return welcome.devices.size();
  };
  f.create_hosted = [](const DeviceType& type, std::size_t index) -> std::unique_ptr<Backend> {
    auto o = remote::options_from_env(type);
    o.selection = remote::DeviceSelection::ByIndex;
    o.device_index = static_cast<std::uint32_t>(index);
    return remote::connect(std::move(o)).backend;
  };
  return f;
}
}  // namespace backend

}  // namespace burn
