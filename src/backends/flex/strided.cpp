#include "backends/flex/strided.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "backends/flex/parallel.hpp"

namespace burn::flex {
namespace {

// The driver is compiled twice: for the eager kernels' few operands (small
// fixed arrays keep a tiny op cheap) and for fused groups' many.
constexpr std::size_t kMaxOperands = 4;

// The loop after dropping size-1 dims and merging dims that are dense for
// every operand: fewer, longer runs.
// Inline storage: planning a loop allocates nothing (tiny-op latency).
constexpr std::size_t kInlineDims = 6;
template <std::size_t N>
struct Plan {
  using Strides = std::array<std::int64_t, N>;
  SmallVector<std::size_t, kInlineDims> dims;
  SmallVector<Strides, kInlineDims> strides;  // strides[d][k]: operand k along dim d
};

template <std::size_t N>
Plan<N> plan(const host::Extents& shape, std::span<const Operand> ops) {
  using Strides = typename Plan<N>::Strides;
  Plan<N> p;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    Strides s{};
    for (std::size_t k = 0; k < ops.size(); ++k) s[k] = ops[k].strides[d];
    bool merge = !p.dims.empty();
    for (std::size_t k = 0; merge && k < ops.size(); ++k)
      merge = p.strides.back()[k] == s[k] * static_cast<std::int64_t>(shape[d]);
    if (merge) {
      p.dims.back() *= shape[d];
      p.strides.back() = s;
    } else {
      p.dims.push_back(shape[d]);
      p.strides.push_back(s);
    }
  }
  if (p.dims.empty()) {
    p.dims.push_back(1);
    p.strides.push_back(Strides{});
  }
  return p;
}

// Whether `o` walks `shape` densely in row-major order.
bool is_dense(const Operand& o, const host::Extents& shape) {
  std::int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && o.strides[d] != expected) return false;
    expected *= static_cast<std::int64_t>(shape[d]);
  }
  return true;
}

// Runs the flat element range [begin, end) of the plan.
template <std::size_t N>
int run_range(const Plan<N>& p, std::span<const Operand> ops, RowFn fn, const void* ctx, std::size_t begin,
              std::size_t end, const std::atomic<int>& stop) {
  const std::size_t rank = p.dims.size();
  const std::size_t nops = ops.size();
  const std::size_t inner = p.dims[rank - 1];
  SmallVector<std::size_t, kInlineDims> idx(rank);
  std::size_t rem = begin;
  for (std::size_t d = rank; d-- > 0;) {
    idx[d] = rem % p.dims[d];
    rem /= p.dims[d];
  }
  std::array<std::byte*, N> ptr{};
  std::array<std::int64_t, N> width{};
  for (std::size_t k = 0; k < nops; ++k) {
    width[k] = static_cast<std::int64_t>(ops[k].width);
    std::int64_t off = 0;
    for (std::size_t d = 0; d < rank; ++d) off += static_cast<std::int64_t>(idx[d]) * p.strides[d][k];
    ptr[k] = ops[k].base + off * width[k];
  }
  const auto& s = p.strides[rank - 1];
  std::size_t i = begin;
  while (i < end) {
    const std::size_t n = std::min(inner - idx[rank - 1], end - i);
    if (const int code = fn(ctx, ptr.data(), s.data(), n)) return code;
    i += n;
    if (i >= end || stop.load(std::memory_order_relaxed)) break;
    // The run reached the end of the innermost dim: rewind it, carry outwards.
    for (std::size_t k = 0; k < nops; ++k) ptr[k] -= static_cast<std::int64_t>(idx[rank - 1]) * s[k] * width[k];
    idx[rank - 1] = 0;
    for (std::size_t d = rank - 1; d-- > 0;) {
      for (std::size_t k = 0; k < nops; ++k) ptr[k] += p.strides[d][k] * width[k];
      if (++idx[d] < p.dims[d]) break;
      for (std::size_t k = 0; k < nops; ++k)
        ptr[k] -= static_cast<std::int64_t>(p.dims[d]) * p.strides[d][k] * width[k];
      idx[d] = 0;
    }
  }
  return 0;
}

// Copies by element width: the bytes are moved, never interpreted.
template <std::size_t W>
int copy_row(const void*, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  std::byte* dst = p[0];
  const std::byte* src = p[1];
  if (s[0] == 1 && s[1] == 1) {
    std::memcpy(dst, src, n * W);
  } else {
    const std::int64_t ds = s[0] * static_cast<std::int64_t>(W), ss = s[1] * static_cast<std::int64_t>(W);
    for (std::size_t i = 0; i < n; ++i)
      std::memcpy(dst + static_cast<std::int64_t>(i) * ds, src + static_cast<std::int64_t>(i) * ss, W);
  }
  return 0;
}

}  // namespace

Operand operand(const host::CpuTensor& t) { return {t.base(), dtype_size(t.dtype), t.strides}; }

Operand broadcast_operand(const host::CpuTensor& t, const host::Extents& shape) {
  Operand o = operand(t);
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (t.shape[d] != shape[d]) o.strides[d] = 0;
  return o;
}

namespace {

template <std::size_t N>
int drive(const host::Extents& shape, std::span<const Operand> operands, RowFn fn, const void* ctx, std::size_t grain) {
  std::size_t total = 1;
  for (auto d : shape) total *= d;
  if (total == 0) return 0;
  if (total <= grain &&
      std::all_of(operands.begin(), operands.end(), [&](const Operand& o) { return is_dense(o, shape); })) {
    // The common small case (same-shape contiguous operands, one thread):
    // one run, without planning or the parallel driver.
    std::array<std::byte*, N> ptr{};
    std::array<std::int64_t, N> unit{};
    for (std::size_t k = 0; k < operands.size(); ++k) {
      ptr[k] = operands[k].base;
      unit[k] = 1;
    }
    return fn(ctx, ptr.data(), unit.data(), total);
  }
  const Plan<N> p = plan<N>(shape, operands);
  std::atomic<int> error{0};
  parallel_for(
      total,
      [&](std::size_t begin, std::size_t end) {
        if (const int code = run_range<N>(p, operands, fn, ctx, begin, end, error)) {
          int expected = 0;
          error.compare_exchange_strong(expected, code);
        }
      },
      grain);
  return error.load();
}

}  // namespace

int for_each_run(const host::Extents& shape, std::span<const Operand> operands, RowFn fn, const void* ctx,
                 std::size_t grain) {
  if (operands.size() > kMaxOperands)
    throw Error("flex", "an elementwise loop takes at most 4 operands (a kernel bug, please report it)");
  return drive<kMaxOperands>(shape, operands, fn, ctx, grain);
}

int for_each_run_wide(const host::Extents& shape, std::span<const Operand> operands, RowFn fn, const void* ctx,
                      std::size_t grain) {
  if (operands.size() > kMaxWideOperands)
    throw Error("flex", fmt::format("a fused loop takes at most {} operands, not {} (a fusion planner bug, please "
                                    "report it)",
                                    kMaxWideOperands, operands.size()));
  return drive<kMaxWideOperands>(shape, operands, fn, ctx, grain);
}

void copy_into(const host::CpuTensor& dst, const host::CpuTensor& src) {
  const Operand ops[] = {operand(dst), operand(src)};
  RowFn fn = nullptr;
  switch (dtype_size(dst.dtype)) {
    case 1: fn = copy_row<1>; break;
    case 2: fn = copy_row<2>; break;
    case 4: fn = copy_row<4>; break;
    default: fn = copy_row<8>; break;
  }
  for_each_run(dst.shape, ops, fn, nullptr);
}

host::CpuTensorPtr contiguous_copy(const Context& ctx, const host::CpuTensor& src) {
  auto out = ctx.output({Shape(src.shape), src.dtype});
  copy_into(*out, src);
  return out;
}

host::CpuTensorPtr make_contiguous(const Context& ctx, const host::CpuTensorPtr& t) {
  return t->is_contiguous() ? t : contiguous_copy(ctx, *t);
}

host::CpuTensorPtr Context::output_reusing(const ir::TensorSpec& spec, Inputs in,
                                           std::initializer_list<std::size_t> candidates) const {
  for (std::size_t i : candidates) {
    if (i >= in.size() || !in[i].reusable) continue;
    const auto& t = host::as_cpu(in[i].primitive);
    // use_count 1: no view (reshape, slice, ...) shares the buffer.
    if (t.dtype == spec.dtype && t.shape == spec.shape.dims() && t.offset == 0 && t.is_contiguous() && t.buffer &&
        t.buffer.use_count() == 1 && t.num_elements() != 0)
      return t.view(t.shape, t.strides, 0);
  }
  return output(spec);
}

}  // namespace burn::flex
