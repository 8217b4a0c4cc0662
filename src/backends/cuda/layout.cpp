// Layout ops on the CUDA device: each is one strided copy per input (the
// same kernel with other strides), so the family needs one kernel per
// element size and rank. Reshape of a row-major tensor changes nothing in
// memory: the backend shares the block (backend.cpp); planned here as a
// copy for completeness.
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/launch.hpp"

namespace burn::cuda {

std::vector<std::int64_t> row_major_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.rank(), 1);
  std::int64_t step = 1;
  for (std::size_t d = shape.rank(); d-- > 0;) {
    strides[d] = step;
    step *= static_cast<std::int64_t>(shape[d]);
  }
  return strides;
}

const char* raw_type(std::size_t bytes) {
  switch (bytes) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    default: return "unsigned long long";
  }
}

Launch strided_copy(std::size_t element_bytes, const Shape& shape, std::uint64_t dst, std::int64_t dst_offset,
                    std::span<const std::int64_t> dst_strides, std::uint64_t src, std::int64_t src_offset,
                    std::span<const std::int64_t> src_strides) {
  // A rank-0 copy is a rank-1 copy of one element.
  const std::size_t rank = std::max<std::size_t>(1, shape.rank());
  const char* type = raw_type(element_bytes);
  Launch launch;
  launch.source = grid_stride_kernel("strided copy", "",
                                     fmt::format("  unsigned long long shape[{0}];\n"
                                                 "  long long dst_stride[{0}];\n"
                                                 "  long long src_stride[{0}];\n"
                                                 "  unsigned long long dst;\n"
                                                 "  unsigned long long src;\n",
                                                 rank),
                                     fmt::format("    long long d = 0, s = 0;\n"
                                                 "    unsigned long long rest = i;\n"
                                                 "#pragma unroll\n"
                                                 "    for (int k = {1} - 1; k >= 0; --k) {{\n"
                                                 "      const long long c = (long long)(rest % p.shape[k]);\n"
                                                 "      rest /= p.shape[k];\n"
                                                 "      d += c * p.dst_stride[k];\n"
                                                 "      s += c * p.src_stride[k];\n"
                                                 "    }}\n"
                                                 "    (({0}*)p.dst)[d] = ((const {0}*)p.src)[s];\n",
                                                 type, rank));
  auto& w = launch.params;
  w.push_back(shape.num_elements());
  for (std::size_t d = 0; d < rank; ++d) w.push_back(shape.rank() == 0 ? 1 : shape[d]);
  for (std::size_t d = 0; d < rank; ++d)
    w.push_back(static_cast<std::uint64_t>(shape.rank() == 0 ? 0 : dst_strides[d]));
  for (std::size_t d = 0; d < rank; ++d)
    w.push_back(static_cast<std::uint64_t>(shape.rank() == 0 ? 0 : src_strides[d]));
  w.push_back(dst + static_cast<std::uint64_t>(dst_offset * static_cast<std::int64_t>(element_bytes)));
  w.push_back(src + static_cast<std::uint64_t>(src_offset * static_cast<std::int64_t>(element_bytes)));
  return launch;
}

namespace {

/// A copy of `in` read through a view (offset, strides per output dim) into
/// the contiguous `out`.
Launch view_copy(const Operand& in, const Operand& out, std::int64_t offset, std::span<const std::int64_t> strides) {
  const auto dst = row_major_strides(out.spec.shape);
  return strided_copy(dtype_size(out.spec.dtype), out.spec.shape, out.address, 0, dst, in.address, offset, strides);
}

std::vector<Launch> nonempty(Launch launch) {
  if (launch.items() == 0) return {};
  return {std::move(launch)};
}

}  // namespace

std::vector<Launch> plan_layout(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs) {
  const Operand& out = outputs[0];
  const Operand& in = inputs[0];
  const std::size_t bytes = dtype_size(out.spec.dtype);
  const Shape& in_shape = in.spec.shape;
  const auto in_strides = row_major_strides(in_shape);
  if (std::holds_alternative<ir::Reshape>(op)) {
    const Shape flat{out.spec.shape.num_elements()};
    const std::vector<std::int64_t> one{1};
    return nonempty(strided_copy(bytes, flat, out.address, 0, one, in.address, 0, one));
  }
  if (const auto* p = std::get_if<ir::Permute>(&op)) {
    std::vector<std::int64_t> strides;
    for (std::size_t axis : p->axes) strides.push_back(in_strides[axis]);
    return nonempty(view_copy(in, out, 0, strides));
  }
  if (std::holds_alternative<ir::Expand>(op)) {
    std::vector<std::int64_t> strides(in_strides);
    for (std::size_t d = 0; d < strides.size(); ++d)
      if (in_shape[d] == 1 && out.spec.shape[d] != 1) strides[d] = 0;
    return nonempty(view_copy(in, out, 0, strides));
  }
  if (const auto* f = std::get_if<ir::Flip>(&op)) {
    std::vector<std::int64_t> strides(in_strides);
    std::int64_t offset = 0;
    for (std::size_t axis : f->axes) {
      if (in_shape[axis] == 0) continue;
      offset += static_cast<std::int64_t>(in_shape[axis] - 1) * in_strides[axis];
      strides[axis] = -in_strides[axis];
    }
    return nonempty(view_copy(in, out, offset, strides));
  }
  if (const auto* s = std::get_if<ir::Slice>(&op)) {
    std::vector<std::int64_t> strides(in_strides);
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < s->ranges.size(); ++d) {
      offset += static_cast<std::int64_t>(s->ranges[d].start) * in_strides[d];
      strides[d] = s->ranges[d].step * in_strides[d];
    }
    return nonempty(view_copy(in, out, offset, strides));
  }
  if (const auto* u = std::get_if<ir::Unfold>(&op)) {
    std::vector<std::int64_t> strides(in_strides);
    strides[u->dim] = static_cast<std::int64_t>(u->step) * in_strides[u->dim];
    strides.push_back(in_strides[u->dim]);
    return nonempty(view_copy(in, out, 0, strides));
  }
  const auto out_strides = row_major_strides(out.spec.shape);
  if (const auto* c = std::get_if<ir::Cat>(&op)) {
    std::vector<Launch> launches;
    std::int64_t offset = 0;
    for (const Operand& part : inputs) {
      Launch l = strided_copy(bytes, part.spec.shape, out.address, offset, out_strides, part.address, 0,
                              row_major_strides(part.spec.shape));
      offset += static_cast<std::int64_t>(part.spec.shape[c->dim]) * out_strides[c->dim];
      if (l.items() != 0) launches.push_back(std::move(l));
    }
    return launches;
  }
  if (const auto* s = std::get_if<ir::SliceAssign>(&op)) {
    // The tensor, then the values over the slice's part of it.
    std::vector<Launch> launches = nonempty(view_copy(in, out, 0, in_strides));
    const Operand& values = inputs[1];
    std::vector<std::int64_t> strides(out_strides);
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < s->ranges.size(); ++d) {
      offset += static_cast<std::int64_t>(s->ranges[d].start) * out_strides[d];
      strides[d] = s->ranges[d].step * out_strides[d];
    }
    Launch l = strided_copy(bytes, values.spec.shape, out.address, offset, strides, values.address, 0,
                            row_major_strides(values.spec.shape));
    if (l.items() != 0) launches.push_back(std::move(l));
    return launches;
  }
  throw Error(ir::op_name(op), "not a layout op (an internal error of the cuda backend)");
}

}  // namespace burn::cuda
