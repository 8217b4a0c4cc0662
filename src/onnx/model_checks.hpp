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

/// What the checker checks of the graph's structure: every value is defined
/// once, before the nodes that read it, and every output is defined; and
/// the IR version is one import reads. (Each operator checks its own inputs
/// and attributes when it runs.)
void check_graph_structure(const ::onnx::ModelProto& model, const std::string& source);

}  // namespace burn::onnx
