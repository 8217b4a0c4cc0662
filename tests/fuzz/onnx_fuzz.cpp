// Fuzzes what ONNX import does with a model file before any device sees it
// (burn::onnx::Model::load), in its order: the protobuf parse, ONNX's checker
// (Debian's library) on models it knows and burn's structure check on the
// others, the inlining of model-local functions, reading every initializer
// (4-bit ones unpacked) and the inference form's batch-norm folding. Any
// input is read or rejected with burn::Error (std::exception from ONNX's
// checker); a crash, a sanitizer report, a hang or a memory blow-up
// (fuzz.sh's limits) is a finding.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <exception>

#include <burn/error.hpp>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "onnx/import_functions.hpp"
#include "onnx/import_optimize.hpp"
#include "onnx/model_checks.hpp"
#include "onnx/proto.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ::onnx::ModelProto model;
  if (size > INT_MAX || !model.ParseFromArray(data, static_cast<int>(size)) || !model.has_graph()) return 0;
  // The default domain's opset as import reads it (its range check aside),
  // and ONNX's checker where it knows the model, as import runs it.
  const std::int64_t opset = burn::onnx::declared_opset(model);
  try {
    if (burn::onnx::checker_knows(model, opset)) {
      try {
        ::onnx::checker::check_model(model);
      } catch (const std::exception&) {
        return 0;  // import turns this into a burn::Error
      }
    } else {
      burn::onnx::check_graph_structure(model, "fuzz");
    }
    if (burn::onnx::inline_local_functions(model, opset, "fuzz") > 0) burn::onnx::check_graph_structure(model, "fuzz");
    for (const auto& init : model.graph().initializer()) (void)burn::onnx::read_tensor(init, "fuzz");
    (void)burn::onnx::fold_batch_norms(model);
  } catch (const burn::Error&) {
  }
  return 0;
}
