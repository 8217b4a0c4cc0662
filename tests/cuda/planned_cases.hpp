// The ops the CUDA backend's tests plan: every op the backend has kernels
// for, on each dtype it applies to, with inputs that reach both the values
// and the error paths. emulation_test.cpp runs them on the CPU against flex;
// codegen_test.cpp compiles their kernels with NVRTC.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <burn/burn.hpp>
#include <burn/ir/op.hpp>

namespace burn::cuda::testing {

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> d{DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I16,
                                    DType::I8,  DType::U64, DType::U32, DType::U16,  DType::U8,  DType::Bool};
  return d;
}

// ---- inputs -------------------------------------------------------------------

template <class T>
inline void append(std::vector<std::byte>& out, T v) {
  const auto* b = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), b, b + sizeof(T));
}

template <class T>
inline void append_int(std::vector<std::byte>& out, std::mt19937_64& rng, bool tame) {
  if (tame) {
    append<T>(out, static_cast<T>(1 + rng() % 6));
    return;
  }
  const std::uint64_t pick = rng() % 16;
  if (pick == 0) append<T>(out, std::numeric_limits<T>::min());
  else if (pick == 1) append<T>(out, std::numeric_limits<T>::max());
  else if (std::is_signed_v<T>) append<T>(out, static_cast<T>(static_cast<int>(rng() % 19) - 9));
  else append<T>(out, static_cast<T>(rng() % 13));
}

inline double float_value(std::mt19937_64& rng, bool tame) {
  if (tame) return 0.125 + static_cast<double>(rng() % 64) / 16.0;
  static const double special[] = {0.0,
                                   -0.0,
                                   1.0,
                                   -1.0,
                                   0.5,
                                   2.5,
                                   -3.5,
                                   100.0,
                                   std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity()};
  const std::uint64_t pick = rng() % 24;
  if (pick < std::size(special)) return special[pick];
  return std::uniform_real_distribution<double>(-4.0, 4.0)(rng);
}

inline TensorData make_data(const Shape& shape, DType dtype, std::uint64_t seed, bool tame) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> bytes;
  for (std::size_t i = 0; i < shape.num_elements(); ++i) {
    switch (dtype) {
      case DType::F64: append<double>(bytes, float_value(rng, tame)); break;
      case DType::F32: append<float>(bytes, static_cast<float>(float_value(rng, tame))); break;
      case DType::F16: append<f16>(bytes, f16(static_cast<float>(float_value(rng, tame)))); break;
      case DType::BF16: append<bf16>(bytes, bf16(static_cast<float>(float_value(rng, tame)))); break;
      case DType::I64: append_int<std::int64_t>(bytes, rng, tame); break;
      case DType::I32: append_int<std::int32_t>(bytes, rng, tame); break;
      case DType::I16: append_int<std::int16_t>(bytes, rng, tame); break;
      case DType::I8: append_int<std::int8_t>(bytes, rng, tame); break;
      case DType::U64: append_int<std::uint64_t>(bytes, rng, tame); break;
      case DType::U32: append_int<std::uint32_t>(bytes, rng, tame); break;
      case DType::U16: append_int<std::uint16_t>(bytes, rng, tame); break;
      case DType::U8: append_int<std::uint8_t>(bytes, rng, tame); break;
      case DType::Bool: append<std::uint8_t>(bytes, static_cast<std::uint8_t>(rng() % 2)); break;
    }
  }
  return TensorData(std::move(bytes), shape, dtype);
}

/// Indices in [0, bound) of `dtype`; with `bad`, one of them is -1.
inline TensorData make_indices(Shape shape, DType dtype, std::int64_t bound, std::uint64_t seed, bool bad) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> values(shape.num_elements());
  for (auto& v : values) v = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(bound));
  if (bad && !values.empty()) values[values.size() / 2] = -1;
  return TensorData(values, std::move(shape)).convert(dtype);
}

// ---- cases --------------------------------------------------------------------

struct Case {
  std::string label;
  ir::Op op;
  std::vector<TensorData> inputs;
  std::vector<ir::TensorSpec> outputs;
  bool approximate = false;  // flex computes it with its own math or in another order
};

inline bool is_approximate(const ir::Op& op, DType dtype) {
  using ir::UnaryOp;
  if (const auto* u = std::get_if<ir::Unary>(&op)) {
    switch (u->op) {
      case UnaryOp::Exp:
      case UnaryOp::Log:
      case UnaryOp::Log1p:
      case UnaryOp::Expm1:
      case UnaryOp::Sin:
      case UnaryOp::Cos:
      case UnaryOp::Tan:
      case UnaryOp::Asin:
      case UnaryOp::Acos:
      case UnaryOp::Atan:
      case UnaryOp::Sinh:
      case UnaryOp::Cosh:
      case UnaryOp::Tanh:
      case UnaryOp::Asinh:
      case UnaryOp::Acosh:
      case UnaryOp::Atanh:
      case UnaryOp::Erf: return true;
      default: return false;
    }
  }
  if (const auto* b = std::get_if<ir::Binary>(&op)) return b->op == ir::BinaryOp::Pow || b->op == ir::BinaryOp::Atan2;
  if (const auto* r = std::get_if<ir::Reduce>(&op))
    return is_float(dtype) &&
           (r->op == ir::ReduceOp::Sum || r->op == ir::ReduceOp::Mean || r->op == ir::ReduceOp::Prod);
  if (std::holds_alternative<ir::Matmul>(op) || std::holds_alternative<ir::AvgPool>(op) ||
      std::holds_alternative<ir::Conv>(op) || std::holds_alternative<ir::ConvTranspose>(op) ||
      std::holds_alternative<ir::AdaptiveAvgPool>(op) || std::holds_alternative<ir::ConvWeightGrad>(op) ||
      std::holds_alternative<ir::Interpolate>(op) || std::holds_alternative<ir::BatchNorm>(op))
    return is_float(dtype);
  if (const auto* c = std::get_if<ir::Cumulative>(&op))
    return is_float(dtype) && (c->op == ir::CumulativeOp::Sum || c->op == ir::CumulativeOp::Prod);
  return false;
}

/// `op` on `inputs`; nullopt where the IR refuses the combination.
inline std::optional<Case> make_case(const ir::Op& op, std::vector<TensorData> inputs, std::string label) {
  std::vector<ir::TensorSpec> specs;
  for (const auto& d : inputs) specs.push_back({d.shape(), d.dtype()});
  Case c{std::move(label), op, std::move(inputs), {}, false};
  try {
    c.outputs = ir::infer_outputs(op, specs);
  } catch (const Error&) {
    return std::nullopt;
  }
  c.approximate = is_approximate(op, specs.empty() ? c.outputs[0].dtype : specs[0].dtype);
  return c;
}

inline std::vector<Case> all_cases() {
  std::vector<Case> cases;
  const auto add = [&](std::optional<Case> c) {
    if (c) cases.push_back(std::move(*c));
  };
  const Shape loop{3, 4, 5};
  std::uint64_t seed = 1;
  for (bool tame : {false, true}) {
    const std::string variant = tame ? "tame" : "wild";
    for (DType d : all_dtypes()) {
      const std::string dn(dtype_name(d));
      // Broadcast left and right operands exercise the strided kernels;
      // same-shape ones the contiguous kernels.
      const auto full = [&] { return make_data(loop, d, ++seed, false); };
      const auto lhs = [&] { return make_data(Shape{3, 1, 5}, d, ++seed, false); };
      const auto rhs = [&] { return make_data(Shape{1, 4, 5}, d, ++seed, tame); };
      const auto mask = [&] { return make_data(Shape{3, 4, 1}, DType::Bool, ++seed, false); };
      for (unsigned u = 0; u < ir::kValueCount<ir::UnaryOp>; ++u) {
        const auto op = static_cast<ir::UnaryOp>(u);
        add(make_case(ir::Unary{op}, {full()}, fmt::format("{}_{}_{}", ir::unary_name(op), dn, variant)));
      }
      for (unsigned b = 0; b < ir::kValueCount<ir::BinaryOp>; ++b) {
        const auto op = static_cast<ir::BinaryOp>(b);
        const std::string name(ir::binary_name(op));
        add(make_case(ir::Binary{op, std::nullopt}, {lhs(), rhs()}, fmt::format("{}_{}_{}", name, dn, variant)));
        add(make_case(ir::Binary{op, std::nullopt}, {full(), make_data(loop, d, ++seed, tame)},
                      fmt::format("{}_same_shape_{}_{}", name, dn, variant)));
        for (Scalar s : {Scalar(3), Scalar(-2), Scalar(2.5)})
          add(make_case(ir::Binary{op, s}, {full()},
                        fmt::format("{}_scalar_{}_{}_{}", name, s.to_string(), dn, variant)));
      }
      // Lengths that are no multiple of a thread's items per turn
      // (kItemsPerThread): the contiguous kernels' last turn is partial.
      for (const Shape& odd : {Shape{1}, Shape{7}, Shape{2, 9}}) {
        const std::string len = std::to_string(odd.num_elements());
        add(make_case(ir::Unary{ir::UnaryOp::Abs}, {make_data(odd, d, ++seed, false)},
                      fmt::format("abs_length_{}_{}_{}", len, dn, variant)));
        add(make_case(ir::Binary{ir::BinaryOp::Sub, std::nullopt},
                      {make_data(odd, d, ++seed, false), make_data(odd, d, ++seed, tame)},
                      fmt::format("sub_length_{}_{}_{}", len, dn, variant)));
      }
      add(make_case(ir::Clamp{Scalar(-1), Scalar(2)}, {full()}, fmt::format("clamp_{}_{}", dn, variant)));
      add(make_case(ir::Clamp{Scalar(0.5), std::nullopt}, {full()}, fmt::format("clamp_min_{}_{}", dn, variant)));
      add(make_case(ir::Clamp{std::nullopt, Scalar(3)}, {full()}, fmt::format("clamp_max_{}_{}", dn, variant)));
      for (DType to : all_dtypes())
        add(make_case(ir::Cast{to}, {full()}, fmt::format("cast_{}_{}_{}", dn, dtype_name(to), variant)));
      add(make_case(ir::MaskWhere{}, {full(), mask(), lhs()}, fmt::format("mask_where_{}_{}", dn, variant)));
      add(make_case(ir::MaskFill{Scalar(7)}, {full(), mask()}, fmt::format("mask_fill_{}_{}", dn, variant)));
      if (tame) continue;

      // Layout: one strided copy per input, by element size.
      add(make_case(ir::Reshape{Shape{12, 5}}, {full()}, "reshape_" + dn));
      add(make_case(ir::Permute{{2, 0, 1}}, {full()}, "permute_" + dn));
      add(make_case(ir::Expand{loop}, {lhs()}, "expand_" + dn));
      add(make_case(ir::Flip{{0, 2}}, {full()}, "flip_" + dn));
      add(make_case(ir::Slice{{{2, 2, -1}, {1, 2, 2}, {0, 5, 1}}}, {full()}, "slice_" + dn));
      add(make_case(ir::SliceAssign{{{0, 2, 2}, {3, 1, 1}, {4, 3, -2}}},
                    {full(), make_data(Shape{2, 1, 3}, d, ++seed, false)}, "slice_assign_" + dn));
      add(make_case(ir::Cat{1},
                    {make_data(Shape{3, 2, 5}, d, ++seed, false), make_data(Shape{3, 0, 5}, d, ++seed, false),
                     make_data(Shape{3, 3, 5}, d, ++seed, false)},
                    "cat_" + dn));
      add(make_case(ir::Unfold{2, 2, 2}, {full()}, "unfold_" + dn));
      add(make_case(ir::Permute{{}}, {make_data(Shape{}, d, ++seed, false)}, "permute_rank0_" + dn));
      // Creation.
      add(make_case(ir::Full{loop, Scalar(-3), d}, {}, "full_" + dn));
      add(make_case(ir::Full{loop, Scalar(2.75), d}, {}, "full_fraction_" + dn));
      add(make_case(ir::Arange{-3, 40, 2, d}, {}, "arange_" + dn));
      add(make_case(ir::Arange{300, -100, -7, d}, {}, "arange_down_" + dn));
      // Reductions and scans along each dim, and over an empty dim.
      for (std::size_t dim = 0; dim < 3; ++dim) {
        for (unsigned r = 0; r < ir::kValueCount<ir::ReduceOp>; ++r) {
          const auto op = static_cast<ir::ReduceOp>(r);
          add(make_case(ir::Reduce{op, dim, DType::I64}, {full()},
                        fmt::format("{}_dim{}_{}", ir::reduce_name(op), dim, dn)));
        }
        for (unsigned c = 0; c < ir::kValueCount<ir::CumulativeOp>; ++c)
          add(make_case(ir::Cumulative{static_cast<ir::CumulativeOp>(c), dim}, {full()},
                        fmt::format("cumulative{}_dim{}_{}", c, dim, dn)));
      }
      for (unsigned r = 0; r < ir::kValueCount<ir::ReduceOp>; ++r)
        add(make_case(ir::Reduce{static_cast<ir::ReduceOp>(r), 1, DType::I32},
                      {make_data(Shape{3, 0, 2}, d, ++seed, false)},
                      fmt::format("{}_empty_{}", ir::reduce_name(static_cast<ir::ReduceOp>(r)), dn)));
      // Lines long enough to fold by block (kBlockFoldMin), along the last
      // dim and across memory, wild and tame.
      for (unsigned r = 0; r < ir::kValueCount<ir::ReduceOp>; ++r) {
        const auto op = static_cast<ir::ReduceOp>(r);
        for (bool tame_line : {false, true}) {
          const std::string kind = tame_line ? "tame" : "wild";
          add(make_case(ir::Reduce{op, 1, DType::I64}, {make_data(Shape{2, 300}, d, ++seed, tame_line)},
                        fmt::format("{}_long_rows_{}_{}", ir::reduce_name(op), dn, kind)));
          add(make_case(ir::Reduce{op, 0, DType::I64}, {make_data(Shape{300, 3}, d, ++seed, tame_line)},
                        fmt::format("{}_long_columns_{}_{}", ir::reduce_name(op), dn, kind)));
        }
      }
      // Matmul: plain, batched, batch dims broadcast either way, rank 2.
      add(make_case(ir::Matmul{},
                    {make_data(Shape{2, 3, 4}, d, ++seed, false), make_data(Shape{2, 4, 5}, d, ++seed, false)},
                    "matmul_" + dn));
      add(make_case(ir::Matmul{},
                    {make_data(Shape{3, 1, 2, 3}, d, ++seed, false), make_data(Shape{1, 4, 3, 2}, d, ++seed, false)},
                    "matmul_broadcast_" + dn));
      add(make_case(ir::Matmul{}, {make_data(Shape{5, 7}, d, ++seed, false), make_data(Shape{7, 1}, d, ++seed, false)},
                    "matmul_2d_" + dn));
      add(make_case(ir::Matmul{}, {make_data(Shape{2, 0}, d, ++seed, false), make_data(Shape{0, 3}, d, ++seed, false)},
                    "matmul_empty_k_" + dn));
      // Pooling in 1, 2 and 3 spatial dims: padding, dilation, ceil mode,
      // indices, both average divisors, adaptive windows.
      if (d != DType::Bool) {
        const auto x1 = [&] { return make_data(Shape{2, 2, 9}, d, ++seed, false); };
        const auto x2 = [&] { return make_data(Shape{2, 3, 7, 6}, d, ++seed, false); };
        const auto x3 = [&] { return make_data(Shape{1, 2, 4, 5, 3}, d, ++seed, false); };
        add(make_case(ir::MaxPool{{3}, {2}, {1}, {1}, false, true, DType::I64}, {x1()}, "max_pool1d_" + dn));
        add(make_case(ir::MaxPool{{3, 2}, {2, 1}, {1, 0}, {2, 1}, true, true, DType::I32}, {x2()},
                      "max_pool2d_dilated_ceil_" + dn));
        add(make_case(ir::MaxPool{{2, 2, 2}, {2, 2, 2}, {0, 1, 0}, {1, 1, 1}, false, false, DType::I64}, {x3()},
                      "max_pool3d_" + dn));
        add(make_case(ir::AvgPool{{3}, {2}, {1}, true, false}, {x1()}, "avg_pool1d_" + dn));
        add(make_case(ir::AvgPool{{3, 3}, {2, 2}, {1, 1}, false, true}, {x2()}, "avg_pool2d_ceil_real_" + dn));
        add(make_case(ir::AvgPool{{2, 3}, {1, 2}, {1, 1}, true, true}, {x2()}, "avg_pool2d_ceil_padded_" + dn));
        add(make_case(ir::AdaptiveAvgPool{{3, 4}}, {x2()}, "adaptive_avg_pool2d_" + dn));
        add(make_case(ir::AdaptiveAvgPool{{1, 1, 2}}, {x3()}, "adaptive_avg_pool3d_" + dn));
      }
      // Convolutions: 1-d to 3-d, stride, padding, dilation, groups, bias,
      // and transposed with output padding. Finite inputs: flex (oneDNN)
      // multiplies padding taps too, so an infinity next to the padding
      // gives NaN there where the reference backend skips the tap.
      if (d != DType::Bool) {
        const auto data = [&](Shape shape) { return make_data(std::move(shape), d, ++seed, true); };
        add(make_case(ir::Conv{{2}, {1}, {1}, 1, true}, {data(Shape{2, 3, 9}), data(Shape{4, 3, 3}), data(Shape{4})},
                      "conv1d_" + dn));
        add(make_case(ir::Conv{{1, 2}, {1, 0}, {2, 1}, 2, false}, {data(Shape{2, 4, 7, 6}), data(Shape{6, 2, 3, 2})},
                      "conv2d_grouped_dilated_" + dn));
        add(make_case(ir::Conv{{1, 1, 1}, {0, 1, 0}, {1, 1, 1}, 1, true},
                      {data(Shape{1, 2, 3, 4, 3}), data(Shape{2, 2, 2, 2, 2}), data(Shape{2})}, "conv3d_" + dn));
        add(make_case(ir::ConvTranspose{{2}, {1}, {1}, {1}, 1, true},
                      {data(Shape{2, 3, 5}), data(Shape{3, 2, 3}), data(Shape{2})}, "conv_transpose1d_" + dn));
        add(make_case(ir::ConvTranspose{{2, 1}, {0, 1}, {0, 0}, {1, 2}, 2, false},
                      {data(Shape{1, 4, 3, 4}), data(Shape{4, 3, 2, 3})}, "conv_transpose2d_grouped_" + dn));
      }
      // Batch norm, a block per channel: rank 2 to 4, and an empty batch
      // (NaN statistics). Finite inputs: the kernel sums in double, flex in
      // f32, so an overflow would differ.
      if (is_float(d)) {
        const auto data = [&](Shape shape) { return make_data(std::move(shape), d, ++seed, true); };
        add(make_case(ir::BatchNorm{1e-5}, {data(Shape{3, 4, 5}), data(Shape{4}), data(Shape{4})}, "batch_norm_" + dn));
        add(make_case(ir::BatchNorm{0.1}, {data(Shape{2, 3, 20, 15}), data(Shape{3}), data(Shape{3})},
                      "batch_norm2d_" + dn));
        add(make_case(ir::BatchNorm{1e-5}, {data(Shape{6, 2}), data(Shape{2}), data(Shape{2})},
                      "batch_norm_rank2_" + dn));
        add(make_case(ir::BatchNorm{1e-5}, {data(Shape{0, 3, 4}), data(Shape{3}), data(Shape{3})},
                      "batch_norm_empty_" + dn));
        add(make_case(ir::BatchNorm{1e-5}, {data(Shape{2, 3, 0}), data(Shape{3}), data(Shape{3})},
                      "batch_norm_no_positions_" + dn));
      }
      // Stable sorts along each dim, both directions, with the ties, NaNs
      // and signed zeros of the wild inputs, and a length-1 line.
      for (std::size_t dim = 0; dim < 3; ++dim)
        for (bool descending : {false, true})
          add(make_case(ir::Sort{dim, descending, dim == 1 ? DType::I32 : DType::I64}, {full()},
                        fmt::format("sort{}_dim{}_{}", descending ? "_descending" : "", dim, dn)));
      add(make_case(ir::Sort{1, false, DType::I64}, {make_data(Shape{4, 1, 3}, d, ++seed, false)},
                    "sort_single_" + dn));
      // Lines long enough for the bitonic network: a length that is not a
      // power of two along a middle dim, and one past a power of two along
      // the last (the network's padding nearly doubles it).
      add(make_case(ir::Sort{1, false, DType::I64}, {make_data(Shape{2, 300, 3}, d, ++seed, false)},
                    "sort_long_dim1_" + dn));
      add(make_case(ir::Sort{1, true, DType::I32}, {make_data(Shape{3, 129}, d, ++seed, false)},
                    "sort_long_descending_" + dn));
      // The conv weight gradient (float dtypes): 1-d to 3-d, stride,
      // padding, dilation, groups.
      {
        const auto data = [&](Shape shape) { return make_data(std::move(shape), d, ++seed, true); };
        add(make_case(ir::ConvWeightGrad{{3}, {2}, {1}, {1}, 1}, {data(Shape{2, 3, 9}), data(Shape{2, 4, 5})},
                      "conv_weight_grad1d_" + dn));
        add(make_case(ir::ConvWeightGrad{{3, 2}, {1, 2}, {1, 0}, {2, 1}, 2},
                      {data(Shape{2, 4, 7, 6}), data(Shape{2, 6, 5, 3})}, "conv_weight_grad2d_grouped_dilated_" + dn));
        add(make_case(ir::ConvWeightGrad{{2, 2, 2}, {1, 1, 1}, {0, 1, 0}, {1, 1, 1}, 1},
                      {data(Shape{1, 2, 3, 4, 3}), data(Shape{1, 2, 2, 5, 2})}, "conv_weight_grad3d_" + dn));
      }
      // Resizing up and down, each mode with and without align_corners.
      for (unsigned m = 0; m < ir::kValueCount<ir::InterpolateMode>; ++m)
        for (bool align : {false, true}) {
          const auto mode = static_cast<ir::InterpolateMode>(m);
          const std::string name = fmt::format("interpolate{}{}_{}", m, align ? "_align" : "", dn);
          add(make_case(ir::Interpolate{{9, 4}, mode, align}, {make_data(Shape{2, 2, 5, 7}, d, ++seed, true)}, name));
          add(make_case(ir::Interpolate{{3, 1}, mode, align}, {make_data(Shape{1, 2, 6, 5}, d, ++seed, true)},
                        name + "_down"));
        }
      // Indexing, with i64 and i32 indices, duplicates (scatter), and one
      // index out of range (the error bit).
      for (DType ix : {DType::I64, DType::I32}) {
        const std::string in = fmt::format("{}_{}", dn, dtype_name(ix));
        const auto indices = [&](Shape shape, std::int64_t bound, bool bad) {
          return make_indices(std::move(shape), ix, bound, ++seed, bad);
        };
        add(make_case(ir::Gather{1}, {full(), indices(Shape{3, 6, 5}, 4, false)}, "gather_" + in));
        add(make_case(ir::Gather{2}, {full(), indices(Shape{2, 3, 4}, 5, false)}, "gather_smaller_" + in));
        add(make_case(ir::Gather{0}, {full(), indices(Shape{3, 4, 5}, 3, true)}, "gather_bad_" + in));
        add(make_case(ir::Select{2}, {full(), indices(Shape{7}, 5, false)}, "select_" + in));
        add(make_case(ir::Select{0}, {full(), indices(Shape{4}, 3, true)}, "select_bad_" + in));
        for (auto reduce : {ir::IndexReduce::Assign, ir::IndexReduce::Add}) {
          const std::string r = reduce == ir::IndexReduce::Add ? "add_" : "";
          add(make_case(ir::Scatter{0, reduce},
                        {full(), indices(Shape{5, 4, 5}, 3, false), make_data(Shape{5, 4, 5}, d, ++seed, false)},
                        "scatter_" + r + in));
          add(make_case(ir::Scatter{2, reduce},
                        {full(), indices(Shape{3, 4, 2}, 5, true), make_data(Shape{3, 4, 2}, d, ++seed, false)},
                        "scatter_bad_" + r + in));
          add(make_case(ir::SelectAssign{1, reduce},
                        {full(), indices(Shape{6}, 4, false), make_data(Shape{3, 6, 5}, d, ++seed, false)},
                        "select_assign_" + r + in));
        }
      }
    }
  }
  return cases;
}

}  // namespace burn::cuda::testing
