// The ONNX operators of transformer blocks import runs, written with burn's
// tensor operations: Attention (opset 23; the external cache length of 24,
// the sliding windows of 25) and RotaryEmbedding (opset 23). PyTorch's
// exporter writes the first for scaled_dot_product_attention and
// MultiheadAttention from opset 23 on.
#include <cmath>
#include <limits>

#include <burn/activation.hpp>
#include <burn/detail/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_common.hpp"

namespace burn::onnx {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

std::int64_t dim(const TensorRef& t, std::size_t d) { return static_cast<std::int64_t>(shape_of(t)[d]); }

/// [batch, seq, heads * head] -> [batch, heads, seq, head].
TensorRef split_heads(const NodeArgs& a, const TensorRef& t, std::int64_t heads, std::string_view what) {
  if (heads <= 0 || dim(t, 2) % heads != 0)
    a.fail(fmt::format("{}'s hidden size {} is not a multiple of {} heads", what, dim(t, 2), heads));
  const I64s split{dim(t, 0), dim(t, 1), heads, dim(t, 2) / heads};
  const I64s order{0, 2, 1, 3};
  return detail::permute(detail::reshape(t, split), order);
}

/// [batch, heads, seq, head] -> [batch, seq, heads * head].
TensorRef merge_heads(const TensorRef& t) {
  const I64s order{0, 2, 1, 3};
  const I64s merged{dim(t, 0), dim(t, 2), dim(t, 1) * dim(t, 3)};
  return detail::reshape(detail::permute(t, order), merged);
}

/// Each of K's or V's heads repeated `group` times in place ([h0, h0, h1, h1, ...]),
/// so that grouped-query attention reads one key head per query head.
TensorRef repeat_heads(const TensorRef& t, std::int64_t group) {
  if (group == 1) return t;
  const I64s wide{dim(t, 0), dim(t, 1), group, dim(t, 2), dim(t, 3)};
  const I64s back{dim(t, 0), dim(t, 1) * group, dim(t, 2), dim(t, 3)};
  return detail::reshape(detail::expand(detail::unsqueeze_dim(t, 2), wide), back);
}

/// The masking that follows from shapes and attributes alone, as an additive
/// bias [batch or 1, 1, q_len, total]: 0 where query i may attend key j,
/// -inf where not. Causal and windowed masks are aligned bottom-right: query
/// i sits at absolute position i + offset, where offset counts the keys
/// before the query block (the past cache's length, or a batch's valid
/// length minus q_len).
struct StructuralMask {
  bool causal = false;
  std::int64_t left = -1, right = -1;  // window sizes; -1: unbounded
  std::int64_t past = 0;
  std::optional<I64s> valid_lengths;  // nonpad_kv_seqlen, one per batch

  bool any() const { return causal || left >= 0 || right >= 0 || valid_lengths.has_value(); }

  TensorRef bias(std::int64_t q_len, std::int64_t total, DType dtype, const Device& device) const {
    const std::size_t batches = valid_lengths ? valid_lengths->size() : 1;
    std::vector<float> values(batches * static_cast<std::size_t>(q_len * total), 0.0F);
    std::size_t at = 0;
    for (std::size_t b = 0; b < batches; ++b) {
      const std::int64_t offset = valid_lengths ? (*valid_lengths)[b] - q_len : past;
      for (std::int64_t i = 0; i < q_len; ++i) {
        for (std::int64_t j = 0; j < total; ++j, ++at) {
          const std::int64_t ahead = i + offset - j;  // how far key j lies before the query's position
          bool allowed = !causal || ahead >= 0;
          if (left >= 0) allowed &= ahead <= left;
          if (right >= 0) allowed &= -ahead <= right;
          if (valid_lengths) allowed &= j < (*valid_lengths)[b];
          if (!allowed) values[at] = -std::numeric_limits<float>::infinity();
        }
      }
    }
    const Shape shape{batches, 1, static_cast<std::size_t>(q_len), static_cast<std::size_t>(total)};
    return detail::from_data(TensorData(values, shape), TensorCreationOptions(device, dtype), TensorKind::Float);
  }
};

/// attn_mask as an additive bias of rank 4 over `total` keys: a bool mask
/// gives 0 where true and -inf where false, a float one is added as it is; a
/// mask shorter than `total` is padded with masked keys.
TensorRef mask_bias(const NodeArgs& a, TensorRef mask, std::int64_t total, DType dtype) {
  if (rank_of(mask) == 0 || rank_of(mask) > 4)
    a.fail(fmt::format("attn_mask must have rank 1 to 4, it has shape {}", shape_of(mask).to_string()));
  mask = with_rank(mask, 4);
  const bool boolean = dtype_of(mask) == DType::Bool;
  if (!boolean && dtype_of(mask) != dtype)
    a.fail(fmt::format("attn_mask must be bool or {} (Q's dtype), it is {}", dtype_name(dtype),
                       dtype_name(dtype_of(mask))));
  if (boolean) {
    const TensorCreationOptions options(mask->device, dtype);
    const TensorRef masked = detail::full(shape_of(mask), Scalar(kNegInf), options, TensorKind::Float);
    mask = detail::mask_fill(masked, mask, Scalar(0.0));
  }
  const std::int64_t have = dim(mask, 3);
  if (have > total) a.fail(fmt::format("attn_mask covers {} keys, more than the {} there are", have, total));
  if (have < total) {
    const Shape pad{shape_of(mask)[0], shape_of(mask)[1], shape_of(mask)[2], static_cast<std::size_t>(total - have)};
    const TensorRef fill =
        detail::full(pad, Scalar(kNegInf), TensorCreationOptions(mask->device, dtype), TensorKind::Float);
    const std::vector<TensorRef> parts{mask, fill};
    mask = detail::cat(parts, 3);
  }
  return mask;
}

std::vector<TensorRef> attention(const NodeArgs& a) {
  TensorRef q = a.in(0), k = a.in(1), v = a.in(2);
  const std::size_t rank = rank_of(q);
  if ((rank != 3 && rank != 4) || rank_of(k) != rank || rank_of(v) != rank)
    a.fail(
        fmt::format("Q, K and V must all be 4-D [batch, heads, seq, head] or all 3-D [batch, seq, hidden]; they "
                    "have shapes {}, {} and {}",
                    shape_of(q).to_string(), shape_of(k).to_string(), shape_of(v).to_string()));
  const DType dtype = dtype_of(q);
  if (!is_float(dtype) || dtype_of(k) != dtype || dtype_of(v) != dtype)
    a.fail(fmt::format("Q, K and V must share one float dtype; they are {}, {} and {}", dtype_name(dtype),
                       dtype_name(dtype_of(k)), dtype_name(dtype_of(v))));
  const bool packed = rank == 3;
  if (packed) {
    if (!a.has_attr("q_num_heads") || !a.has_attr("kv_num_heads"))
      a.fail("3-D Q, K and V need the q_num_heads and kv_num_heads attributes");
    q = split_heads(a, q, a.attr_int("q_num_heads", 0), "Q");
    k = split_heads(a, k, a.attr_int("kv_num_heads", 0), "K");
    v = split_heads(a, v, a.attr_int("kv_num_heads", 0), "V");
  } else {
    for (const char* name : {"q_num_heads", "kv_num_heads"}) {
      const std::int64_t heads = dim(name[0] == 'q' ? q : k, 1);
      if (a.has_attr(name) && a.attr_int(name, 0) != heads)
        a.fail(fmt::format("{} is {} but the 4-D input has {} heads", name, a.attr_int(name, 0), heads));
    }
  }
  const std::int64_t batch = dim(q, 0), q_heads = dim(q, 1), q_len = dim(q, 2), head = dim(q, 3);
  const std::int64_t kv_heads = dim(k, 1);
  if (dim(k, 0) != batch || dim(v, 0) != batch || dim(v, 1) != kv_heads || dim(v, 2) != dim(k, 2) || dim(k, 3) != head)
    a.fail(fmt::format("K {} must match Q {} in batch and head size, and V {} must match K in batch, heads and length",
                       shape_of(k).to_string(), shape_of(q).to_string(), shape_of(v).to_string()));
  if (kv_heads == 0 || q_heads % kv_heads != 0)
    a.fail(fmt::format("Q's {} heads are not a multiple of K's and V's {}", q_heads, kv_heads));

  // The cache: past keys and values come before the new ones.
  StructuralMask structural;
  if (a.has(4) != a.has(5)) a.fail("past_key and past_value must be given together");
  if (a.has(4)) {
    const TensorRef &past_k = a.in(4), &past_v = a.in(5);
    if (rank_of(past_k) != 4 || rank_of(past_v) != 4 || dim(past_k, 0) != batch || dim(past_k, 1) != kv_heads ||
        dim(past_k, 3) != head || dim(past_v, 0) != batch || dim(past_v, 1) != kv_heads ||
        dim(past_v, 2) != dim(past_k, 2) || dim(past_v, 3) != dim(v, 3))
      a.fail(fmt::format("past_key {} and past_value {} must be [batch, kv heads, past, head] like K {} and V {}",
                         shape_of(past_k).to_string(), shape_of(past_v).to_string(), shape_of(k).to_string(),
                         shape_of(v).to_string()));
    structural.past = dim(past_k, 2);
    const std::vector<TensorRef> keys{past_k, k}, values{past_v, v};
    k = detail::cat(keys, 2);
    v = detail::cat(values, 2);
  }
  const TensorRef present_k = k, present_v = v;
  const std::int64_t total = dim(k, 2);

  structural.causal = a.attr_int("is_causal", 0) != 0;
  if (a.opset() >= 25) {
    structural.left = a.attr_int("left_window_size", -1);
    structural.right = a.attr_int("right_window_size", -1);
    if (structural.left < -1 || structural.right < -1)
      a.fail(fmt::format("left_window_size {} and right_window_size {} must be -1 (unbounded) or at least 0",
                         structural.left, structural.right));
  }
  if (a.has(6)) {
    if (a.has(4)) a.fail("nonpad_kv_seqlen cannot be combined with past_key and past_value");
    structural.valid_lengths = a.ints(6);
    if (static_cast<std::int64_t>(structural.valid_lengths->size()) != batch)
      a.fail(fmt::format("nonpad_kv_seqlen has {} lengths for a batch of {}", structural.valid_lengths->size(), batch));
    for (const std::int64_t n : *structural.valid_lengths)
      if (n < 0 || n > total) a.fail(fmt::format("nonpad_kv_seqlen {} is outside [0, {}]", n, total));
  }
  std::optional<TensorRef> bias;
  if (structural.any()) bias = structural.bias(q_len, total, dtype, q->device);
  if (a.has(3)) {
    const TensorRef m = mask_bias(a, a.in(3), total, dtype);
    bias = bias ? broadcast_binary(ir::BinaryOp::Add, *bias, m) : m;
  }

  k = repeat_heads(k, q_heads / kv_heads);
  v = repeat_heads(v, q_heads / kv_heads);
  // The scale is applied as its square root to each of Q and K, as the
  // definition asks, so that large products do not overflow 16-bit floats
  // (a negative scale, which has no real root, to Q alone).
  const double scale = a.has_attr("scale") ? a.attr_float("scale", 0.0F) : 1.0 / std::sqrt(static_cast<double>(head));
  const double q_factor = scale >= 0.0 ? std::sqrt(scale) : scale, k_factor = scale >= 0.0 ? q_factor : 1.0;
  const TensorRef raw = detail::matmul(detail::binary_scalar(ir::BinaryOp::Mul, q, q_factor),
                                       detail::swap_dims(detail::binary_scalar(ir::BinaryOp::Mul, k, k_factor), 2, 3));
  TensorRef capped = raw;
  if (const double cap = a.attr_float("softcap", 0.0F); cap > 0.0)
    capped = detail::binary_scalar(
        ir::BinaryOp::Mul, detail::unary(ir::UnaryOp::Tanh, detail::binary_scalar(ir::BinaryOp::Div, raw, cap)), cap);
  const TensorRef scores = bias ? broadcast_binary(ir::BinaryOp::Add, capped, *bias) : capped;

  TensorRef probs = scores;
  if (a.has_attr("softmax_precision")) {
    const auto wanted = burn_dtype(static_cast<std::int32_t>(a.attr_int("softmax_precision", 0)));
    if (!wanted || !is_float(*wanted))
      a.fail(fmt::format("softmax_precision {} is not a float type", a.attr_int("softmax_precision", 0)));
    probs = detail::cast(probs, *wanted);
  }
  probs = detail::cast(detail::softmax(probs, -1), dtype);
  if (bias) {
    // A query every key is masked from gets zeros, not the NaN of a softmax
    // over -inf alone.
    const TensorRef row_max = detail::reduce_dim(ir::ReduceOp::Max, *bias, -1);
    const TensorRef blind = detail::binary_scalar(ir::BinaryOp::Equal, row_max, Scalar(kNegInf));
    const Shape& s = shape_of(probs);
    const I64s dims(s.dims().begin(), s.dims().end());
    probs = detail::mask_fill(probs, detail::expand(blind, dims), Scalar(0.0));
  }
  TensorRef y = detail::matmul(probs, v);
  if (packed) y = merge_heads(y);

  std::vector<TensorRef> out{y, present_k, present_v};
  if (a.output_wanted(3)) {
    switch (a.attr_int("qk_matmul_output_mode", 0)) {
      case 0: out.push_back(raw); break;
      case 1: out.push_back(capped); break;
      case 2: out.push_back(scores); break;
      case 3: out.push_back(probs); break;
      default:
        a.fail(fmt::format("qk_matmul_output_mode {} is not one of 0 to 3", a.attr_int("qk_matmul_output_mode", 0)));
    }
  }
  return out;
}

/// RotaryEmbedding: each position's rotary dims turned by the angles of its
/// row of the cos and sin caches, the first half against the second
/// (interleaved = 0, as in Llama) or even against odd dims (interleaved = 1,
/// as in GPT-J); dims past rotary_embedding_dim pass through.
std::vector<TensorRef> rotary_embedding(const NodeArgs& a) {
  TensorRef x = a.in(0);
  const std::size_t rank = rank_of(x);
  if (rank != 3 && rank != 4)
    a.fail(fmt::format("the input must be 4-D [batch, heads, seq, head] or 3-D [batch, seq, hidden], it has shape {}",
                       shape_of(x).to_string()));
  // Worked on as [batch, seq, heads, head].
  if (rank == 4) {
    x = detail::swap_dims(x, 1, 2);
  } else {
    const std::int64_t heads = a.attr_int("num_heads", 0);
    if (heads <= 0 || dim(x, 2) % heads != 0)
      a.fail(
          fmt::format("a 3-D input needs num_heads dividing its hidden size {} (num_heads is {})", dim(x, 2), heads));
    const I64s split{dim(x, 0), dim(x, 1), heads, dim(x, 2) / heads};
    x = detail::reshape(x, split);
  }
  const std::int64_t batch = dim(x, 0), seq = dim(x, 1), head = dim(x, 3);
  std::int64_t rotary = a.attr_int("rotary_embedding_dim", 0);
  if (rotary == 0) rotary = head;
  if (rotary < 0 || rotary > head || rotary % 2 != 0)
    a.fail(fmt::format("rotary_embedding_dim {} must be even and at most the head size {}", rotary, head));
  const std::int64_t half = rotary / 2;

  TensorRef cos = a.in(1), sin = a.in(2);
  if (a.has(3)) {
    // Rows of [max_position, half] caches picked by [batch, seq] position ids.
    const TensorRef& ids = a.in(3);
    if (rank_of(cos) != 2 || rank_of(sin) != 2 || rank_of(ids) != 2 || dim(ids, 0) != batch || dim(ids, 1) != seq)
      a.fail(
          fmt::format("with position_ids [batch, seq] ({}), the caches must be 2-D [max_position, {}]; they are {} "
                      "and {}",
                      shape_of(ids).to_string(), half, shape_of(cos).to_string(), shape_of(sin).to_string()));
    const TensorRef flat = detail::reshape(ids, I64s{-1});
    const I64s rows{batch, seq, -1};
    cos = detail::reshape(detail::select(cos, 0, flat), rows);
    sin = detail::reshape(detail::select(sin, 0, flat), rows);
  }
  const I64s want{batch, seq, half};
  for (const TensorRef* c : {&cos, &sin})
    if (rank_of(*c) != 3 || dim(*c, 0) != batch || dim(*c, 1) != seq || dim(*c, 2) != half)
      a.fail(
          fmt::format("the cos and sin caches must give [batch, seq, rotary_embedding_dim / 2] = [{}, {}, {}] "
                      "angles, not {}",
                      batch, seq, half, shape_of(*c).to_string()));
  cos = detail::unsqueeze_dim(detail::cast(cos, dtype_of(x)), 2);  // over the heads
  sin = detail::unsqueeze_dim(detail::cast(sin, dtype_of(x)), 2);

  const TensorRef turned = detail::narrow(x, 3, 0, static_cast<std::size_t>(rotary));
  const bool interleaved = a.attr_int("interleaved", 0) != 0;
  TensorRef x1, x2;
  const std::int64_t heads = dim(x, 2);
  if (interleaved) {
    const I64s pairs{batch, seq, heads, half, 2};
    const TensorRef p = detail::reshape(turned, pairs);
    x1 = detail::squeeze_dim(detail::narrow(p, 4, 0, 1), 4);
    x2 = detail::squeeze_dim(detail::narrow(p, 4, 1, 1), 4);
  } else {
    x1 = detail::narrow(turned, 3, 0, static_cast<std::size_t>(half));
    x2 = detail::narrow(turned, 3, half, static_cast<std::size_t>(half));
  }
  using B = ir::BinaryOp;
  const TensorRef real = detail::binary(B::Sub, detail::binary(B::Mul, cos, x1), detail::binary(B::Mul, sin, x2));
  const TensorRef imag = detail::binary(B::Add, detail::binary(B::Mul, sin, x1), detail::binary(B::Mul, cos, x2));
  TensorRef rotated;
  if (interleaved) {
    const std::vector<TensorRef> pair{detail::unsqueeze_dim(real, 4), detail::unsqueeze_dim(imag, 4)};
    const I64s back{batch, seq, heads, rotary};
    rotated = detail::reshape(detail::cat(pair, 4), back);
  } else {
    const std::vector<TensorRef> halves{real, imag};
    rotated = detail::cat(halves, 3);
  }
  if (rotary < head) {
    const std::vector<TensorRef> parts{rotated, detail::narrow(x, 3, rotary, static_cast<std::size_t>(head - rotary))};
    rotated = detail::cat(parts, 3);
  }
  if (rank == 4) return one(detail::swap_dims(rotated, 1, 2));
  const I64s back{batch, seq, heads * head};
  return one(detail::reshape(rotated, back));
}

}  // namespace

void add_attention_ops(ImportTable& table) {
  table.insert({
      {"Attention", attention},
      {"RotaryEmbedding", rotary_embedding},
  });
}

}  // namespace burn::onnx
