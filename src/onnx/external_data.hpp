// ONNX external data: tensors whose bytes live in a file beside the model
// (`model.onnx.data`) instead of inside the protobuf, as exporters write
// models over protobuf's 2 GiB limit and as PyTorch 2.x's `torch.onnx.export`
// writes every model. The model names each file relative to its own
// directory, with an offset and a length per tensor.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

namespace burn::onnx {

/// Reads every external tensor of `model` into its raw_data (which then
/// holds the bytes as if the model had been saved in one file). `dir` is the
/// directory of the model file; without one (a model given as bytes) an
/// external tensor is an error. Locations must be relative paths inside
/// `dir` (no absolute path, no `..`), and every range must lie inside its
/// file and match the tensor's size; each failure is a burn::Error(op, ...)
/// naming `source`, the tensor and the file.
void load_external_data(::onnx::ModelProto& model, const std::optional<std::filesystem::path>& dir, std::string_view op,
                        const std::string& source);

/// Moves the bytes of every initializer of at least `threshold` bytes out of
/// `model` into the returned buffer (each at an offset aligned for memory
/// mapping) and marks those initializers as external data in `location`
/// (a file name beside the model).
std::vector<std::byte> move_to_external_data(::onnx::ModelProto& model, const std::string& location,
                                             std::size_t threshold);

}  // namespace burn::onnx
