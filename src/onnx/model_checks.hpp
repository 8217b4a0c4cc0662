// What import checks of a model's graph before it reads it: the IR version
// it can read, and the graph's structure where ONNX's own checker
// does not (models newer than Debian's ONNX knows, and the graph that
// inlining local functions leaves). Apart from import.cpp so that the ONNX
// fuzz target (tests/fuzz) runs them without a device.
#pragma once

#include <cstdint>
#include <string>

#include <onnx/onnx_pb.h>

namespace burn::onnx {

/// The newest ONNX IR version import reads. PyTorch 2.x's exporter writes 10
/// (ONNX 1.16 to 1.17); 11 to 13 add element types (2-bit integers, 4-bit
/// floats, 8-bit exponents; 4-bit integers are read), which a tensor of them
/// names in its error, and multi-device placement hints, which a
/// single-device run leaves aside.
inline constexpr std::int64_t kNewestIrVersion = 13;

/// The version of the default operator set the model imports (0 if none).
std::int64_t declared_opset(const ::onnx::ModelProto& model);

/// Whether the ONNX library burn links (Debian's) knows the model's IR
/// version and operator set `opset`, so that its checker can check the model.
bool checker_knows(const ::onnx::ModelProto& model, std::int64_t opset);

/// What the checker checks of the graph's structure: every value is defined
/// once, before the nodes that read it, and every output is defined; and
/// the IR version is one import reads. (Each operator checks its own inputs
/// and attributes when it runs.)
void check_graph_structure(const ::onnx::ModelProto& model, const std::string& source);

}  // namespace burn::onnx
