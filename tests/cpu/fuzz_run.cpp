// Running, printing and comparing fuzz chains.
#include <algorithm>
#include <array>
#include <burn/detail/ops.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "fusion_support.hpp"
#include "fuzz_program.hpp"

#if BURN_HAS_CAPTURE
#include <burn/trace.hpp>
#endif

namespace burn::fusion_test {
namespace {

using burn::detail::TensorRef;

/// Host values for a leaf: mostly ordinary numbers, with the edge cases
/// kernels get wrong (NaN, infinities, -0, denormals, rounding ties,
/// extreme ints) mixed in.
TensorData leaf_data(const Leaf& leaf) {
  std::mt19937_64 rng(leaf.data_seed);
  const std::size_t n = leaf.base.num_elements();
  std::uniform_real_distribution<double> u01(0, 1);
  auto special = [&] { return u01(rng) < 0.08; };
  return visit_dtype(leaf.dtype, [&]<class T>() -> TensorData {
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) {
      T x{};
      if constexpr (std::is_same_v<T, bool>) {
        x = u01(rng) < 0.5;
      } else if constexpr (std::is_integral_v<T>) {
        constexpr std::array edges{std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0), T(1)};
        if (special()) x = edges[rng() % edges.size()];
        else if constexpr (std::is_signed_v<T>) x = static_cast<T>(static_cast<std::int64_t>(rng() % 41) - 20);
        else x = static_cast<T>(rng() % 41);
      } else {
        constexpr double inf = std::numeric_limits<double>::infinity();
        constexpr std::array edges{0.0, -0.0,  0.5, 2.5,  -1.5,
                                   1e4, 1e-40, inf, -inf, std::numeric_limits<double>::quiet_NaN()};
        const double d = special() ? edges[rng() % edges.size()] : std::normal_distribution<double>(0, 3)(rng);
        if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) x = T(static_cast<float>(d));
        else x = static_cast<T>(d);
      }
      v[i] = x;
    }
    return TensorData(v, leaf.base);
  });
}

TensorRef leaf_base(const Leaf& leaf, const Device& device) {
  return burn::detail::from_data(leaf_data(leaf), TensorCreationOptions(device, leaf.dtype), kind_of_dtype(leaf.dtype));
}

/// The leaf as the chain sees it: its base tensor through its view.
TensorRef make_leaf(const Leaf& leaf, TensorRef t) {
  switch (leaf.view) {
    case ViewKind::None: return t;
    case ViewKind::Permute: return burn::detail::permute(t, leaf.axes);
    case ViewKind::Slice: return burn::detail::slice(t, leaf.ranges);
    case ViewKind::Flip: return burn::detail::flip(t, leaf.axes);
    case ViewKind::Expand: {
      std::vector<std::int64_t> dims(leaf.shape.begin(), leaf.shape.end());
      return burn::detail::expand(t, dims);
    }
  }
  return t;
}

// Built with a stream: GCC 12 warns (-Wrestrict, a false positive) on
// `"v" + std::to_string(i)`.
std::string ref_name(Ref r, const char* suffix = "") {
  std::ostringstream os;
  os << (r.leaf ? 'L' : 'v') << r.index << suffix;
  return os.str();
}

template <class V>
std::string join(const V& values) {
  std::ostringstream os;
  os << '[';
  bool first = true;
  for (const auto& v : values) {
    if (!first) os << ", ";
    first = false;
    os << v;
  }
  os << ']';
  return os.str();
}

std::string leaf_line(const Leaf& l, std::size_t i) {
  std::ostringstream os;
  os << "L" << i << " = " << dtype_name(l.dtype) << ' ' << l.shape.to_string() << " (data seed " << l.data_seed << ')';
  switch (l.view) {
    case ViewKind::None: break;
    case ViewKind::Permute: os << " = permute(base " << l.base.to_string() << ", " << join(l.axes) << ')'; break;
    case ViewKind::Flip: os << " = flip(base, " << join(l.axes) << ')'; break;
    case ViewKind::Expand: os << " = expand(base " << l.base.to_string() << ')'; break;
    case ViewKind::Slice: {
      os << " = slice(base " << l.base.to_string() << ", ";
      for (const Range& r : l.ranges) os << r.start << ".." << r.end.value_or(-1) << ':' << r.step << ' ';
      os << ')';
      break;
    }
  }
  return os.str();
}

std::string step_line(const Step& s, std::size_t i) {
  std::ostringstream os;
  os << 'v' << i << " = ";
  const std::string a = s.args.empty() ? "" : ref_name(s.args[0]);
  switch (s.kind) {
    case OpKind::Unary: os << ir::unary_name(s.unary) << '(' << a << ')'; break;
    case OpKind::Binary: os << ir::binary_name(s.binary) << '(' << a << ", " << ref_name(s.args[1]) << ')'; break;
    case OpKind::BinaryScalar:
      os << ir::binary_name(s.binary) << '(' << a << ", " << s.scalar.to_string() << ')';
      break;
    case OpKind::ScalarLhs: os << ir::binary_name(s.binary) << '(' << s.scalar.to_string() << ", " << a << ')'; break;
    case OpKind::Clamp:
      os << "clamp(" << a << ", " << (s.lo ? s.lo->to_string() : "none") << ", " << (s.hi ? s.hi->to_string() : "none")
         << ')';
      break;
    case OpKind::Cast: os << "cast(" << a << ", " << dtype_name(s.cast_to) << ')'; break;
    case OpKind::MaskWhere:
      os << "mask_where(" << a << ", " << ref_name(s.args[1]) << ", " << ref_name(s.args[2]) << ')';
      break;
    case OpKind::MaskFill:
      os << "mask_fill(" << a << ", " << ref_name(s.args[1]) << ", " << s.scalar.to_string() << ')';
      break;
    case OpKind::ReduceDim: os << ir::reduce_name(s.reduce) << "_dim(" << a << ", " << s.dim << ')'; break;
    case OpKind::ReshapeRoundTrip: os << "reshape(reshape(" << a << ", [numel]), shape)"; break;
    case OpKind::Matmul: os << "matmul(" << a << ", " << ref_name(s.args[1]) << ')'; break;
    case OpKind::TransposeSandwich:
      os << "swap_dims(" << ir::unary_name(s.unary) << "(swap_dims(" << a << ", " << s.dim << ", " << s.dim2 << ")), "
         << s.dim << ", " << s.dim2 << ')';
      break;
  }
  os << "  -> " << dtype_name(s.dtype) << ' ' << s.shape.to_string();
  if (s.keep) os << " [kept]";
  if (s.read) os << " [read]";
  if (s.helper) os << " [helper]";
  return os.str();
}

class Runner {
 public:
  Runner(const Program& p, const Device& device) : p_(p), device_(device) {
    last_use_leaf_.assign(p.leaves.size(), kUnused);
    last_use_step_.assign(p.steps.size(), kUnused);
    for (std::size_t i = 0; i < p.steps.size(); ++i)
      for (Ref r : p.steps[i].args) (r.leaf ? last_use_leaf_ : last_use_step_)[r.index] = i;
  }

  Outcome run() {
    Outcome out;
    try {
      std::vector<TensorRef> bases;
      for (const Leaf& l : p_.leaves) bases.push_back(leaf_base(l, device_));
      run_steps(std::move(bases), [&out](std::string name, const TensorRef& t) {
        out.values.emplace_back(std::move(name), burn::detail::to_data(t));
      });
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  }

  /// Runs the chain on the leaves' base tensors, handing every value the
  /// chain reads to `emit` as it comes: read mid-chain, kept, the result.
  template <class Emit>
  void run_steps(std::vector<TensorRef> bases, Emit&& emit) {
    for (std::size_t k = 0; k < p_.leaves.size(); ++k) leaves_.push_back(make_leaf(p_.leaves[k], std::move(bases[k])));
    steps_.resize(p_.steps.size());
    for (std::size_t i = 0; i < p_.steps.size(); ++i) {
      steps_[i] = execute(p_.steps[i], i);
      for (Ref r : p_.steps[i].args) release_if_done(r, i);
      if (p_.steps[i].read) emit(ref_name({false, i}, " (read mid-chain)"), steps_[i]);
      if (last_use_step_[i] == kUnused) release_if_done({false, i}, kUnused);  // a dead result
    }
    for (std::size_t i = 0; i + 1 < p_.steps.size(); ++i)
      if (p_.steps[i].keep) emit(ref_name({false, i}, " (kept)"), steps_[i]);
    const std::size_t last = p_.steps.size() - 1;
    emit(ref_name({false, last}, " (result)"), steps_[last]);
  }

 private:
  TensorRef& slot(Ref r) { return r.leaf ? leaves_[r.index] : steps_[r.index]; }
  bool done_after(Ref r, std::size_t i) const {
    if (r.leaf) return last_use_leaf_[r.index] == i;
    return last_use_step_[r.index] == i && !p_.steps[r.index].keep && r.index + 1 != p_.steps.size();
  }
  void release_if_done(Ref r, std::size_t i) {
    if (done_after(r, i)) slot(r).reset();
  }
  /// The operand's handle: moved out (so the op may reuse its storage) when
  /// this is its last use and it appears once in the op.
  TensorRef take(const Step& s, std::size_t k, std::size_t i) {
    const Ref r = s.args[k];
    const bool once = std::count(s.args.begin(), s.args.end(), r) == 1;
    if (once && done_after(r, i)) return std::move(slot(r));
    return slot(r);
  }

  TensorRef execute(const Step& s, std::size_t i) {
    switch (s.kind) {
      case OpKind::Unary: return burn::detail::unary(s.unary, take(s, 0, i));
      case OpKind::Binary: {
        TensorRef a = take(s, 0, i);
        TensorRef b = take(s, 1, i);
        return burn::detail::binary(s.binary, std::move(a), std::move(b));
      }
      case OpKind::BinaryScalar: return burn::detail::binary_scalar(s.binary, take(s, 0, i), s.scalar);
      case OpKind::ScalarLhs: return burn::detail::scalar_binary(s.binary, s.scalar, take(s, 0, i));
      case OpKind::Clamp: return burn::detail::clamp(take(s, 0, i), s.lo, s.hi);
      case OpKind::Cast: return burn::detail::cast(take(s, 0, i), s.cast_to);
      case OpKind::MaskWhere: return burn::detail::mask_where(take(s, 0, i), take(s, 1, i), take(s, 2, i));
      case OpKind::MaskFill: return burn::detail::mask_fill(take(s, 0, i), take(s, 1, i), s.scalar);
      case OpKind::ReduceDim:
        return burn::detail::reduce_dim(s.reduce, take(s, 0, i), static_cast<std::int64_t>(s.dim));
      case OpKind::ReshapeRoundTrip: {
        TensorRef a = take(s, 0, i);
        const Shape shape = a->spec.shape;
        return burn::detail::reshape_exact(burn::detail::reshape_exact(a, Shape{shape.num_elements()}), shape);
      }
      case OpKind::Matmul: return burn::detail::matmul(take(s, 0, i), take(s, 1, i));
      case OpKind::TransposeSandwich: {
        const auto d1 = static_cast<std::int64_t>(s.dim), d2 = static_cast<std::int64_t>(s.dim2);
        return burn::detail::swap_dims(burn::detail::unary(s.unary, burn::detail::swap_dims(take(s, 0, i), d1, d2)), d1,
                                       d2);
      }
    }
    throw Error("fuzz", "unknown step kind");
  }

  static constexpr std::size_t kUnused = static_cast<std::size_t>(-1);

  const Program& p_;
  Device device_;
  std::vector<std::size_t> last_use_leaf_, last_use_step_;
  std::vector<TensorRef> leaves_, steps_;
};

bool is_nan_at(const TensorData& d, std::size_t i) {
  const std::byte* p = d.bytes().data() + i * dtype_size(d.dtype());
  switch (d.dtype()) {
    case DType::F64: {
      double v;
      std::memcpy(&v, p, 8);
      return std::isnan(v);
    }
    case DType::F32: {
      float v;
      std::memcpy(&v, p, 4);
      return std::isnan(v);
    }
    case DType::F16: {
      std::uint16_t b;
      std::memcpy(&b, p, 2);
      return (b & 0x7c00) == 0x7c00 && (b & 0x03ff) != 0;
    }
    case DType::BF16: {
      std::uint16_t b;
      std::memcpy(&b, p, 2);
      return (b & 0x7f80) == 0x7f80 && (b & 0x007f) != 0;
    }
    default: return false;
  }
}

std::string bits_at(const TensorData& d, std::size_t i) {
  const std::size_t size = dtype_size(d.dtype());
  std::uint64_t bits = 0;
  std::memcpy(&bits, d.bytes().data() + i * size, size);  // little-endian host
  std::ostringstream os;
  os << "0x" << std::hex << bits;
  return os.str();
}

}  // namespace

std::string Program::to_string() const {
  std::ostringstream os;
  os << "chain seed " << seed << ", full shape " << full.to_string() << '\n';
  for (std::size_t i = 0; i < leaves.size(); ++i) os << "  " << leaf_line(leaves[i], i) << '\n';
  for (std::size_t i = 0; i < steps.size(); ++i) os << "  " << step_line(steps[i], i) << '\n';
  return os.str();
}

Outcome run(const Program& program, const Device& device) { return Runner(program, device).run(); }

#if BURN_HAS_CAPTURE
Outcome run_traced(const Program& program, const Device& device) {
  Outcome out;
  try {
    TracedFunction::Tensors bases;
    for (const Leaf& l : program.leaves) bases.push_back(leaf_base(l, device));
    std::vector<std::string> names;  // of the results, from the last recording
    const TracedFunction chain = burn::trace(
        [&](const TracedFunction::Tensors& in) {
          TracedFunction::Tensors results;
          names.clear();
          Runner(program, in[0]->device).run_steps(in, [&](std::string name, const TensorRef& t) {
            names.push_back(std::move(name));
            results.push_back(t);
          });
          return results;
        },
        specs_of(bases));
    const TracedFunction::Tensors results = chain(bases);
    for (std::size_t k = 0; k < results.size(); ++k)
      out.values.emplace_back(names.at(k), burn::detail::to_data(results[k]));
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}
#endif

std::string bitwise_diff(const TensorData& fused, const TensorData& eager) {
  std::ostringstream os;
  if (fused.dtype() != eager.dtype() || fused.shape() != eager.shape()) {
    os << "fused gives " << dtype_name(fused.dtype()) << ' ' << fused.shape().to_string() << ", eager "
       << dtype_name(eager.dtype()) << ' ' << eager.shape().to_string();
    return os.str();
  }
  const std::size_t size = dtype_size(fused.dtype());
  std::size_t first = 0, count = 0;
  for (std::size_t i = 0; i < fused.num_elements(); ++i) {
    const bool same = std::memcmp(fused.bytes().data() + i * size, eager.bytes().data() + i * size, size) == 0 ||
                      (is_nan_at(fused, i) && is_nan_at(eager, i));
    if (!same && count++ == 0) first = i;
  }
  if (count == 0) return {};
  os << count << " of " << fused.num_elements() << " elements differ; first at flat index " << first << ": fused "
     << fused.value_as_double(first) << " (" << bits_at(fused, first) << "), eager " << eager.value_as_double(first)
     << " (" << bits_at(eager, first) << ')';
  return os.str();
}

std::string compare(const Outcome& fused, const Outcome& eager) {
  if (!fused.error.empty() || !eager.error.empty())
    return "fused threw: '" + fused.error + "'; eager threw: '" + eager.error + "'";
  if (fused.values.size() != eager.values.size()) return "different numbers of values read";
  std::string out;
  for (std::size_t i = 0; i < fused.values.size(); ++i) {
    const std::string diff = bitwise_diff(fused.values[i].second, eager.values[i].second);
    if (!diff.empty()) out += fused.values[i].first + ": " + diff + '\n';
  }
  return out;
}

}  // namespace burn::fusion_test
