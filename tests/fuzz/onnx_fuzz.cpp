// Fuzzes what ONNX import does with a model file before any device sees it
// (burn::onnx::Model::load): the protobuf parse, the opset and structure
// checks, the inlining of model-local functions, reading every initializer
// (4-bit ones unpacked) and the inference form's batch-norm folding. Any
// input is read or rejected with burn::Error; a crash, a sanitizer report,
// a hang or a memory blow-up (fuzz.sh's limits) is a finding. ONNX's own
// checker (Debian's library), which import runs on models it knows, is
// left out: these targets fuzz burn's code.
#include <climits>
#include <cstddef>
#include <cstdint>

#include <burn/error.hpp>
#include <onnx/onnx_pb.h>

#include "onnx/import_functions.hpp"
#include "onnx/import_optimize.hpp"
#include "onnx/model_checks.hpp"
#include "onnx/proto.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ::onnx::ModelProto model;
  if (size > INT_MAX || !model.ParseFromArray(data, static_cast<int>(size)) || !model.has_graph()) return 0;
  try {
    // The default domain's opset, as import reads it (its range check aside).
    std::int64_t opset = 0;
    for (const auto& o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    burn::onnx::check_graph_structure(model, "fuzz");
    if (burn::onnx::inline_local_functions(model, opset, "fuzz") > 0) burn::onnx::check_graph_structure(model, "fuzz");
    for (const auto& init : model.graph().initializer()) (void)burn::onnx::read_tensor(init, "fuzz");
    (void)burn::onnx::fold_batch_norms(model);
  } catch (const burn::Error&) {
  }
  return 0;
}
