// detail::mark_composite: composite operations tell a recording device what
// they are. Only the capture device keeps the mark (graph.hpp); on any
// other device the call returns at the first test.
#include <burn/config.hpp>
#include <burn/detail/ops.hpp>

#if BURN_HAS_CAPTURE
#include "backends/capture/graph.hpp"
#endif

namespace burn::detail {

void mark_composite(const TensorRef& out, Composite kind, std::initializer_list<TensorRef> inputs, std::int64_t dim,
                    double epsilon) {
  if (!out || out->device.type() != DeviceType::Capture) return;
#if BURN_HAS_CAPTURE
  auto mark = std::make_shared<capture::CompositeMark>();
  mark->kind = kind;
  mark->dim = dim;
  mark->epsilon = epsilon;
  for (const auto& in : inputs) mark->inputs.push_back(capture::captured_value(in->primitive, "mark_composite"));
  capture::captured_value(out->primitive, "mark_composite")->mark(std::move(mark));
#else
  (void)kind;
  (void)inputs;
  (void)dim;
  (void)epsilon;
#endif
}

}  // namespace burn::detail
