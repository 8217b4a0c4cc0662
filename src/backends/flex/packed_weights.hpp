// Weights kept in the layout a oneDNN primitive reads them in. A
// convolution's weights arrive row-major ([OC, IC, kH, kW]) and its fast
// kernels read a blocked layout (Acdb32a, ...), so every call reordered all
// of them: for ResNet-18 at batch 1 that reorder was a quarter of the
// forward time (6.6 of 27 ms). Inference calls the same weights again and
// again, so the reordered copy is kept and reused while the weights live.
// burn's own kernels keep their transformed weights the same way (the
// Winograd kernel's 36 matrices per convolution: transformed_weights), and
// a large matmul keeps its right operand packed (matmul.cpp).
//
// Tensors are values, so a buffer's bytes change only when a kernel takes
// over the storage of an input nobody else holds (Context::output_reusing:
// buffer use_count 1). An entry holds its source buffer, which makes that
// impossible for as long as the entry exists: a cached copy never goes
// stale. Entries are made on a buffer's second use in the same layout
// (weights that change every step, as in training, are reordered as before
// and never pinned), dropped once the cache holds the last reference to
// their source, and evicted least recently used beyond a byte limit.
#pragma once

#include <dnnl.hpp>
#include <functional>

#include "backends/flex/kernels.hpp"

namespace burn::flex::dnn {

/// The weights `t` (viewed through `plain`) reordered into `packed`: a
/// cached copy, one made now on the second sighting, or nullptr (the caller
/// then reorders into scratch as for any other argument).
host::CpuTensorPtr packed_weights(const Context& ctx, const host::CpuTensor& t, const dnnl::memory::desc& plain,
                                  const dnnl::memory::desc& packed);

/// The weights `t` (viewed through `plain`) after a transform of burn's own
/// (Winograd's, ...) identified by `form` (non-zero): `transform(t, out)`
/// writes `bytes` bytes. Cached like packed_weights; uncached, made now.
host::CpuTensorPtr transformed_weights(const Context& ctx, const host::CpuTensor& t, const dnnl::memory::desc& plain,
                                       std::uint32_t form, std::size_t bytes,
                                       const std::function<void(const host::CpuTensor&, std::byte*)>& transform);

/// Bytes held by cached copies now (for tests and reports).
std::size_t packed_weights_bytes();

/// Drops every cached copy.
void clear_packed_weights();

}  // namespace burn::flex::dnn
