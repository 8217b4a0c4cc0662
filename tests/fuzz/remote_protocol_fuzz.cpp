// Fuzzes what burn-server reads from the network: any message is decoded or
// rejected with remote::ProtocolError (never a crash, a hang or a huge
// allocation), a decoded op encodes back to the bytes it came from, and a
// traced program (DefineProgram) is read with its structure checked.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include <burn/error.hpp>

#include "backends/remote/protocol.hpp"

namespace {

using namespace burn::remote;

// Decodes an op and checks that encoding it again gives the same bytes.
void op_round_trip(Reader& r) {
  const std::size_t before = r.remaining();
  const burn::ir::Op op = read_op(r);
  Writer w;
  write_op(w, op);
  if (w.size() != before - r.remaining()) std::abort();
}

void message(std::span<const std::byte> bytes) {
  Reader r(bytes);
  switch (r.kind()) {
    case MessageKind::Batch: {
      const std::size_t n = r.count(1);
      for (std::size_t i = 0; i < n; ++i) {
        const auto kind = static_cast<CommandKind>(r.u8());
        if (kind == CommandKind::DefineProgram) {
          r.u64();
          std::vector<std::optional<burn::ir::TensorSpec>> caller_specs;
          read_program(r, caller_specs);
          continue;
        }
        if (kind == CommandKind::RunProgram) {
          r.u64();
          for (std::size_t k = r.count(8); k > 0; --k) r.u64();
          for (std::size_t k = r.count(8); k > 0; --k) r.u64();
          continue;
        }
        if (kind != CommandKind::Execute) {
          r.u64();
          continue;
        }
        op_round_trip(r);
        for (std::size_t k = r.count(8); k > 0; --k) r.u64();
        for (std::size_t k = r.count(13); k > 0; --k) {
          r.u64();
          read_spec(r);
        }
      }
      break;
    }
    case MessageKind::Welcome: {
      r.u32();
      r.str();
      for (std::size_t k = r.count(16); k > 0; --k) read_device_info(r);
      r.u32();
      break;
    }
    case MessageKind::Upload:
      r.u64();
      read_spec(r);
      r.u64();
      break;
    default: op_round_trip(r);
  }
  r.expect_end();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    message(std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  } catch (const ProtocolError&) {
  } catch (const burn::Error&) {  // a Shape too large to count
  }
  return 0;
}
