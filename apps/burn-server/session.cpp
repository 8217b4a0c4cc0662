#include "session.hpp"

#include <algorithm>
#include <cstring>

#include <burn/backend/backend.hpp>

#include "core/huge_pages.hpp"
#include "device/runtime.hpp"
#include "dispatch/program.hpp"
#include "log.hpp"

namespace burn_server {

using burn::remote::CommandKind;
using burn::remote::MessageKind;
using burn::remote::ProtocolError;
using burn::remote::Reader;
using burn::remote::Writer;

namespace {

// Back-pressure: a client that sends faster than its ops run stops being read
// above the high mark and is read again below the low one.
constexpr std::size_t kQueueHighBytes = std::size_t{256} << 20;
constexpr std::size_t kQueueLowBytes = std::size_t{64} << 20;

// burn::Error's what() is "[op] message": the message alone, for resending.
std::string message_of(const burn::Error& e) {
  std::string what = e.what();
  const std::string prefix = "[" + e.op() + "] ";
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

// Compares without an early exit, so the time taken does not tell how much of
// a guessed token was right.
bool same_secret(std::string_view given, std::string_view expected) {
  if (given.size() != expected.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < given.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ expected[i]);
  return diff == 0;
}

std::uint64_t bytes_of(const burn::ir::TensorSpec& spec) {
  return spec.shape.checked_num_elements("burn-server", burn::dtype_size(spec.dtype)) * burn::dtype_size(spec.dtype);
}

}  // namespace

Session::Session(std::uint64_t id, std::shared_ptr<burn::remote::Channel> channel,
                 const std::vector<HostedDevice>& devices, const SessionLimits& limits)
    : id_(id), channel_(std::move(channel)), devices_(devices), limits_(limits), peer_(channel_->peer()) {}

Session::~Session() { join(); }

void Session::join() {
  if (worker_.joinable()) worker_.join();
}

void Session::start() {
  std::weak_ptr<Session> weak = shared_from_this();
  channel_->start(
      [weak](burn::remote::Message message) {
        if (auto s = weak.lock()) s->on_message(std::move(message));
      },
      [weak](const std::string& reason) {
        if (auto s = weak.lock()) s->on_close(reason);
      });
  worker_ = std::thread([this] { run(); });
}

// Network thread: queue for the worker.
void Session::on_message(burn::remote::Message message) {
  bool pause = false;
  {
    std::lock_guard lock(mutex_);
    queued_bytes_ += message.size();
    queue_.push_back(std::move(message));
    if (!paused_ && queued_bytes_ > kQueueHighBytes) pause = paused_ = true;
  }
  if (pause) channel_->pause_reading(true);
  wake_.notify_one();
}

void Session::on_close(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    closed_ = reason;
  }
  wake_.notify_one();
}

void Session::run() {
  std::string end_reason;
  for (;;) {
    burn::remote::Message message;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return !queue_.empty() || closed_; });
      if (closed_) {  // the client is gone: what it queued has no one to answer to
        end_reason = *closed_;
        break;
      }
      message = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= message.size();
      if (paused_ && queued_bytes_ < kQueueLowBytes) {
        paused_ = false;
        channel_->pause_reading(false);
      }
    }
    // Errors of the ops themselves are kept for the next Status (execute,
    // read, sync); anything that escapes here leaves no safe answer to give,
    // so the connection ends and the client hears why it was lost.
    std::string dropped;
    try {
      handle(message);
      channel_->recycle(std::move(message));
    } catch (const ProtocolError& e) {
      dropped = e.what();
    } catch (const std::exception& e) {
      dropped = std::string("server error: ") + e.what();
    }
    if (!dropped.empty()) {
      log("session {} ({}): dropped: {}", id_, peer_, dropped);
      channel_->close();
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return closed_.has_value(); });
      end_reason = dropped;
      break;
    }
  }
  const std::size_t freed = tensors_.size();
  open_windows_.clear();
  closed_windows_.clear();
  tensors_.clear();
  failed_.clear();
  upload_.reset();
  held_bytes_ = 0;
  log("session {} ({}) closed ({}): {} ops run, {} tensors freed", id_, peer_, end_reason, ops_run_, freed);
  finished_ = true;
}

void Session::handle(const burn::remote::Message& message) {
  Reader r(message);
  if (!device_) {
    if (r.kind() != MessageKind::Hello) throw ProtocolError("the first message is not a Hello: not a burn client");
    return hello(r);
  }
  if (upload_ && r.kind() != MessageKind::UploadChunk)
    throw ProtocolError("an upload was interrupted by another message");
  switch (r.kind()) {
    case MessageKind::Hello: throw ProtocolError("a second Hello");
    case MessageKind::Batch: return batch(r);
    case MessageKind::Upload: return upload_begin(r);
    case MessageKind::UploadChunk: return upload_chunk(r);
    case MessageKind::Sync: return r.expect_end(), sync();
    case MessageKind::Read: return read(r);
    case MessageKind::MemoryQuery: return r.expect_end(), memory_query();
    case MessageKind::ProfileQuery: return profile_query(r);
    default: throw ProtocolError(fmt::format("message kind {} is not one a client sends", static_cast<int>(r.kind())));
  }
}

// ---- the handshake ---------------------------------------------------------------------------------

void Session::hello(Reader& r) {
  auto refuse = [&](const std::string& reason) {
    Writer w(MessageKind::Refused);
    w.str(reason);
    send(std::move(w));
    throw ProtocolError("refused: " + reason);
  };
  if (r.str() != burn::remote::kMagic) throw ProtocolError("the Hello lacks the burn-remote magic");
  const auto version = r.u32();
  if (version != burn::remote::kProtocolVersion)
    refuse(fmt::format("this server speaks remote protocol version {}, the client version {}; use matching builds",
                       burn::remote::kProtocolVersion, version));
  const std::string token = r.str();
  const auto selection = r.u8();
  const std::string name = r.str();
  const auto index = r.u32();
  r.expect_end();
  if (!limits_.token.empty() && !same_secret(token, limits_.token))
    refuse(token.empty() ? "this server requires a token (RemoteOptions::token or BURN_REMOTE_TOKEN)" : "wrong token");

  std::optional<std::size_t> chosen;
  using burn::remote::DeviceSelection;
  switch (static_cast<DeviceSelection>(selection)) {
    case DeviceSelection::None: break;
    case DeviceSelection::Default:
      if (devices_.empty()) refuse("this server hosts no device");
      chosen = 0;
      break;
    case DeviceSelection::ByName: {
      for (std::size_t i = 0; i < devices_.size(); ++i)
        if (devices_[i].info.name == name) chosen = i;
      if (!chosen) {
        std::string names;
        for (const auto& d : devices_) names += (names.empty() ? "" : ", ") + d.info.name;
        refuse(fmt::format("no device '{}' here; this server hosts: {}", name, names));
      }
      break;
    }
    case DeviceSelection::ByIndex:
      if (index >= devices_.size())
        refuse(fmt::format("no device {} here; this server hosts {} device(s)", index, devices_.size()));
      chosen = index;
      break;
    default: throw ProtocolError(fmt::format("unknown device selection {}", selection));
  }

  Writer w(MessageKind::Welcome);
  w.u32(burn::remote::kProtocolVersion);
  w.str(fmt::format("burn-server {}", BURN_VERSION));
  w.u32(static_cast<std::uint32_t>(devices_.size()));
  for (const auto& d : devices_) write_device_info(w, d.info);
  w.u32(chosen ? static_cast<std::uint32_t>(*chosen) : burn::remote::kNoDevice);
  send(std::move(w));
  if (!chosen) {
    log("session {} ({}): listed the devices", id_, peer_);
    channel_->close();
    return;
  }
  device_ = &devices_[*chosen];
  log("session {} ({}): opened on {}", id_, peer_, device_->info.name);
}

burn::backend::Backend& Session::backend() { return device_->device.runtime().backend(); }

// ---- ops --------------------------------------------------------------------------------------------

void Session::fail(std::string op, std::string message) {
  if (!error_) error_ = PendingError{std::move(op), std::move(message)};
}

void Session::check_memory(std::string_view op, std::uint64_t more) const {
  if (limits_.max_session_bytes && held_bytes_ + more > limits_.max_session_bytes)
    throw burn::Error(op, fmt::format("this session would hold {} MiB on burn-server, over its limit of {} MiB "
                                      "(burn-server --max-session-memory); free tensors or raise the limit",
                                      (held_bytes_ + more) >> 20, limits_.max_session_bytes >> 20));
}

void Session::store(std::uint64_t id, burn::backend::PrimitivePtr primitive, const burn::ir::TensorSpec& spec) {
  const std::uint64_t bytes = bytes_of(spec);
  auto [it, inserted] = tensors_.try_emplace(id, Tensor{std::move(primitive), spec, bytes});
  if (!inserted) throw ProtocolError(fmt::format("tensor id {} is used twice", id));
  held_bytes_ += bytes;
}

void Session::batch(Reader& r) {
  const std::size_t n = r.count(1);
  for (std::size_t i = 0; i < n; ++i) {
    const auto kind = static_cast<CommandKind>(r.u8());
    switch (kind) {
      case CommandKind::Execute: execute(r); break;
      case CommandKind::Drop: {
        const auto id = r.u64();
        if (auto it = tensors_.find(id); it != tensors_.end()) {
          held_bytes_ -= it->second.bytes;
          tensors_.erase(it);
        } else if (!failed_.erase(id)) {
          throw ProtocolError(fmt::format("a Drop names tensor id {}, which this session does not have", id));
        }
        break;
      }
      case CommandKind::Seed: backend().seed(r.u64()); break;
      case CommandKind::SetPersistent:
        if (auto* m = backend().memory()) m->set_persistent(r.u8() != 0);
        else r.u8();
        break;
      case CommandKind::Cleanup:
        if (auto* m = backend().memory()) m->cleanup();
        break;
      case CommandKind::DefineProgram: define_program(r); break;
      case CommandKind::RunProgram: run_program(r); break;
      case CommandKind::DropProgram: {
        const auto id = r.u64();
        if (!programs_.erase(id) && !failed_programs_.erase(id))
          throw ProtocolError(fmt::format("a DropProgram names program {}, which this session does not have", id));
        break;
      }
      case CommandKind::ProfileOpen: profile_open(r.u64()); break;
      case CommandKind::ProfileClose: profile_close(r.u64()); break;
      default: throw ProtocolError(fmt::format("unknown command {}", static_cast<int>(kind)));
    }
  }
  r.expect_end();
}

void Session::check_op(const burn::ir::Op& op, std::span<const burn::ir::TensorSpec> inputs,
                       std::span<const burn::ir::TensorSpec> claimed) {
  const std::string_view name = burn::ir::op_name(op);
  // Validated again here: the server trusts no client's shapes.
  const auto outputs = burn::ir::infer_outputs(op, inputs);
  if (!std::equal(outputs.begin(), outputs.end(), claimed.begin(), claimed.end()))
    throw burn::Error(name,
                      "the client and burn-server infer different outputs for this op; are they the same "
                      "version of burn?");
  auto& be = backend();
  if (!be.supports_op(op))
    throw burn::Error(
        name, fmt::format("not supported by the {} backend of burn-server ({})", be.name(), device_->info.name));
  for (const auto& s : outputs)
    if (!be.supports_dtype(s.dtype))
      throw burn::Error(name, fmt::format("{} on burn-server does not support dtype {}", device_->info.name,
                                          burn::dtype_name(s.dtype)));
}

std::vector<burn::backend::PrimitivePtr> Session::run_op(const burn::ir::Op& op,
                                                         std::span<const burn::backend::Input> inputs,
                                                         std::span<const burn::ir::TensorSpec> outputs) {
  auto& be = backend();
  auto prims = be.execute(op, inputs, outputs);
  if (prims.size() != outputs.size())
    throw burn::Error(burn::ir::op_name(op), fmt::format("the {} backend returned {} outputs, {} expected", be.name(),
                                                         prims.size(), outputs.size()));
  return prims;
}

void Session::execute(Reader& r) {
  const burn::ir::Op op = burn::remote::read_op(r);
  const std::size_t n_in = r.count(8);
  std::vector<std::uint64_t> in_ids(n_in);
  for (auto& id : in_ids) id = r.u64();
  const std::size_t n_out = r.count(13);
  std::vector<std::uint64_t> out_ids(n_out);
  std::vector<burn::ir::TensorSpec> claimed(n_out);
  for (std::size_t i = 0; i < n_out; ++i) {
    out_ids[i] = r.u64();
    claimed[i] = burn::remote::read_spec(r);
  }
  auto poison = [&] {
    for (auto id : out_ids)
      if (!failed_.insert(id).second || tensors_.contains(id))
        throw ProtocolError(fmt::format("tensor id {} is used twice", id));
  };
  std::vector<burn::backend::Input> inputs;
  inputs.reserve(n_in);
  for (auto id : in_ids) {
    if (failed_.contains(id)) return poison();  // an earlier failure, already reported
    auto it = tensors_.find(id);
    if (it == tensors_.end())
      throw ProtocolError(fmt::format("an op reads tensor id {}, which this session does not have", id));
    inputs.push_back({it->second.primitive, it->second.spec, false});
  }
  const std::string_view name = burn::ir::op_name(op);
  try {
    std::vector<burn::ir::TensorSpec> specs;
    specs.reserve(inputs.size());
    for (const auto& in : inputs) specs.push_back(in.spec);
    check_op(op, specs, claimed);
    std::uint64_t more = 0;
    for (const auto& s : claimed) more += bytes_of(s);
    check_memory(name, more);
    auto prims = run_op(op, inputs, claimed);
    for (std::size_t i = 0; i < claimed.size(); ++i) store(out_ids[i], std::move(prims[i]), claimed[i]);
    ++ops_run_;
  } catch (const burn::Error& e) {
    fail(e.op(), message_of(e));
    poison();
  } catch (const std::bad_alloc&) {
    fail(std::string(name), "burn-server ran out of memory");
    poison();
  }
}

// ---- programs ---------------------------------------------------------------------------------------

void Session::define_program(Reader& r) {
  const auto id = r.u64();
  if (programs_.contains(id) || failed_programs_.contains(id))
    throw ProtocolError(fmt::format("program id {} is used twice", id));
  auto entry = std::make_unique<Program>();
  entry->program = burn::remote::read_program(r, entry->caller_specs);
  try {
    if (programs_.size() + failed_programs_.size() >= burn::remote::kMaxPrograms)
      throw burn::Error("trace", fmt::format("this session holds {} traced programs, the most burn-server keeps; "
                                             "drop traced functions that are no longer called",
                                             burn::remote::kMaxPrograms));
    // Each op checked as Execute checks it.
    for (const auto& step : entry->program.steps) check_op(step.op, step.input_specs, step.outputs);
    std::vector<const burn::ir::TensorSpec*> written(entry->program.slot_count, nullptr);
    for (const auto& step : entry->program.steps)
      for (std::size_t k = 0; k < step.output_slots.size(); ++k)
        if (step.output_slots[k] != burn::detail::kUnusedSlot) written[step.output_slots[k]] = &step.outputs[k];
    for (auto slot : entry->program.results) entry->result_specs.push_back(*written[slot]);  // read_program checked
    if (auto* compiler = dynamic_cast<burn::detail::ProgramCompiler*>(&backend());
        compiler && !entry->program.steps.empty())
      entry->compiled = compiler->compile(entry->program);
    programs_.emplace(id, std::move(entry));
  } catch (const burn::Error& e) {
    fail(e.op(), message_of(e));
    failed_programs_.insert(id);
  }
}

void Session::run_program(Reader& r) {
  const auto id = r.u64();
  std::vector<std::uint64_t> in_ids(r.count(8));
  for (auto& in : in_ids) in = r.u64();
  std::vector<std::uint64_t> out_ids(r.count(8));
  std::unordered_set<std::uint64_t> fresh;
  for (auto& out : out_ids) {
    out = r.u64();
    if (tensors_.contains(out) || failed_.contains(out) || !fresh.insert(out).second)
      throw ProtocolError(fmt::format("tensor id {} is used twice", out));
  }
  auto poison = [&] {
    for (auto out : out_ids) failed_.insert(out);
  };
  const auto it = programs_.find(id);
  if (it == programs_.end()) {
    if (failed_programs_.contains(id)) return poison();  // its definition's error is reported
    throw ProtocolError(fmt::format("a RunProgram names program {}, which this session does not have", id));
  }
  const Program& p = *it->second;
  if (in_ids.size() != p.program.first_computed || out_ids.size() != p.program.results.size())
    throw ProtocolError(fmt::format("a RunProgram passes {} inputs and {} result ids to a program of {} and {}",
                                    in_ids.size(), out_ids.size(), p.program.first_computed, p.program.results.size()));
  std::vector<burn::backend::PrimitivePtr> slots(p.program.slot_count);
  for (std::size_t k = 0; k < in_ids.size(); ++k) {
    if (failed_.contains(in_ids[k])) return poison();  // an earlier failure, already reported
    const auto t = tensors_.find(in_ids[k]);
    if (t == tensors_.end())
      throw ProtocolError(
          fmt::format("a traced program reads tensor id {}, which this session does not have", in_ids[k]));
    if (p.caller_specs[k] && *p.caller_specs[k] != t->second.spec) {
      fail("trace", fmt::format("input {} of a traced program is {} {}, recorded for {} {}", k,
                                burn::dtype_name(t->second.spec.dtype), t->second.spec.shape.to_string(),
                                burn::dtype_name(p.caller_specs[k]->dtype), p.caller_specs[k]->shape.to_string()));
      return poison();
    }
    slots[k] = t->second.primitive;
  }
  try {
    std::uint64_t more = 0;
    for (const auto& s : p.result_specs) more += bytes_of(s);
    check_memory("trace", more);
    if (p.compiled) {
      p.compiled->run(slots);
    } else {
      burn::detail::run_steps(
          p.program, slots,
          [&](const burn::detail::ProgramStep& step, std::span<const burn::backend::Input> ins,
              std::vector<burn::backend::PrimitivePtr>& outs) { outs = run_op(step.op, ins, step.outputs); });
    }
    for (std::size_t k = 0; k < out_ids.size(); ++k) store(out_ids[k], slots[p.program.results[k]], p.result_specs[k]);
    ops_run_ += p.program.steps.size();
  } catch (const burn::Error& e) {
    fail(e.op(), message_of(e));
    poison();
  } catch (const std::bad_alloc&) {
    fail("trace", "burn-server ran out of memory");
    poison();
  }
}

// ---- data -------------------------------------------------------------------------------------------

void Session::upload_begin(Reader& r) {
  PendingUpload up;
  up.id = r.u64();
  up.spec = burn::remote::read_spec(r);
  up.expected = r.u64();
  r.expect_end();
  if (tensors_.contains(up.id) || failed_.contains(up.id))
    throw ProtocolError(fmt::format("tensor id {} is used twice", up.id));
  std::uint64_t bytes = 0;
  try {
    bytes = bytes_of(up.spec);
  } catch (const burn::Error& e) {
    throw ProtocolError(e.what());
  }
  if (bytes != up.expected)
    throw ProtocolError(fmt::format("an upload announces {} bytes for {} {}", up.expected, up.spec.shape.to_string(),
                                    burn::dtype_name(up.spec.dtype)));
  try {
    check_memory("from_data", bytes);
    if (!backend().supports_dtype(up.spec.dtype))
      throw burn::Error("from_data", fmt::format("{} on burn-server does not support dtype {}", device_->info.name,
                                                 burn::dtype_name(up.spec.dtype)));
    if (auto* host = backend().host_access()) {
      auto target = host->allocate_host(up.spec);
      up.primitive = std::move(target.primitive);
      up.destination = target.bytes;
    } else {
      burn::detail::reserve_with_huge_pages(up.bytes, bytes);
    }
  } catch (const burn::Error& e) {
    // The chunks still come: they are read and dropped.
    fail(e.op(), message_of(e));
    up.discard = true;
  }
  upload_ = std::move(up);
  if (bytes == 0) finish_upload();
}

void Session::upload_chunk(Reader& r) {
  if (!upload_) throw ProtocolError("upload data without an Upload");
  auto& up = *upload_;
  const auto part = r.rest();
  if (part.size() > up.expected) throw ProtocolError("more upload data than announced");
  if (!up.discard) {
    // The chunk follows the bytes received so far: all but those still expected.
    if (up.primitive)
      std::memcpy(up.destination.data() + (up.destination.size() - up.expected), part.data(), part.size());
    else up.bytes.insert(up.bytes.end(), part.begin(), part.end());
  }
  up.expected -= part.size();
  if (up.expected == 0) finish_upload();
}

void Session::finish_upload() {
  PendingUpload done = std::move(*upload_);
  upload_.reset();
  if (done.discard) {
    failed_.insert(done.id);
    return;
  }
  try {
    if (done.primitive) return store(done.id, std::move(done.primitive), done.spec);
    burn::TensorData data(std::move(done.bytes), done.spec.shape, done.spec.dtype);
    store(done.id, backend().from_data(std::move(data)), done.spec);
  } catch (const burn::Error& e) {
    fail(e.op(), message_of(e));
    failed_.insert(done.id);
  }
}

void Session::send_status() {
  Writer w(MessageKind::Status);
  if (error_) {
    w.u8(0);
    w.str(error_->op);
    w.str(error_->message);
    error_.reset();
  } else {
    w.u8(1);
  }
  send(std::move(w));
}

void Session::sync() {
  try {
    if (auto* stream = backend().stream()) stream->sync();
  } catch (const burn::Error& e) {
    fail(e.op(), message_of(e));
  }
  send_status();
}

void Session::read(Reader& r) {
  const auto id = r.u64();
  r.expect_end();
  if (failed_.contains(id)) {
    if (!error_) fail("to_data", "this tensor was never computed: the op that makes it failed (reported earlier)");
    return send_status();
  }
  auto it = tensors_.find(id);
  if (it == tensors_.end())
    throw ProtocolError(fmt::format("a Read names tensor id {}, which this session does not have", id));
  if (error_) return send_status();  // report what failed first
  // The chunks are written from the tensor itself where its device lays it
  // out in host memory (the tensor kept alive until sent), else from a copy.
  std::shared_ptr<const void> owner;
  std::span<const std::byte> bytes;
  try {
    auto* host = backend().host_access();
    if (auto in_place = host ? host->host_bytes(it->second.primitive, it->second.spec) : std::nullopt) {
      owner = it->second.primitive;
      bytes = *in_place;
    } else {
      auto data = std::make_shared<const burn::TensorData>(backend().to_data(it->second.primitive, it->second.spec));
      bytes = data->bytes();
      owner = std::move(data);
    }
  } catch (const burn::Error& e) {
    fail(e.op(), message_of(e));
    return send_status();
  }
  send_status();
  Writer header(MessageKind::DataHeader);
  burn::remote::write_spec(header, it->second.spec);
  header.u64(bytes.size());
  send(std::move(header));
  for (std::size_t at = 0; at < bytes.size(); at += burn::remote::kChunkBytes)
    channel_->send(Writer(MessageKind::DataChunk).take(), owner,
                   bytes.subspan(at, std::min(burn::remote::kChunkBytes, bytes.size() - at)));
}

// ---- profiling --------------------------------------------------------------------------------------

namespace {

/// A profile window for a device without a clock of its own: the server's
/// wall-clock time between the two points of the session's work, each after
/// a sync, as Device::profile measures locally (without the network's round
/// trips that a client-side measurement would add).
class WallClockWindow final : public burn::backend::DeviceClockWindow {
 public:
  explicit WallClockWindow(burn::backend::Backend& backend) : backend_(backend) {
    sync();
    start_ = std::chrono::steady_clock::now();
  }
  std::shared_future<std::optional<burn::ProfileTicks>> close() override {
    sync();
    std::promise<std::optional<burn::ProfileTicks>> done;
    done.set_value(burn::ProfileTicks(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_)));
    return done.get_future().share();
  }

 private:
  void sync() {
    if (auto* stream = backend_.stream()) stream->sync();
  }
  burn::backend::Backend& backend_;
  std::chrono::steady_clock::time_point start_;
};

std::shared_future<std::optional<burn::ProfileTicks>> unmeasured() {
  std::promise<std::optional<burn::ProfileTicks>> none;
  none.set_value(std::nullopt);
  return none.get_future().share();
}

}  // namespace

void Session::profile_open(std::uint64_t window) {
  if (open_windows_.contains(window) || closed_windows_.contains(window))
    throw ProtocolError(fmt::format("profile window id {} is used twice", window));
  // Only nesting Device::profile a thousand deep opens this many.
  if (open_windows_.size() >= burn::remote::kMaxProfileWindows)
    throw ProtocolError(fmt::format("more than {} profile windows open at once", burn::remote::kMaxProfileWindows));
  std::unique_ptr<burn::backend::DeviceClockWindow> clock;
  try {
    if (auto* stream = backend().stream()) clock = stream->open_profile_window();
    if (!clock) clock = std::make_unique<WallClockWindow>(backend());
  } catch (const burn::Error& e) {
    fail(e.op(), message_of(e));  // the window stays, unmeasured
  }
  open_windows_.emplace(window, std::move(clock));
}

void Session::profile_close(std::uint64_t window) {
  auto it = open_windows_.find(window);
  if (it == open_windows_.end())
    throw ProtocolError(fmt::format("a ProfileClose names window {}, which is not open", window));
  std::shared_future<std::optional<burn::ProfileTicks>> result = unmeasured();
  if (it->second) {
    try {
      result = it->second->close();
    } catch (const burn::Error& e) {
      fail(e.op(), message_of(e));
    }
  }
  open_windows_.erase(it);
  closed_windows_.emplace(window, std::move(result));
  // A client that never resolves its measurements does not make the server
  // keep them all: the oldest is forgotten (asked for later, it is unmeasured).
  if (closed_windows_.size() > burn::remote::kMaxProfileWindows) closed_windows_.erase(closed_windows_.begin());
}

void Session::profile_query(Reader& r) {
  const auto window = r.u64();
  r.expect_end();
  if (open_windows_.contains(window))
    throw ProtocolError(fmt::format("a ProfileQuery names window {}, which is still open", window));
  std::optional<burn::ProfileTicks> ticks;
  if (auto it = closed_windows_.find(window); it != closed_windows_.end()) {
    try {
      ticks = it->second.get();  // waits for the device to have run the window
    } catch (const burn::Error& e) {
      fail(e.op(), message_of(e));
    }
    closed_windows_.erase(it);
  }
  if (error_) return send_status();  // the error, and no measurement
  send_status();
  Writer w(MessageKind::ProfileReply);
  w.u8(ticks ? 1 : 0);
  w.u64(ticks ? static_cast<std::uint64_t>(ticks->duration().count()) : 0);
  send(std::move(w));
}

void Session::memory_query() {
  Writer w(MessageKind::MemoryReply);
  const auto* m = std::as_const(backend()).memory();
  const auto usage = m ? m->pool_usage() : std::nullopt;
  w.u8(usage ? 1 : 0);
  if (usage) {
    w.u64(usage->number_allocs);
    w.u64(usage->bytes_in_use);
    w.u64(usage->bytes_padding);
    w.u64(usage->bytes_reserved);
  }
  const auto reports = m ? m->pool_report() : std::nullopt;
  w.u8(reports ? 1 : 0);
  if (reports) {
    w.u32(static_cast<std::uint32_t>(reports->size()));
    for (const auto& p : *reports) {
      w.u64(p.page_size);
      w.u64(p.pages);
      w.u64(p.pages_peak);
      w.u64(p.largest_alloc);
    }
  }
  send(std::move(w));
}

}  // namespace burn_server
