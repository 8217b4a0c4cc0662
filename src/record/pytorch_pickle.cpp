// A pickle virtual machine that knows only what torch.save writes for a
// state dict. Python's pickle calls whatever callable the stream names, which
// is how a .pt file can run code; this one resolves names against a fixed
// list and interprets them itself, so a file can at most describe tensors.
#include "pytorch_pickle.hpp"

#include <array>
#include <bit>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include <burn/error.hpp>

namespace burn::record::detail {

namespace {

/// What a torch state-dict pickle can name (GLOBAL / STACK_GLOBAL).
enum class Callable { OrderedDict, RebuildTensor, RebuildParameter, Storage };

struct TorchStorageType {
  std::string_view name;
  DType dtype;
};
constexpr std::array<TorchStorageType, 10> kStorageTypes{{
    {"DoubleStorage", DType::F64},
    {"FloatStorage", DType::F32},
    {"HalfStorage", DType::F16},
    {"BFloat16Storage", DType::BF16},
    {"LongStorage", DType::I64},
    {"IntStorage", DType::I32},
    {"ShortStorage", DType::I16},
    {"CharStorage", DType::I8},
    {"ByteStorage", DType::U8},
    {"BoolStorage", DType::Bool},
}};

struct Value;
using ValuePtr = std::shared_ptr<Value>;

// One pickle value. Containers are shared (the memo and the stack point at
// the same dict, which SETITEMS then fills), hence shared_ptr.
struct Value {
  enum class Kind { None, Bool, Int, Float, String, Bytes, Tuple, List, Dict, Global, Storage, Tensor };
  Kind kind = Kind::None;
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;  // String, Bytes; the storage key for Storage
  std::vector<ValuePtr> items;
  std::vector<std::pair<ValuePtr, ValuePtr>> entries;
  Callable callable = Callable::OrderedDict;
  DType dtype = DType::F32;  // Global (a storage type), Storage
  std::uint64_t numel = 0;   // Storage
  TorchTensorView tensor;    // Tensor
};

std::string_view kind_name(Value::Kind k) {
  constexpr std::array<std::string_view, 12> names{"None",  "bool", "int",  "float",   "str",     "bytes",
                                                   "tuple", "list", "dict", "a class", "storage", "tensor"};
  return names[static_cast<std::size_t>(k)];
}

class Unpickler {
 public:
  Unpickler(std::span<const std::byte> bytes, std::string_view op, std::string_view prefix)
      : bytes_(bytes), op_(op), prefix_(prefix) {}
  // A pickle can make containers hold themselves (through the memo); empty
  // every container so such cycles of shared_ptrs are freed too.
  ~Unpickler() {
    for (auto& v : made_) {
      v->items.clear();
      v->entries.clear();
    }
  }
  Unpickler(const Unpickler&) = delete;
  Unpickler& operator=(const Unpickler&) = delete;

  ValuePtr run() {
    while (true) {
      const std::size_t at = pos_;
      const auto code = static_cast<unsigned char>(take(1)[0]);
      if (code == '.') break;  // STOP
      step(code, at);
    }
    if (stack_.size() != 1 || !marks_.empty())
      throw fail(fmt::format("the pickle stops with {} values on its stack instead of one", stack_.size()));
    return stack_.back();
  }

 private:
  Error fail(const std::string& what) const {
    return Error(op_, fmt::format("{}data.pkl: {}; the file is not a state dict saved by torch.save, or it is "
                                  "corrupt",
                                  prefix_, what));
  }

  ValuePtr make(Value::Kind kind) {
    auto v = std::make_shared<Value>();
    v->kind = kind;
    made_.push_back(v);
    return v;
  }

  std::span<const std::byte> take(std::uint64_t n) {
    if (n > bytes_.size() - pos_)
      throw fail(
          fmt::format("the pickle ends at byte {} inside an instruction that needs {} more bytes", bytes_.size(), n));
    auto out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  template <class T>
  T little() {
    std::uint64_t u = 0;
    const auto b = take(sizeof(T));
    for (std::size_t i = 0; i < sizeof(T); ++i) u |= std::uint64_t(static_cast<unsigned char>(b[i])) << (8 * i);
    return static_cast<T>(u);
  }
  std::string text(std::uint64_t n) {
    const auto b = take(n);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  std::string line() {
    std::string out;
    while (true) {
      const char c = static_cast<char>(take(1)[0]);
      if (c == '\n') return out;
      out += c;
      if (out.size() > 256) throw fail("a GLOBAL name longer than 256 bytes");
    }
  }

  ValuePtr pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
      throw fail(fmt::format("an instruction at byte {} pops an empty stack", pos_));
    auto v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  ValuePtr& top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
      throw fail(fmt::format("an instruction at byte {} reads an empty stack", pos_));
    return stack_.back();
  }
  std::vector<ValuePtr> pop_mark() {
    if (marks_.empty()) throw fail(fmt::format("an instruction at byte {} needs a MARK that is not there", pos_));
    const std::size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<ValuePtr> out(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return out;
  }
  void push(ValuePtr v) { stack_.push_back(std::move(v)); }
  void push_int(std::int64_t i) {
    auto v = make(Value::Kind::Int);
    v->integer = i;
    push(std::move(v));
  }
  void push_text(Value::Kind kind, std::string s) {
    auto v = make(kind);
    v->text = std::move(s);
    push(std::move(v));
  }
  void push_tuple(std::vector<ValuePtr> items) {
    auto v = make(Value::Kind::Tuple);
    v->items = std::move(items);
    push(std::move(v));
  }
  void memo_put(std::uint64_t index) { memo_[index] = top(); }
  void memo_get(std::uint64_t index) {
    const auto it = memo_.find(index);
    if (it == memo_.end()) throw fail(fmt::format("memo entry {} is read before it is written", index));
    push(it->second);
  }
  Value& expect(const ValuePtr& v, Value::Kind kind, std::string_view what) {
    if (v->kind != kind) throw fail(fmt::format("{} is {}, expected {}", what, kind_name(v->kind), kind_name(kind)));
    return *v;
  }

  void global(std::string module, std::string name) {
    auto v = make(Value::Kind::Global);
    if (module == "collections" && name == "OrderedDict") {
      v->callable = Callable::OrderedDict;
    } else if (module == "torch._utils" && name == "_rebuild_tensor_v2") {
      v->callable = Callable::RebuildTensor;
    } else if (module == "torch._utils" && name == "_rebuild_parameter") {
      v->callable = Callable::RebuildParameter;
    } else {
      bool found = false;
      for (const auto& s : kStorageTypes)
        if (module == "torch" && name == s.name) {
          v->callable = Callable::Storage;
          v->dtype = s.dtype;
          found = true;
        }
      if (!found)
        throw Error(op_, fmt::format("{}data.pkl names '{}.{}', which a state dict never holds: only tensors, "
                                     "storages and dicts of them are loaded, and a pickle naming anything else "
                                     "could run code. Save the weights with torch.save(model.state_dict(), path) "
                                     "(not the model object)",
                                     prefix_, module, name));
    }
    push(std::move(v));
  }

  std::uint64_t non_negative(const ValuePtr& v, std::string_view what) {
    const auto i = expect(v, Value::Kind::Int, what).integer;
    if (i < 0) throw fail(fmt::format("{} is negative ({})", what, i));
    return static_cast<std::uint64_t>(i);
  }
  std::vector<std::uint64_t> dims(const ValuePtr& v, std::string_view what) {
    const auto& t = expect(v, Value::Kind::Tuple, what);
    std::vector<std::uint64_t> out;
    for (const auto& d : t.items) out.push_back(non_negative(d, what));
    return out;
  }

  // REDUCE: callable(*args), for the few callables a state dict uses.
  void reduce() {
    const auto args = pop();
    const auto f = pop();
    const auto& a = expect(args, Value::Kind::Tuple, "the arguments of REDUCE").items;
    if (f->kind != Value::Kind::Global) throw fail(fmt::format("REDUCE calls {}, not a class", kind_name(f->kind)));
    switch (f->callable) {
      case Callable::OrderedDict: {
        if (!a.empty()) throw fail("OrderedDict is called with arguments");
        push(make(Value::Kind::Dict));
        return;
      }
      case Callable::RebuildTensor: {
        // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
        if (a.size() < 4) throw fail("_rebuild_tensor_v2 is called with fewer than 4 arguments");
        const auto& storage = expect(a[0], Value::Kind::Storage, "a tensor's storage");
        auto v = make(Value::Kind::Tensor);
        v->tensor.storage_key = storage.text;
        v->tensor.dtype = storage.dtype;
        v->tensor.storage_numel = storage.numel;
        v->tensor.offset = non_negative(a[1], "a tensor's storage offset");
        v->tensor.sizes = dims(a[2], "a tensor's size");
        v->tensor.strides = dims(a[3], "a tensor's stride");
        if (v->tensor.sizes.size() != v->tensor.strides.size())
          throw fail(
              fmt::format("a tensor has {} sizes but {} strides", v->tensor.sizes.size(), v->tensor.strides.size()));
        push(std::move(v));
        return;
      }
      case Callable::RebuildParameter: {
        // (data, requires_grad, backward_hooks): the parameter's tensor.
        if (a.empty()) throw fail("_rebuild_parameter is called without arguments");
        expect(a[0], Value::Kind::Tensor, "a parameter's data");
        push(a[0]);
        return;
      }
      case Callable::Storage: throw fail("a storage type is called directly; storages come only as persistent ids");
    }
  }

  // BINPERSID: ('storage', storage type, key, location, numel).
  void persistent_id() {
    const auto& pid = expect(pop(), Value::Kind::Tuple, "a persistent id").items;
    if (pid.size() != 5 || pid[0]->kind != Value::Kind::String || pid[0]->text != "storage")
      throw fail("a persistent id is not a ('storage', type, key, location, size) tuple");
    const auto& type = expect(pid[1], Value::Kind::Global, "a storage's type");
    if (type.callable != Callable::Storage) throw fail("a storage's type is not a torch storage class");
    auto v = make(Value::Kind::Storage);
    v->dtype = type.dtype;
    v->text = expect(pid[2], Value::Kind::String, "a storage's key").text;
    v->numel = non_negative(pid[4], "a storage's size");
    push(std::move(v));
  }

  void step(unsigned char code, std::size_t at) {
    switch (code) {
      case 0x80: {  // PROTO
        const auto version = static_cast<unsigned>(take(1)[0]);
        if (version < 2 || version > 5)
          throw fail(fmt::format("pickle protocol {} (torch.save writes 2; 2 to 5 are read)", version));
        return;
      }
      case 0x95: take(8); return;                         // FRAME: a length hint
      case '}': push(make(Value::Kind::Dict)); return;    // EMPTY_DICT
      case ']': push(make(Value::Kind::List)); return;    // EMPTY_LIST
      case ')': push(make(Value::Kind::Tuple)); return;   // EMPTY_TUPLE
      case '(': marks_.push_back(stack_.size()); return;  // MARK
      case 't': push_tuple(pop_mark()); return;           // TUPLE
      case 0x85: push_tuple({pop()}); return;             // TUPLE1
      case 0x86: {                                        // TUPLE2
        auto b = pop();
        auto a = pop();
        push_tuple({std::move(a), std::move(b)});
        return;
      }
      case 0x87: {  // TUPLE3
        auto c = pop();
        auto b = pop();
        auto a = pop();
        push_tuple({std::move(a), std::move(b), std::move(c)});
        return;
      }
      case 'l': {  // LIST
        auto v = make(Value::Kind::List);
        v->items = pop_mark();
        push(std::move(v));
        return;
      }
      case 'd': {  // DICT
        const auto kv = pop_mark();
        if (kv.size() % 2) throw fail("DICT with an odd number of items");
        auto v = make(Value::Kind::Dict);
        for (std::size_t i = 0; i < kv.size(); i += 2) v->entries.emplace_back(kv[i], kv[i + 1]);
        push(std::move(v));
        return;
      }
      case 'a': {  // APPEND
        auto item = pop();
        expect(top(), Value::Kind::List, "the target of APPEND").items.push_back(std::move(item));
        return;
      }
      case 'e': {  // APPENDS
        auto items = pop_mark();
        auto& list = expect(top(), Value::Kind::List, "the target of APPENDS").items;
        list.insert(list.end(), items.begin(), items.end());
        return;
      }
      case 's': {  // SETITEM
        auto value = pop();
        auto key = pop();
        expect(top(), Value::Kind::Dict, "the target of SETITEM").entries.emplace_back(key, value);
        return;
      }
      case 'u': {  // SETITEMS
        const auto kv = pop_mark();
        if (kv.size() % 2) throw fail("SETITEMS with an odd number of items");
        auto& dict = expect(top(), Value::Kind::Dict, "the target of SETITEMS");
        for (std::size_t i = 0; i < kv.size(); i += 2) dict.entries.emplace_back(kv[i], kv[i + 1]);
        return;
      }
      case 'N': push(make(Value::Kind::None)); return;  // NONE
      case 0x88:                                        // NEWTRUE
      case 0x89: {                                      // NEWFALSE
        auto v = make(Value::Kind::Bool);
        v->boolean = code == 0x88;
        push(std::move(v));
        return;
      }
      case 'K': push_int(static_cast<unsigned char>(take(1)[0])); return;  // BININT1
      case 'M': push_int(little<std::uint16_t>()); return;                 // BININT2
      case 'J': push_int(little<std::int32_t>()); return;                  // BININT
      case 0x8a: {                                                         // LONG1
        const auto n = static_cast<unsigned>(take(1)[0]);
        if (n > 8) throw fail(fmt::format("an integer of {} bytes (at most 8 are read)", n));
        const auto b = take(n);
        std::uint64_t u = 0;
        for (unsigned i = 0; i < n; ++i) u |= std::uint64_t(static_cast<unsigned char>(b[i])) << (8 * i);
        if (n > 0 && n < 8 && (static_cast<unsigned char>(b[n - 1]) & 0x80)) u |= ~std::uint64_t(0) << (8 * n);
        push_int(static_cast<std::int64_t>(u));
        return;
      }
      case 'G': {  // BINFLOAT: big-endian double
        std::uint64_t u = 0;
        for (const auto b : take(8)) u = (u << 8) | static_cast<unsigned char>(b);
        auto v = make(Value::Kind::Float);
        v->real = std::bit_cast<double>(u);
        push(std::move(v));
        return;
      }
      case 'X': push_text(Value::Kind::String, text(little<std::uint32_t>())); return;  // BINUNICODE
      case 0x8c: push_text(Value::Kind::String, text(static_cast<unsigned char>(take(1)[0]))); return;
      case 0x8d: push_text(Value::Kind::String, text(little<std::uint64_t>())); return;  // BINUNICODE8
      case 'B': push_text(Value::Kind::Bytes, text(little<std::uint32_t>())); return;    // BINBYTES
      case 'C': push_text(Value::Kind::Bytes, text(static_cast<unsigned char>(take(1)[0]))); return;
      case 'q': memo_put(static_cast<unsigned char>(take(1)[0])); return;  // BINPUT
      case 'r': memo_put(little<std::uint32_t>()); return;                 // LONG_BINPUT
      case 0x94: memo_put(memo_.size()); return;                           // MEMOIZE
      case 'h': memo_get(static_cast<unsigned char>(take(1)[0])); return;  // BINGET
      case 'j': memo_get(little<std::uint32_t>()); return;                 // LONG_BINGET
      case 'c': {                                                          // GLOBAL
        auto module = line();
        auto name = line();
        global(std::move(module), std::move(name));
        return;
      }
      case 0x93: {  // STACK_GLOBAL
        auto name = expect(pop(), Value::Kind::String, "a STACK_GLOBAL name").text;
        auto module = expect(pop(), Value::Kind::String, "a STACK_GLOBAL module").text;
        global(std::move(module), std::move(name));
        return;
      }
      case 'R': reduce(); return;         // REDUCE
      case 'Q': persistent_id(); return;  // BINPERSID
      case 'b': {                         // BUILD: an object's __setstate__
        pop();  // OrderedDict's instance dict (_metadata) or a tensor's attributes: not weights
        const auto kind = top()->kind;
        if (kind != Value::Kind::Dict && kind != Value::Kind::Tensor)
          throw fail(fmt::format("BUILD on {} (only dicts and tensors carry state in a state dict)", kind_name(kind)));
        return;
      }
      default: throw fail(fmt::format("pickle instruction 0x{:02x} at byte {} is not one a state dict uses", code, at));
    }
  }

  std::span<const std::byte> bytes_;
  std::string_view op_, prefix_;
  std::size_t pos_ = 0;
  std::vector<ValuePtr> stack_;
  std::vector<std::size_t> marks_;
  std::map<std::uint64_t, ValuePtr> memo_;
  std::vector<ValuePtr> made_;  // every value, for the destructor
};

void collect(const Value& dict, const std::string& path, std::size_t depth, std::set<const Value*>& seen,
             std::vector<std::pair<std::string, TorchTensorView>>& out, std::string_view op, std::string_view prefix) {
  if (depth > kMaxTorchDictDepth)
    throw Error(op, fmt::format("{}data.pkl nests dicts deeper than {} levels", prefix, kMaxTorchDictDepth));
  // A state dict is a tree; a dict reached twice (a cycle, or one dict under
  // many keys) would make the paths grow without bound.
  if (!seen.insert(&dict).second)
    throw Error(op, fmt::format("{}data.pkl reaches the dict at '{}' a second time; a state dict holds each dict "
                                "once",
                                prefix, path));
  for (const auto& [key, value] : dict.entries) {
    std::string name;
    if (key->kind == Value::Kind::String) name = key->text;
    else if (key->kind == Value::Kind::Int) name = std::to_string(key->integer);
    else continue;  // not a path a module could have
    const std::string full = path.empty() ? name : fmt::format("{}.{}", path, name);
    if (value->kind == Value::Kind::Tensor) out.emplace_back(full, value->tensor);
    else if (value->kind == Value::Kind::Dict) collect(*value, full, depth + 1, seen, out, op, prefix);
  }
}

}  // namespace

std::vector<std::pair<std::string, TorchTensorView>> read_torch_pickle(std::span<const std::byte> bytes,
                                                                       std::string_view op, std::string_view prefix) {
  Unpickler unpickler(bytes, op, prefix);
  const ValuePtr root = unpickler.run();
  if (root->kind != Value::Kind::Dict)
    throw Error(op, fmt::format("{}data.pkl holds {}, not a dict of tensors; save the weights with "
                                "torch.save(model.state_dict(), path)",
                                prefix, kind_name(root->kind)));
  std::vector<std::pair<std::string, TorchTensorView>> out;
  std::set<const Value*> seen;
  collect(*root, "", 1, seen, out, op, prefix);
  return out;
}

}  // namespace burn::record::detail
