// ONNX's recurrent operators, LSTM and GRU, unrolled over the sequence with
// burn's tensor operations (so they run on every device and train). The
// input projection of every step is one matmul; each step then adds the
// recurrent projection of the previous hidden state.
//
// Supported: directions forward, reverse and bidirectional; layout 0
// ([seq, batch, features]) and 1 (batch first); initial states; LSTM
// peepholes; GRU's linear_before_reset either way; sequence_lens (a
// sequence shorter than the batch's longest keeps its state past its end,
// and its outputs there are zeros). Refused with the node named: activations
// other than the defaults, clip and input_forget.
#include <burn/activation.hpp>
#include <burn/detail/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_ops.hpp"

namespace burn::onnx {

using detail::TensorRef;
using I64s = std::vector<std::int64_t>;

namespace {

TensorRef add(const TensorRef& a, const TensorRef& b) { return detail::binary(ir::BinaryOp::Add, a, b); }
TensorRef mul(const TensorRef& a, const TensorRef& b) { return detail::binary(ir::BinaryOp::Mul, a, b); }
TensorRef tanh(const TensorRef& a) { return detail::unary(ir::UnaryOp::Tanh, a); }

/// The settings every recurrent operator shares, checked.
struct Recurrence {
  std::size_t hidden = 0;
  std::size_t directions = 1;
  bool reverse_only = false;
  bool batch_first = false;
  std::size_t seq = 0, batch = 0;
  TensorRef x;  // [seq, batch, input]
  /// With sequence_lens shorter than seq: for each step, which [batch,
  /// hidden] entries are inside their sequence (empty: all of them).
  std::vector<TensorRef> active;
  TensorRef zeros;  // [batch, hidden], what a step past a sequence's end outputs

  /// The state after step t: `next` inside each sequence, `previous` past its end.
  TensorRef keep(std::size_t t, const TensorRef& previous, const TensorRef& next) const {
    return active.empty() ? next : detail::mask_where(previous, active[t], next);
  }
  /// The output of step t: `next` inside each sequence, zeros past its end.
  TensorRef output(std::size_t t, const TensorRef& next) const {
    return active.empty() ? next : detail::mask_where(zeros, active[t], next);
  }
};

Recurrence recurrence(const NodeArgs& a, std::size_t gates, std::vector<std::string_view> default_activations) {
  Recurrence r;
  const std::string direction = a.attr_string("direction", "forward");
  if (direction == "bidirectional") {
    r.directions = 2;
  } else if (direction == "reverse") {
    r.reverse_only = true;
  } else if (direction != "forward") {
    a.fail(fmt::format("direction '{}' is not one of forward, reverse, bidirectional", direction));
  }
  if (a.has_attr("clip")) a.fail("clip is not supported");
  if (a.has_attr("activations")) {
    // Only the defaults, spelled out (some exporters write them).
    const auto& node = a.node();
    for (const auto& attr : node.attribute()) {
      if (attr.name() != "activations") continue;
      for (int i = 0; i < attr.strings_size(); ++i)
        if (attr.strings(i) != default_activations[static_cast<std::size_t>(i) % default_activations.size()])
          a.fail(fmt::format("activation {} is not supported (only the defaults)", attr.strings(i)));
    }
  }
  r.batch_first = a.attr_int("layout", 0) == 1;
  r.x = r.batch_first ? detail::swap_dims(a.in(0), 0, 1) : a.in(0);
  const Shape& xs = r.x->spec.shape;
  if (xs.rank() != 3) a.fail("X must be 3-D");
  r.seq = xs[0];
  r.batch = xs[1];
  const Shape& ws = a.in(1)->spec.shape;
  if (ws.rank() != 3 || ws[0] != r.directions || ws[1] % gates != 0)
    a.fail(fmt::format("W must be [{}, {} * hidden, input], got {}", r.directions, gates, ws.to_string()));
  r.hidden = ws[1] / gates;
  if (a.has_attr("hidden_size") && static_cast<std::size_t>(a.attr_int("hidden_size", 0)) != r.hidden)
    a.fail("hidden_size does not match W");
  if (a.has(4)) {
    const I64s lengths = a.ints(4);
    if (lengths.size() != r.batch)
      a.fail(fmt::format("sequence_lens has {} entries for a batch of {}", lengths.size(), r.batch));
    bool shorter = false;
    for (const auto len : lengths) {
      if (len < 0 || static_cast<std::size_t>(len) > r.seq)
        a.fail(fmt::format("sequence_lens entry {} is outside [0, {}]", len, r.seq));
      shorter = shorter || static_cast<std::size_t>(len) < r.seq;
    }
    if (shorter) {
      const Device& device = r.x->device;
      for (std::size_t t = 0; t < r.seq; ++t) {
        std::vector<bool> inside(r.batch * r.hidden);
        for (std::size_t b = 0; b < r.batch; ++b)
          for (std::size_t j = 0; j < r.hidden; ++j)
            inside[b * r.hidden + j] = static_cast<std::size_t>(lengths[b]) > t;
        r.active.push_back(detail::from_data(TensorData(inside, Shape{r.batch, r.hidden}),
                                             TensorCreationOptions(device, DType::Bool), TensorKind::Bool));
      }
      r.zeros = detail::full(Shape{r.batch, r.hidden}, 0.0, TensorCreationOptions(device, r.x->spec.dtype),
                             TensorKind::Float);
    }
  }
  return r;
}

/// Row `d` of a [directions, ...] tensor, without its first dim.
TensorRef direction(const TensorRef& t, std::size_t d) {
  return detail::squeeze_dim(detail::narrow(t, 0, static_cast<std::int64_t>(d), 1), 0);
}

/// Gate `g` (of width `hidden`) of a [..., gates * hidden] tensor.
TensorRef gate(const TensorRef& t, std::size_t g, std::size_t hidden) {
  return detail::narrow(t, -1, static_cast<std::int64_t>(g * hidden), hidden);
}

/// X [seq, batch, in] . W_d^T + bias -> [seq, batch, gates * hidden], one matmul for every step.
TensorRef input_projection(const Recurrence& r, const TensorRef& w, const std::optional<TensorRef>& bias) {
  const auto in = static_cast<std::int64_t>(r.x->spec.shape[2]);
  const TensorRef flat = detail::reshape(r.x, I64s{static_cast<std::int64_t>(r.seq * r.batch), in});
  TensorRef proj = detail::matmul(flat, detail::swap_dims(w, 0, 1));
  if (bias) proj = add(proj, detail::unsqueeze_dim(*bias, 0));
  return detail::reshape(proj, I64s{static_cast<std::int64_t>(r.seq), static_cast<std::int64_t>(r.batch), -1});
}

/// Outputs Y [seq, directions, batch, hidden] (or batch first) and the last states.
std::vector<TensorRef> outputs(const Recurrence& r, const std::vector<std::vector<TensorRef>>& steps,
                               const std::vector<TensorRef>& last_h, const std::vector<TensorRef>& last_c) {
  std::vector<TensorRef> per_direction;
  per_direction.reserve(steps.size());
  for (const auto& s : steps) per_direction.push_back(detail::stack(s, 0));  // [seq, batch, hidden]
  TensorRef y = detail::stack(per_direction, 1);                             // [seq, dirs, batch, hidden]
  TensorRef y_h = detail::stack(last_h, 0);
  if (r.batch_first) {
    y = detail::permute(y, I64s{2, 0, 1, 3});  // [batch, seq, dirs, hidden]
    y_h = detail::swap_dims(y_h, 0, 1);
  }
  std::vector<TensorRef> out{y, y_h};
  if (!last_c.empty()) {
    TensorRef y_c = detail::stack(last_c, 0);
    if (r.batch_first) y_c = detail::swap_dims(y_c, 0, 1);
    out.push_back(y_c);
  }
  return out;
}

/// The initial state of direction d (input `index`), else zeros.
TensorRef initial_state(const NodeArgs& a, const Recurrence& r, std::size_t index, std::size_t d,
                        const TensorRef& like) {
  if (a.has(index)) {
    const TensorRef s = r.batch_first ? detail::swap_dims(a.in(index), 0, 1) : a.in(index);
    return direction(s, d);
  }
  return detail::full(Shape{r.batch, r.hidden}, 0.0, TensorCreationOptions(like->device, like->spec.dtype),
                      TensorKind::Float);
}

}  // namespace

std::vector<TensorRef> import_lstm(const NodeArgs& a) {
  // Gates in ONNX's order: input, output, forget, cell.
  const Recurrence r = recurrence(a, 4, {"Sigmoid", "Tanh", "Tanh"});
  if (a.attr_int("input_forget", 0) != 0) a.fail("input_forget = 1 is not supported");
  const std::size_t h = r.hidden;
  std::vector<std::vector<TensorRef>> steps(r.directions);
  std::vector<TensorRef> last_h, last_c;
  for (std::size_t d = 0; d < r.directions; ++d) {
    const TensorRef w = direction(a.in(1), d), rec = detail::swap_dims(direction(a.in(2), d), 0, 1);
    std::optional<TensorRef> bias;
    if (a.has(3)) {  // [Wb, Rb], both [4h]
      const TensorRef b = direction(a.in(3), d);
      bias = add(detail::narrow(b, 0, 0, 4 * h), detail::narrow(b, 0, static_cast<std::int64_t>(4 * h), 4 * h));
    }
    std::optional<TensorRef> p_i, p_o, p_f;
    if (a.has(7)) {
      const TensorRef p = direction(a.in(7), d);
      p_i = gate(p, 0, h);
      p_o = gate(p, 1, h);
      p_f = gate(p, 2, h);
    }
    const TensorRef xw = input_projection(r, w, bias);
    TensorRef ht = initial_state(a, r, 5, d, r.x);
    TensorRef ct = initial_state(a, r, 6, d, r.x);
    const bool backward = r.reverse_only || d == 1;
    std::vector<TensorRef> ys(r.seq);
    for (std::size_t k = 0; k < r.seq; ++k) {
      const std::size_t t = backward ? r.seq - 1 - k : k;
      const TensorRef g = add(direction(xw, t), detail::matmul(ht, rec));
      TensorRef i = gate(g, 0, h), o = gate(g, 1, h), f = gate(g, 2, h);
      if (p_i) {
        i = add(i, mul(ct, *p_i));
        f = add(f, mul(ct, *p_f));
      }
      i = detail::sigmoid(i);
      f = detail::sigmoid(f);
      const TensorRef c_next = add(mul(f, ct), mul(i, tanh(gate(g, 3, h))));
      if (p_o) o = add(o, mul(c_next, *p_o));
      const TensorRef h_next = mul(detail::sigmoid(o), tanh(c_next));
      ct = r.keep(t, ct, c_next);
      ht = r.keep(t, ht, h_next);
      ys[t] = r.output(t, h_next);
    }
    steps[d] = std::move(ys);
    last_h.push_back(ht);
    last_c.push_back(ct);
  }
  return outputs(r, steps, last_h, last_c);
}

std::vector<TensorRef> import_gru(const NodeArgs& a) {
  // Gates in ONNX's order: update (z), reset (r), hidden (h).
  const Recurrence r = recurrence(a, 3, {"Sigmoid", "Tanh"});
  const bool before_reset = a.attr_int("linear_before_reset", 0) != 0;
  const std::size_t h = r.hidden;
  std::vector<std::vector<TensorRef>> steps(r.directions);
  std::vector<TensorRef> last_h;
  for (std::size_t d = 0; d < r.directions; ++d) {
    const TensorRef w = direction(a.in(1), d), rec = detail::swap_dims(direction(a.in(2), d), 0, 1);
    std::optional<TensorRef> w_bias, r_bias;
    if (a.has(3)) {  // [Wb, Rb], both [3h]
      const TensorRef b = direction(a.in(3), d);
      w_bias = detail::narrow(b, 0, 0, 3 * h);
      r_bias = detail::narrow(b, 0, static_cast<std::int64_t>(3 * h), 3 * h);
    }
    const TensorRef xw = input_projection(r, w, w_bias);
    TensorRef ht = initial_state(a, r, 5, d, r.x);
    const bool backward = r.reverse_only || d == 1;
    std::vector<TensorRef> ys(r.seq);
    for (std::size_t k = 0; k < r.seq; ++k) {
      const std::size_t t = backward ? r.seq - 1 - k : k;
      const TensorRef x_t = direction(xw, t);
      TensorRef hr = detail::matmul(ht, rec);  // [batch, 3h]: H . R^T
      if (r_bias) hr = add(hr, detail::unsqueeze_dim(*r_bias, 0));
      const TensorRef z = detail::sigmoid(add(gate(x_t, 0, h), gate(hr, 0, h)));
      const TensorRef reset = detail::sigmoid(add(gate(x_t, 1, h), gate(hr, 1, h)));
      TensorRef candidate;
      if (before_reset) {
        // h~ = tanh(Xh + r * (H . Rh^T + Rbh)), what PyTorch's GRU computes.
        candidate = tanh(add(gate(x_t, 2, h), mul(reset, gate(hr, 2, h))));
      } else {
        // h~ = tanh(Xh + (r * H) . Rh^T + Rbh)
        TensorRef rh = detail::matmul(mul(reset, ht), gate(rec, 2, h));
        if (r_bias) rh = add(rh, detail::unsqueeze_dim(gate(*r_bias, 2, h), 0));
        candidate = tanh(add(gate(x_t, 2, h), rh));
      }
      // H = (1 - z) * h~ + z * H
      const TensorRef keep = detail::scalar_binary(ir::BinaryOp::Sub, 1.0, z);
      const TensorRef h_next = add(mul(keep, candidate), mul(z, ht));
      ht = r.keep(t, ht, h_next);
      ys[t] = r.output(t, h_next);
    }
    steps[d] = std::move(ys);
    last_h.push_back(ht);
  }
  return outputs(r, steps, last_h, {});
}

}  // namespace burn::onnx
