// Sliding-window geometry of the convolutions and pools, canonicalised to
// three spatial axes (missing leading axes have size 1, kernel 1, stride 1),
// so one loop nest serves 1-D, 2-D and 3-D.
#pragma once

#include <algorithm>
#include <array>
#include <burn/error.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace burn::flex::dnn {

struct Window3 {
  std::array<std::size_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, p{0, 0, 0}, d{1, 1, 1};
  std::size_t in_volume() const { return in[0] * in[1] * in[2]; }
  std::size_t out_volume() const { return out[0] * out[1] * out[2]; }
  std::size_t k_volume() const { return k[0] * k[1] * k[2]; }
};

/// Throws the flex backend's clear error for more than 3 spatial dims.
inline void expect_at_most_3d(std::string_view op, std::size_t n) {
  if (n > 3)
    throw Error(op, "the flex backend supports 1 to 3 spatial dims, got " + std::to_string(n) +
                        "; reshape the input to fold extra dims into the batch");
}

/// in/out: the spatial dims of input and output; k, s, p, d: per axis (an
/// empty span leaves the default). Throws for more than 3 spatial dims.
inline Window3 make_window(std::string_view op, std::span<const std::size_t> in, std::span<const std::size_t> out,
                           std::span<const std::size_t> k, std::span<const std::size_t> s,
                           std::span<const std::size_t> p, std::span<const std::size_t> d) {
  const std::size_t n = in.size();
  expect_at_most_3d(op, n);
  Window3 w;
  const std::size_t off = 3 - n;
  for (std::size_t i = 0; i < n; ++i) {
    w.in[off + i] = in[i];
    w.out[off + i] = out[i];
    if (!k.empty()) w.k[off + i] = k[i];
    if (!s.empty()) w.s[off + i] = s[i];
    if (!p.empty()) w.p[off + i] = p[i];
    if (!d.empty()) w.d[off + i] = d[i];
  }
  return w;
}

/// The output positions [lo, hi) of one axis whose input position
/// first + o * stride lies inside [0, in).
inline std::pair<std::size_t, std::size_t> valid_range(std::int64_t first, std::size_t stride, std::size_t in,
                                                       std::size_t out) {
  const auto s = static_cast<std::int64_t>(stride);
  const auto n = static_cast<std::int64_t>(in);
  const std::int64_t lo = first >= 0 ? 0 : (-first + s - 1) / s;
  const std::int64_t hi = first < n ? (n - 1 - first) / s + 1 : 0;
  const auto clip = [&](std::int64_t v) {
    return static_cast<std::size_t>(std::clamp<std::int64_t>(v, 0, static_cast<std::int64_t>(out)));
  };
  return {clip(lo), std::max(clip(lo), clip(hi))};
}

/// For every kernel tap and every output row (od, oh) the tap reaches inside
/// the input, calls f(tap, od, oh, id, ih, ow_begin, ow_end, iw_first): the
/// input column of output column ow is iw_first + ow * stride_w.
template <class F>
void for_each_tap(const Window3& w, F&& f) {
  std::size_t tap = 0;
  for (std::size_t kd = 0; kd < w.k[0]; ++kd)
    for (std::size_t kh = 0; kh < w.k[1]; ++kh)
      for (std::size_t kw = 0; kw < w.k[2]; ++kw, ++tap) {
        const auto first = [&](std::size_t a, std::size_t k) {
          return static_cast<std::int64_t>(k * w.d[a]) - static_cast<std::int64_t>(w.p[a]);
        };
        const std::int64_t d0 = first(0, kd), h0 = first(1, kh), w0 = first(2, kw);
        const auto [od_lo, od_hi] = valid_range(d0, w.s[0], w.in[0], w.out[0]);
        const auto [oh_lo, oh_hi] = valid_range(h0, w.s[1], w.in[1], w.out[1]);
        const auto [ow_lo, ow_hi] = valid_range(w0, w.s[2], w.in[2], w.out[2]);
        if (ow_lo >= ow_hi) continue;
        for (std::size_t od = od_lo; od < od_hi; ++od)
          for (std::size_t oh = oh_lo; oh < oh_hi; ++oh)
            f(tap, od, oh, static_cast<std::size_t>(d0 + static_cast<std::int64_t>(od * w.s[0])),
              static_cast<std::size_t>(h0 + static_cast<std::int64_t>(oh * w.s[1])), ow_lo, ow_hi, w0);
      }
}

/// Per axis and output position: the first input position inside the input
/// and the end of the window's reach (positions first, first + d, ... < end).
struct AxisWindows {
  std::vector<std::size_t> first, end;
};

inline AxisWindows axis_windows(const Window3& w, std::size_t a) {
  AxisWindows r;
  for (std::size_t o = 0; o < w.out[a]; ++o) {
    auto start = static_cast<std::int64_t>(o * w.s[a]) - static_cast<std::int64_t>(w.p[a]);
    const auto stop =
        std::min(start + static_cast<std::int64_t>((w.k[a] - 1) * w.d[a] + 1), static_cast<std::int64_t>(w.in[a]));
    while (start < 0) start += static_cast<std::int64_t>(w.d[a]);
    r.first.push_back(static_cast<std::size_t>(start));
    r.end.push_back(static_cast<std::size_t>(std::max(stop, start)));
  }
  return r;
}

}  // namespace burn::flex::dnn
