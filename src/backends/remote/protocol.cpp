#include "backends/remote/protocol.hpp"

#include <bit>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace burn::remote {

static_assert(std::endian::native == std::endian::little,
              "the remote protocol is little-endian, as is every host burn supports");

// ---- Writer / Reader ---------------------------------------------------------------------

void Writer::str(std::string_view s) {
  u32(static_cast<std::uint32_t>(s.size()));
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  buf_.insert(buf_.end(), p, p + s.size());
}

MessageKind message_kind(std::span<const std::byte> message) {
  if (message.empty()) throw ProtocolError("an empty message");
  return static_cast<MessageKind>(message[0]);
}

Reader::Reader(std::span<const std::byte> message) : data_(message), pos_(1), kind_(message_kind(message)) {}

template <class T>
T Reader::get() {
  if (remaining() < sizeof(T))
    throw ProtocolError(
        fmt::format("a message of kind {} ends early (at byte {} of {})", static_cast<int>(kind_), pos_, data_.size()));
  T v;
  std::memcpy(&v, data_.data() + pos_, sizeof(T));
  pos_ += sizeof(T);
  return v;
}

std::uint8_t Reader::u8() { return get<std::uint8_t>(); }
std::uint32_t Reader::u32() { return get<std::uint32_t>(); }
std::uint64_t Reader::u64() { return get<std::uint64_t>(); }
std::int64_t Reader::i64() { return get<std::int64_t>(); }
double Reader::f64() { return get<double>(); }

std::span<const std::byte> Reader::bytes(std::size_t n) {
  if (remaining() < n)
    throw ProtocolError(fmt::format("a message of kind {} ends early: {} bytes announced, {} left",
                                    static_cast<int>(kind_), n, remaining()));
  auto out = data_.subspan(pos_, n);
  pos_ += n;
  return out;
}

std::span<const std::byte> Reader::rest() { return bytes(remaining()); }

std::string Reader::str() {
  const auto b = bytes(u32());
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

std::size_t Reader::count(std::size_t min_item_bytes) {
  const std::size_t n = u32();
  if (min_item_bytes > 0 && n > remaining() / min_item_bytes)
    throw ProtocolError(
        fmt::format("a list of {} items cannot fit in the {} bytes left of the message", n, remaining()));
  return n;
}

void Reader::expect_end() const {
  if (remaining() != 0)
    throw ProtocolError(
        fmt::format("a message of kind {} has {} unexpected trailing bytes", static_cast<int>(kind_), remaining()));
}

// ---- dtypes and specs ------------------------------------------------------------------------

void write_dtype(Writer& w, DType d) { w.u8(static_cast<std::uint8_t>(d)); }

DType read_dtype(Reader& r) {
  const auto v = r.u8();
  if (v > static_cast<std::uint8_t>(DType::Bool)) throw ProtocolError(fmt::format("unknown dtype {}", v));
  return static_cast<DType>(v);
}

namespace {

void write_shape(Writer& w, const Shape& s) {
  w.u32(static_cast<std::uint32_t>(s.rank()));
  for (auto d : s) w.u64(d);
}

Shape read_shape(Reader& r) {
  const std::size_t rank = r.count(8);
  std::vector<std::size_t> dims(rank);
  for (auto& d : dims) d = r.u64();
  return Shape(dims);
}

}  // namespace

void write_spec(Writer& w, const ir::TensorSpec& spec) {
  write_shape(w, spec.shape);
  write_dtype(w, spec.dtype);
}

ir::TensorSpec read_spec(Reader& r) {
  Shape shape = read_shape(r);
  return {std::move(shape), read_dtype(r)};
}

// ---- programs ---------------------------------------------------------------------------------

void write_program(Writer& w, const detail::Program& program,
                   const std::vector<std::optional<ir::TensorSpec>>& caller_specs) {
  w.u32(static_cast<std::uint32_t>(program.slot_count));
  w.u32(static_cast<std::uint32_t>(program.first_computed));
  for (std::size_t k = 0; k < program.first_computed; ++k) {
    w.u8(caller_specs[k] ? 1 : 0);
    if (caller_specs[k]) write_spec(w, *caller_specs[k]);
  }
  w.u32(static_cast<std::uint32_t>(program.steps.size()));
  for (const detail::ProgramStep& step : program.steps) {
    write_op(w, step.op);
    w.u32(static_cast<std::uint32_t>(step.inputs.size()));
    for (auto slot : step.inputs) w.u32(slot);
    w.u32(static_cast<std::uint32_t>(step.outputs.size()));
    for (std::size_t k = 0; k < step.outputs.size(); ++k) {
      w.u32(step.output_slots[k]);
      write_spec(w, step.outputs[k]);
    }
  }
  const std::vector<std::uint32_t> computed = detail::computed_results(program);
  w.u32(static_cast<std::uint32_t>(computed.size()));
  for (auto slot : computed) w.u32(slot);
}

detail::Program read_program(Reader& r, std::vector<std::optional<ir::TensorSpec>>& caller_specs) {
  detail::Program p;
  p.slot_count = r.u32();
  p.first_computed = r.u32();
  if (p.first_computed > p.slot_count) throw ProtocolError("a program has more caller slots than slots");
  // Each caller slot takes at least its flag byte, so a forged count cannot
  // make this allocate much.
  if (p.slot_count > kMaxProgramSlots || p.first_computed > r.remaining())
    throw ProtocolError(fmt::format("a program of {} slots (at most {})", p.slot_count, kMaxProgramSlots));
  // Per slot, its spec once known: a caller's declared spec, or the output
  // spec of the step writing it.
  std::vector<std::uint32_t> spec_index(p.slot_count, detail::kUnusedSlot);
  std::vector<ir::TensorSpec> specs;
  const auto spec_of = [&](std::uint32_t slot) -> const ir::TensorSpec* {
    return spec_index[slot] == detail::kUnusedSlot ? nullptr : &specs[spec_index[slot]];
  };
  caller_specs.assign(p.first_computed, std::nullopt);
  for (std::size_t k = 0; k < p.first_computed; ++k)
    if (r.u8() != 0) {
      caller_specs[k] = read_spec(r);
      spec_index[k] = static_cast<std::uint32_t>(specs.size());
      specs.push_back(*caller_specs[k]);
    }
  const auto slot_in_range = [&](std::uint32_t slot) {
    if (slot >= p.slot_count) throw ProtocolError(fmt::format("a program names slot {} of {}", slot, p.slot_count));
    return slot;
  };
  const std::size_t n_steps = r.count(9);  // an op's kind and two counts at least
  if (n_steps > kMaxProgramSteps)
    throw ProtocolError(fmt::format("a program of {} steps (at most {})", n_steps, kMaxProgramSteps));
  p.steps.resize(n_steps);
  for (detail::ProgramStep& step : p.steps) {
    step.op = read_op(r);
    step.inputs.resize(r.count(4));
    for (auto& slot : step.inputs) {
      slot = slot_in_range(r.u32());
      if (!spec_of(slot)) throw ProtocolError(fmt::format("a program reads slot {} before it is written", slot));
      step.input_specs.push_back(*spec_of(slot));
    }
    const std::size_t n_out = r.count(6);
    for (std::size_t k = 0; k < n_out; ++k) {
      const std::uint32_t slot = r.u32();
      step.outputs.push_back(read_spec(r));
      step.output_slots.push_back(slot);
      if (slot == detail::kUnusedSlot) continue;
      if (slot_in_range(slot) < p.first_computed || spec_of(slot))
        throw ProtocolError(fmt::format("a program writes slot {}, a caller's or one written before", slot));
      spec_index[slot] = static_cast<std::uint32_t>(specs.size());
      specs.push_back(step.outputs.back());
    }
  }
  p.results.resize(r.count(4));
  for (auto& slot : p.results) {
    slot = slot_in_range(r.u32());
    if (slot < p.first_computed || !spec_of(slot))
      throw ProtocolError(fmt::format("a program returns slot {}, which none of its steps computes", slot));
  }
  detail::mark_reads(p);
  return p;
}

// ---- ops --------------------------------------------------------------------------------------
// Each op struct is visited field by field through a structured binding of
// as many names as it has fields, a count the compiler derives (the most
// initialisers that brace-initialise it). A field added to an op in
// ir/op.hpp is therefore encoded without an edit here, and a count derived
// wrongly fails to compile (the binding must name every field).
namespace detail {

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};

// Stands for any one field's initialiser; only named in unevaluated contexts,
// so its conversion is declared, never defined (outside the anonymous
// namespace, where that is not a warning).
struct AnyField {
  // std::optional's own converting constructor takes it (offering the
  // conversion too would make the two ambiguous).
  template <class U>
  requires(!IsOptional<U>::value) operator U() const;
};
}  // namespace detail

namespace {
using detail::AnyField;
using detail::IsOptional;
using detail::IsVector;

template <class T, std::size_t... I>
constexpr bool brace_initialisable(std::index_sequence<I...>) {
  return requires { T{(static_cast<void>(I), AnyField{})...}; };
}

template <class T, std::size_t N = 0>
constexpr std::size_t field_count() {
  static_assert(N <= 7, "an op struct with more than 7 fields: extend for_each_field in protocol.cpp");
  if constexpr (brace_initialisable<T>(std::make_index_sequence<N + 1>{})) return field_count<T, N + 1>();
  else return N;
}

template <class T, class F>
void for_each_field(T& o, F&& f) {
  constexpr std::size_t n = field_count<std::remove_const_t<T>>();
  if constexpr (n == 0) {
    static_assert(std::is_empty_v<std::remove_const_t<T>>);
  } else if constexpr (n == 1) {
    auto& [a] = o;
    f(a);
  } else if constexpr (n == 2) {
    auto& [a, b] = o;
    f(a), f(b);
  } else if constexpr (n == 3) {
    auto& [a, b, c] = o;
    f(a), f(b), f(c);
  } else if constexpr (n == 4) {
    auto& [a, b, c, d] = o;
    f(a), f(b), f(c), f(d);
  } else if constexpr (n == 5) {
    auto& [a, b, c, d, e] = o;
    f(a), f(b), f(c), f(d), f(e);
  } else if constexpr (n == 6) {
    auto& [a, b, c, d, e, g] = o;
    f(a), f(b), f(c), f(d), f(e), f(g);
  } else {
    static_assert(n == 7);
    auto& [a, b, c, d, e, g, h] = o;
    f(a), f(b), f(c), f(d), f(e), f(g), f(h);
  }
}

struct FieldWriter {
  Writer& w;
  template <class T>
  void operator()(const T& v) const {
    if constexpr (std::is_same_v<T, Shape>) {
      write_shape(w, v);
    } else if constexpr (std::is_same_v<T, DType>) {
      write_dtype(w, v);
    } else if constexpr (std::is_same_v<T, Scalar>) {
      w.u8(static_cast<std::uint8_t>(v.kind()));
      if (v.kind() == Scalar::Kind::Float) w.f64(v.as_double());
      else w.i64(v.as_int());
    } else if constexpr (std::is_enum_v<T>) {
      static_assert(ir::kValueCount<T> > 0, "an op enum without ir::kValueCount in ir/op.hpp");
      w.u8(static_cast<std::uint8_t>(v));
    } else if constexpr (std::is_same_v<T, bool>) {
      w.u8(v ? 1 : 0);
    } else if constexpr (std::is_same_v<T, double>) {
      w.f64(v);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      w.i64(v);
    } else if constexpr (std::is_same_v<T, std::size_t>) {
      w.u64(v);
    } else if constexpr (IsOptional<T>::value) {
      w.u8(v ? 1 : 0);
      if (v) (*this)(*v);
    } else if constexpr (IsVector<T>::value) {
      w.u32(static_cast<std::uint32_t>(v.size()));
      for (const auto& x : v) (*this)(x);
    } else {
      for_each_field(v, *this);  // a nested aggregate (SliceRange)
    }
  }
};

struct FieldReader {
  Reader& r;
  template <class T>
  void operator()(T& v) const {
    if constexpr (std::is_same_v<T, Shape>) {
      v = read_shape(r);
    } else if constexpr (std::is_same_v<T, DType>) {
      v = read_dtype(r);
    } else if constexpr (std::is_same_v<T, Scalar>) {
      const auto kind = r.u8();
      if (kind == static_cast<std::uint8_t>(Scalar::Kind::Float)) v = Scalar(r.f64());
      else if (kind == static_cast<std::uint8_t>(Scalar::Kind::Int)) v = Scalar(r.i64());
      else if (kind == static_cast<std::uint8_t>(Scalar::Kind::Bool)) v = Scalar(r.i64() != 0);
      else throw ProtocolError(fmt::format("unknown scalar kind {}", kind));
    } else if constexpr (std::is_enum_v<T>) {
      const auto e = r.u8();
      if (e >= ir::kValueCount<T>) throw ProtocolError(fmt::format("an op field has the out-of-range value {}", e));
      v = static_cast<T>(e);
    } else if constexpr (std::is_same_v<T, bool>) {
      const auto b = r.u8();
      if (b > 1) throw ProtocolError(fmt::format("a boolean op field has the value {}", b));
      v = b != 0;
    } else if constexpr (std::is_same_v<T, double>) {
      v = r.f64();
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      v = r.i64();
    } else if constexpr (std::is_same_v<T, std::size_t>) {
      v = r.u64();
    } else if constexpr (IsOptional<T>::value) {
      const auto present = r.u8();
      if (present > 1) throw ProtocolError("an optional op field has a bad presence byte");
      if (present) {
        typename T::value_type x{};
        (*this)(x);
        v = std::move(x);
      } else {
        v.reset();
      }
    } else if constexpr (IsVector<T>::value) {
      v.resize(r.count(1));
      for (auto& x : v) (*this)(x);
    } else {
      for_each_field(v, *this);
    }
  }
};

template <std::size_t... I>
ir::Op default_op(std::size_t index, std::index_sequence<I...>) {
  ir::Op op;
  const bool known = ((index == I ? (op.emplace<I>(), true) : false) || ...);
  if (!known) throw ProtocolError(fmt::format("unknown op {}", index));
  return op;
}

ir::Op default_op(std::size_t index) {
  return default_op(index, std::make_index_sequence<std::variant_size_v<ir::Op>>{});
}

// The ops whose enum member `op` says which operation they are (unary,
// binary, reductions and scans): support is decided per value.
template <class T>
constexpr bool kNamedByEnum = requires(const T& o) {
  requires std::is_enum_v<std::remove_cvref_t<decltype(o.op)>>;
};

}  // namespace

void write_op(Writer& w, const ir::Op& op) {
  w.u8(static_cast<std::uint8_t>(op.index()));
  std::visit([&](const auto& o) { for_each_field(o, FieldWriter{w}); }, op);
}

ir::Op read_op(Reader& r) {
  ir::Op op = default_op(r.u8());
  std::visit([&](auto& o) { for_each_field(o, FieldReader{r}); }, op);
  return op;
}

// ---- device descriptions ------------------------------------------------------------------------

void write_device_info(Writer& w, const DeviceInfo& info) {
  w.str(info.name);
  w.str(info.description);
  w.str(info.physical_name);
  const auto& id = info.identity;
  w.u8(id.pci_address ? 1 : 0);
  if (id.pci_address) {
    w.u32(id.pci_address->domain);
    w.u8(id.pci_address->bus);
    w.u8(id.pci_address->device);
    w.u8(id.pci_address->function);
  }
  w.u8(id.luid ? 1 : 0);
  if (id.luid) w.u64(*id.luid);
  w.str(id.label);
  w.u32(info.dtypes);
  w.u8(static_cast<std::uint8_t>(info.settings.float_dtype));
  w.u8(static_cast<std::uint8_t>(info.settings.int_dtype));
  w.u8(static_cast<std::uint8_t>(info.settings.bool_dtype));
  w.u8(info.has_memory_manager ? 1 : 0);
  w.u32(static_cast<std::uint32_t>(info.supported_ops.size()));
  for (auto k : info.supported_ops) w.u32(k);
}

DeviceInfo read_device_info(Reader& r) {
  DeviceInfo info;
  info.name = r.str();
  info.description = r.str();
  info.physical_name = r.str();
  if (r.u8()) {
    PciAddress pci;
    pci.domain = r.u32();
    pci.bus = r.u8();
    pci.device = r.u8();
    pci.function = r.u8();
    info.identity.pci_address = pci;
  }
  if (r.u8()) info.identity.luid = r.u64();
  info.identity.label = r.str();
  info.dtypes = r.u32();
  const auto f = r.u8(), i = r.u8(), b = r.u8();
  if (f > static_cast<std::uint8_t>(FloatDType::BF16) || i > static_cast<std::uint8_t>(IntDType::U8) || b != 0)
    throw ProtocolError("a device description has unknown default dtypes");
  info.settings = {static_cast<FloatDType>(f), static_cast<IntDType>(i), static_cast<BoolDType>(b)};
  info.has_memory_manager = r.u8() != 0;
  info.supported_ops.resize(r.count(4));
  for (auto& k : info.supported_ops) k = static_cast<std::uint16_t>(r.u32());
  return info;
}

// ---- op support ----------------------------------------------------------------------------------

std::uint16_t op_support_key(const ir::Op& op) {
  const auto sub = std::visit(
      [](const auto& o) -> unsigned {
        using T = std::decay_t<decltype(o)>;
        if constexpr (kNamedByEnum<T>) return static_cast<unsigned>(o.op);
        else return 0;
      },
      op);
  return static_cast<std::uint16_t>(op.index() * 256 + sub);
}

std::vector<ir::Op> op_support_probes() {
  std::vector<ir::Op> out;
  for (std::size_t i = 0; i < std::variant_size_v<ir::Op>; ++i) {
    ir::Op op = default_op(i);
    std::visit(
        [&](auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (kNamedByEnum<T>) {
            using E = decltype(o.op);
            for (unsigned e = 0; e < ir::kValueCount<E>; ++e) {
              T each = o;
              each.op = static_cast<E>(e);
              out.emplace_back(each);
            }
          } else {
            out.push_back(op);
          }
        },
        op);
  }
  return out;
}

}  // namespace burn::remote
