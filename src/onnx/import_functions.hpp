// Model-local functions (ModelProto.functions): what PyTorch's
// `export_modules_as_functions` and onnxscript write, expanded into the main
// graph before import reads it.
#pragma once

#include <cstdint>
#include <string>

#include <onnx/onnx_pb.h>

namespace burn::onnx {

/// Replaces every node of the main graph that calls one of the model's
/// local functions by the function's body (recursively, for functions that
/// call functions), and drops the functions. Each inlined node is named
/// "<call node>/<body node>" and each value inside a body
/// "<call node>/<value>", so errors and profiles still say where a node came
/// from. Attributes a body refers to (`ref_attr_name`) take the call's value,
/// else the function's default, else are left out, as ONNX defines. A
/// function that calls itself, two functions of one name, a body whose
/// operators differ at its own opset from the model's, and an expansion of
/// more than 2^20 nodes (counted before any is made) are errors.
/// Returns how many calls it expanded.
std::size_t inline_local_functions(::onnx::ModelProto& model, std::int64_t model_opset, const std::string& source);

}  // namespace burn::onnx
