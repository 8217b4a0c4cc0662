// Fuzzes the torch.save reader (burn::record::deserialize_pytorch): the zip
// directory and entries (libzip), the restricted unpickler and the strided
// views it builds over the storages. Any input is read or rejected with
// burn::Error; whatever is read has tensors whose bytes match their shapes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include <burn/record/pytorch.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace burn::record;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  PyTorchFile file;
  try {
    file = deserialize_pytorch(bytes);
  } catch (const burn::Error&) {
    return 0;
  }
  for (const auto& [name, tensor] : file.tensors)
    if (tensor.bytes().size() != tensor.shape().num_elements() * burn::dtype_size(tensor.dtype())) std::abort();
  return 0;
}
