// Module ops in 1, 2 and 3 spatial dims: convolution, transposed
// convolution, the convolution weight gradient, max/avg/adaptive pooling and
// every interpolation mode, with strides, padding, dilation, groups, ceil
// mode, non-contiguous operands and empty batches; layer norm.
#include "harness.hpp"

namespace burn::differential {
namespace {

using Dims = std::vector<std::size_t>;

struct Operand {
  Shape shape;
  View view;
};
std::string label(const Operand& o) { return layout_label(o.shape, o.view); }

const Dist kFloat = Dist::range(-2, 2);
Dist values_for(DType dt) { return is_float(dt) ? kFloat : Dist::range(-5, 5); }

/// The output size of a convolution along one axis.
std::size_t conv_size(std::size_t in, std::size_t k, std::size_t s, std::size_t p, std::size_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

struct ConvCase {
  Operand x, w;
  Dims stride, padding, dilation;
  std::size_t groups;
  bool bias;
};

std::vector<ConvCase> conv_geometries(std::size_t n) {
  if (n == 1)
    return {{{{2, 4, 9}, View::Contiguous}, {{6, 4, 3}, View::Contiguous}, {1}, {1}, {1}, 1, true},
            {{{2, 4, 9}, View::Permuted}, {{6, 2, 3}, View::Strided}, {2}, {0}, {2}, 2, false},
            {{{1, 3, 5}, View::Contiguous}, {{3, 1, 1}, View::Flipped}, {1}, {0}, {1}, 3, true},  // depthwise
            {{{0, 4, 9}, View::Contiguous}, {{6, 4, 3}, View::Contiguous}, {1}, {1}, {1}, 1, true}};
  if (n == 2)
    return {{{{2, 4, 7, 8}, View::Contiguous}, {{6, 4, 3, 3}, View::Contiguous}, {1, 1}, {1, 1}, {1, 1}, 1, true},
            {{{2, 4, 7, 8}, View::Permuted}, {{6, 2, 3, 3}, View::Contiguous}, {2, 1}, {0, 2}, {2, 1}, 2, false},
            {{{1, 3, 9, 9}, View::Strided}, {{4, 3, 1, 1}, View::Expanded}, {3, 3}, {0, 0}, {1, 1}, 1, true},
            {{{0, 4, 5, 5}, View::Contiguous}, {{2, 4, 3, 3}, View::Contiguous}, {1, 1}, {0, 0}, {1, 1}, 1, false},
            // Large enough for the blocked (oneDNN) paths and several threads.
            {{{2, 8, 40, 40}, View::Contiguous}, {{16, 8, 3, 3}, View::Contiguous}, {1, 1}, {1, 1}, {1, 1}, 1, true}};
  return {
      {{{1, 2, 4, 5, 5}, View::Contiguous},
       {{3, 2, 2, 3, 3}, View::Contiguous},
       {1, 2, 1},
       {1, 0, 1},
       {1, 1, 2},
       1,
       true},
      {{{2, 4, 3, 4, 4}, View::Flipped}, {{4, 2, 1, 2, 2}, View::Permuted}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 2, false},
      {{{0, 2, 3, 3, 3}, View::Contiguous},
       {{2, 2, 2, 2, 2}, View::Contiguous},
       {1, 1, 1},
       {0, 0, 0},
       {1, 1, 1},
       1,
       true}};
}

CaseMaker conv_cases(std::size_t n) {
  return [n](DType dt, Rng& rng) {
    std::vector<Case> out;
    for (const auto& g : conv_geometries(n)) {
      Case c{label(g.x) + " * " + label(g.w) + " groups " + std::to_string(g.groups),
             ir::Conv{g.stride, g.padding, g.dilation, g.groups, g.bias},
             {random_input(g.x.shape, dt, kFloat, g.x.view, rng), random_input(g.w.shape, dt, kFloat, g.w.view, rng)}};
      if (g.bias) c.inputs.push_back(random_input({g.w.shape[0]}, dt, kFloat, View::Contiguous, rng));
      out.push_back(std::move(c));
    }
    return out;
  };
}

/// The weight gradient of each forward geometry: grad has the conv's output shape.
CaseMaker conv_weight_grad_cases(std::size_t n) {
  return [n](DType dt, Rng& rng) {
    std::vector<Case> out;
    for (const auto& g : conv_geometries(n)) {
      Dims kernel(g.w.shape.dims().begin() + 2, g.w.shape.dims().end());
      std::vector<std::size_t> grad{g.x.shape[0], g.w.shape[0]};
      for (std::size_t i = 0; i < n; ++i)
        grad.push_back(conv_size(g.x.shape[i + 2], kernel[i], g.stride[i], g.padding[i], g.dilation[i]));
      const Operand gr{Shape(grad), g.w.view};
      out.push_back(
          {label(g.x) + " with grad " + label(gr) + " groups " + std::to_string(g.groups),
           ir::ConvWeightGrad{kernel, g.stride, g.padding, g.dilation, g.groups},
           {random_input(g.x.shape, dt, kFloat, g.x.view, rng), random_input(gr.shape, dt, kFloat, gr.view, rng)}});
    }
    return out;
  };
}

struct ConvTransposeCase {
  Operand x, w;
  Dims stride, padding, padding_out, dilation;
  std::size_t groups;
  bool bias;
};

std::vector<ConvTransposeCase> conv_transpose_geometries(std::size_t n) {
  if (n == 1)
    return {{{{2, 4, 5}, View::Contiguous}, {{4, 3, 3}, View::Contiguous}, {2}, {1}, {1}, {1}, 1, true},
            {{{2, 4, 6}, View::Permuted}, {{4, 2, 3}, View::Strided}, {1}, {0}, {0}, {2}, 2, false},
            {{{0, 4, 5}, View::Contiguous}, {{4, 3, 3}, View::Contiguous}, {1}, {0}, {0}, {1}, 1, true}};
  if (n == 2)
    return {
        {{{2, 4, 5, 6}, View::Contiguous}, {{4, 3, 3, 3}, View::Contiguous}, {2, 2}, {1, 1}, {1, 0}, {1, 1}, 1, true},
        {{{1, 4, 4, 4}, View::Permuted}, {{4, 1, 2, 3}, View::Flipped}, {1, 2}, {0, 1}, {0, 1}, {2, 1}, 4, false},
        {{{0, 4, 5, 6}, View::Contiguous}, {{4, 3, 3, 3}, View::Contiguous}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, 1, true}};
  return {{{{1, 2, 3, 4, 4}, View::Contiguous},
           {{2, 3, 2, 2, 3}, View::Contiguous},
           {1, 2, 2},
           {0, 1, 1},
           {0, 1, 0},
           {1, 1, 1},
           1,
           true},
          {{{1, 4, 2, 3, 3}, View::Flipped},
           {{4, 1, 2, 2, 2}, View::Strided},
           {1, 1, 1},
           {0, 0, 0},
           {0, 0, 0},
           {1, 1, 1},
           2,
           false},
          {{{0, 2, 3, 3, 3}, View::Contiguous},
           {{2, 2, 2, 2, 2}, View::Contiguous},
           {2, 2, 2},
           {0, 0, 0},
           {1, 1, 1},
           {1, 1, 1},
           1,
           false}};
}

CaseMaker conv_transpose_cases(std::size_t n) {
  return [n](DType dt, Rng& rng) {
    std::vector<Case> out;
    for (const auto& g : conv_transpose_geometries(n)) {
      Case c{label(g.x) + " * " + label(g.w) + " groups " + std::to_string(g.groups),
             ir::ConvTranspose{g.stride, g.padding, g.padding_out, g.dilation, g.groups, g.bias},
             {random_input(g.x.shape, dt, kFloat, g.x.view, rng), random_input(g.w.shape, dt, kFloat, g.w.view, rng)}};
      if (g.bias) c.inputs.push_back(random_input({g.w.shape[1] * g.groups}, dt, kFloat, View::Contiguous, rng));
      out.push_back(std::move(c));
    }
    return out;
  };
}

struct PoolCase {
  Operand x;
  Dims kernel, stride, padding, dilation;
  bool ceil_mode;
  bool flag;  // max pool: with indices; avg pool: count_include_pad
  DType index_dtype;
};

PoolCase pool(Shape x, View view, Dims kernel, Dims stride, Dims padding, Dims dilation, bool ceil_mode, bool flag,
              DType index_dtype = DType::I64) {
  return {{std::move(x), view},
          std::move(kernel),
          std::move(stride),
          std::move(padding),
          std::move(dilation),
          ceil_mode,
          flag,
          index_dtype};
}

std::vector<PoolCase> pool_geometries(std::size_t n) {
  std::vector<PoolCase> g;
  if (n == 1) {
    g.push_back(pool({2, 3, 9}, View::Contiguous, {3}, {2}, {1}, {1}, false, true));
    g.push_back(pool({2, 3, 10}, View::Permuted, {4}, {3}, {2}, {1}, true, false));
    g.push_back(pool({2, 3, 10}, View::Strided, {2}, {2}, {0}, {2}, true, true, DType::I32));
    g.push_back(pool({0, 3, 9}, View::Contiguous, {3}, {1}, {0}, {1}, false, true));
  } else if (n == 2) {
    g.push_back(pool({2, 3, 7, 8}, View::Contiguous, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true));
    g.push_back(pool({2, 3, 7, 8}, View::Strided, {2, 3}, {1, 2}, {0, 1}, {2, 1}, true, true, DType::I32));
    g.push_back(pool({1, 2, 5, 5}, View::Expanded, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true, false));  // partial window
    g.push_back(pool({2, 3, 6, 7}, View::Permuted, {4, 3}, {3, 2}, {2, 1}, {1, 1}, true, true));
    g.push_back(pool({0, 3, 5, 5}, View::Contiguous, {3, 3}, {1, 1}, {0, 0}, {1, 1}, false, true));
    g.push_back(pool({2, 16, 64, 64}, View::Permuted, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, true));
  } else {
    g.push_back(pool({1, 2, 5, 6, 6}, View::Contiguous, {2, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, true));
    g.push_back(pool({1, 2, 4, 5, 5}, View::Flipped, {2, 2, 2}, {1, 2, 2}, {0, 0, 0}, {1, 1, 1}, true, false));
    g.push_back(pool({0, 2, 3, 3, 3}, View::Contiguous, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, false, true));
  }
  return g;
}

CaseMaker max_pool_cases(std::size_t n) {
  return [n](DType dt, Rng& rng) {
    std::vector<Case> out;
    for (const auto& g : pool_geometries(n)) {
      // Dilation is a max-pool parameter only; avg pool runs the same windows undilated.
      out.push_back({label(g.x) + (g.flag ? " with indices" : "") + (g.ceil_mode ? " ceil" : ""),
                     ir::MaxPool{g.kernel, g.stride, g.padding, g.dilation, g.ceil_mode, g.flag, g.index_dtype},
                     {random_input(g.x.shape, dt, values_for(dt), g.x.view, rng)}});
    }
    return out;
  };
}

CaseMaker avg_pool_cases(std::size_t n) {
  return [n](DType dt, Rng& rng) {
    std::vector<Case> out;
    for (const auto& g : pool_geometries(n))
      out.push_back({label(g.x) + (g.flag ? " count pad" : " skip pad") + (g.ceil_mode ? " ceil" : ""),
                     ir::AvgPool{g.kernel, g.stride, g.padding, g.flag, g.ceil_mode},
                     {random_input(g.x.shape, dt, kFloat, g.x.view, rng)}});
    return out;
  };
}

CaseMaker adaptive_cases(std::size_t n) {
  std::vector<std::pair<Operand, Dims>> geometries;
  if (n == 1)
    geometries = {{{{2, 3, 7}, View::Contiguous}, {3}},
                  {{{2, 3, 5}, View::Permuted}, {8}},
                  {{{0, 3, 7}, View::Contiguous}, {2}}};
  else if (n == 2)
    geometries = {{{{2, 3, 7, 9}, View::Contiguous}, {3, 4}},
                  {{{2, 3, 5, 6}, View::Strided}, {5, 6}},
                  {{{1, 2, 4, 4}, View::Expanded}, {6, 3}},
                  {{{0, 3, 4, 4}, View::Contiguous}, {2, 2}},
                  {{{2, 16, 40, 40}, View::Contiguous}, {7, 7}}};
  else
    geometries = {{{{1, 2, 5, 6, 7}, View::Contiguous}, {2, 3, 4}},
                  {{{1, 2, 3, 4, 5}, View::Flipped}, {3, 5, 2}},
                  {{{0, 2, 3, 3, 3}, View::Contiguous}, {1, 2, 3}}};
  return [geometries](DType dt, Rng& rng) {
    std::vector<Case> out;
    for (const auto& [x, size] : geometries)
      out.push_back({label(x) + " to " + Shape(size).to_string(),
                     ir::AdaptiveAvgPool{size},
                     {random_input(x.shape, dt, kFloat, x.view, rng)}});
    return out;
  };
}

CaseMaker interpolate_cases(ir::InterpolateMode mode) {
  return [mode](DType dt, Rng& rng) {
    const std::vector<std::pair<Operand, Dims>> geometries{
        {{{2, 3, 5, 6}, View::Contiguous}, {7, 9}}, {{{2, 3, 8, 9}, View::Permuted}, {3, 4}},
        {{{1, 2, 4, 4}, View::Strided}, {4, 4}},    {{{1, 2, 5, 1}, View::Expanded}, {3, 5}},
        {{{0, 2, 4, 4}, View::Contiguous}, {6, 6}}, {{{1, 1, 1, 1}, View::Contiguous}, {3, 3}},
        {{{1, 1, 3, 3}, View::Flipped}, {1, 1}},    {{{1, 8, 48, 48}, View::Contiguous}, {97, 95}}};
    std::vector<Case> out;
    // Nearest has no align_corners variant in PyTorch; the others run both.
    for (bool align : {false, true}) {
      if (align && mode == ir::InterpolateMode::Nearest) continue;
      for (const auto& [x, size] : geometries)
        out.push_back({label(x) + " to " + Shape(size).to_string() + (align ? " align_corners" : ""),
                       ir::Interpolate{size, mode, align},
                       {random_input(x.shape, dt, kFloat, x.view, rng)}});
    }
    return out;
  };
}

// Rows shorter and longer than a vector and than a pairwise-sum leaf, one
// feature, views of every kind (the weight and bias included), an empty
// batch, a large epsilon.
CaseMaker layer_norm_cases() {
  return [](DType dt, Rng& rng) {
    struct Geometry {
      Operand x;
      View params;
      double epsilon;
    };
    const std::vector<Geometry> geometries{
        {{{4, 37}, View::Contiguous}, View::Contiguous, 1e-5},   {{{3, 5, 64}, View::Permuted}, View::Strided, 1e-5},
        {{{2, 300}, View::Strided}, View::Flipped, 1e-5},        {{{6, 1}, View::Contiguous}, View::Contiguous, 1e-5},
        {{{2, 3, 8}, View::Expanded}, View::Contiguous, 0.1},    {{{0, 8}, View::Contiguous}, View::Contiguous, 1e-5},
        {{{64, 1024}, View::Contiguous}, View::Contiguous, 1e-5}};
    std::vector<Case> out;
    for (const auto& g : geometries) {
      const Shape row{g.x.shape.dims().back()};
      out.push_back({label(g.x) + " eps " + std::to_string(g.epsilon),
                     ir::LayerNorm{g.epsilon},
                     {random_input(g.x.shape, dt, kFloat, g.x.view, rng),
                      random_input(row, dt, Dist::range(0.5, 1.5), g.params, rng),
                      random_input(row, dt, kFloat, g.params, rng)}});
    }
    return out;
  };
}

// Batch norm over lines shorter and longer than a vector and a
// pairwise-sum leaf, one value per line (rank 2: a channel is one strided
// line), views of every kind (the weight and bias included), a large
// epsilon, an empty batch (NaN statistics). Outputs y and the channels' mean
// and variance.
CaseMaker batch_norm_cases() {
  return [](DType dt, Rng& rng) {
    struct Geometry {
      Operand x;
      View params;
      double epsilon;
    };
    const std::vector<Geometry> geometries{{{{4, 5, 7}, View::Contiguous}, View::Contiguous, 1e-5},
                                           {{{3, 6, 4, 5}, View::Permuted}, View::Strided, 1e-5},
                                           {{{9, 3}, View::Strided}, View::Flipped, 1e-5},
                                           {{{2, 3, 8}, View::Expanded}, View::Contiguous, 0.1},
                                           {{{16, 8, 20, 20}, View::Contiguous}, View::Contiguous, 1e-5},
                                           {{{0, 3, 4}, View::Contiguous}, View::Contiguous, 1e-5}};
    std::vector<Case> out;
    for (const auto& g : geometries) {
      const Shape channels{g.x.shape.dims()[1]};
      out.push_back({label(g.x) + " eps " + std::to_string(g.epsilon),
                     ir::BatchNorm{g.epsilon},
                     {random_input(g.x.shape, dt, kFloat, g.x.view, rng),
                      random_input(channels, dt, Dist::range(0.5, 1.5), g.params, rng),
                      random_input(channels, dt, kFloat, g.params, rng)}});
    }
    return out;
  };
}

// Softmax rows of one element, shorter and longer than a vector, a
// pairwise-sum leaf and a thread's grain, views of every kind, an empty
// batch; logits wide enough that exp without the max shift would overflow
// f16. Gelu on the same geometries, across both tails.
CaseMaker activation_cases(ir::Op op, double spread) {
  return [op = std::move(op), spread](DType dt, Rng& rng) {
    const std::vector<Operand> geometries{{{4, 37}, View::Contiguous}, {{3, 5, 64}, View::Permuted},
                                          {{2, 300}, View::Strided},   {{6, 1}, View::Contiguous},
                                          {{2, 3, 8}, View::Expanded}, {{0, 8}, View::Contiguous},
                                          {{2, 3001}, View::Flipped},  {{64, 1024}, View::Contiguous}};
    std::vector<Case> out;
    for (const auto& x : geometries)
      out.push_back({label(x), op, {random_input(x.shape, dt, Dist::range(-spread, spread), x.view, rng)}});
    return out;
  };
}

}  // namespace

std::vector<Entry> module_entries() {
  const auto& F = float_dtypes();
  std::vector<Entry> out;
  for (std::size_t n = 1; n <= 3; ++n) {
    const std::string d = std::to_string(n) + "d";
    out.push_back({"conv" + d, ir::Conv{}, F, conv_cases(n)});
    out.push_back({"conv_transpose" + d, ir::ConvTranspose{}, F, conv_transpose_cases(n)});
    out.push_back({"conv_weight_grad" + d, ir::ConvWeightGrad{}, F, conv_weight_grad_cases(n)});
    out.push_back({"max_pool" + d, ir::MaxPool{}, numeric_dtypes(), max_pool_cases(n)});
    out.push_back({"avg_pool" + d, ir::AvgPool{}, F, avg_pool_cases(n)});
    out.push_back({"adaptive_avg_pool" + d, ir::AdaptiveAvgPool{}, F, adaptive_cases(n)});
  }
  using ir::InterpolateMode;
  out.push_back({"interpolate_nearest", ir::Interpolate{{}, InterpolateMode::Nearest, false}, F,
                 interpolate_cases(InterpolateMode::Nearest)});
  out.push_back({"interpolate_bilinear", ir::Interpolate{{}, InterpolateMode::Bilinear, false}, F,
                 interpolate_cases(InterpolateMode::Bilinear)});
  out.push_back({"interpolate_bicubic", ir::Interpolate{{}, InterpolateMode::Bicubic, false}, F,
                 interpolate_cases(InterpolateMode::Bicubic)});
  out.push_back({"layer_norm", ir::LayerNorm{}, F, layer_norm_cases()});
  out.push_back({"batch_norm", ir::BatchNorm{}, F, batch_norm_cases()});
  out.push_back({"softmax", ir::Softmax{}, F, activation_cases(ir::Softmax{}, 30.0)});
  out.push_back({"log_softmax", ir::Softmax{true}, F, activation_cases(ir::Softmax{true}, 30.0)});
  out.push_back({"gelu", ir::Gelu{}, F, activation_cases(ir::Gelu{}, 6.0)});
  out.push_back({"gelu_tanh", ir::Gelu{true}, F, activation_cases(ir::Gelu{true}, 6.0)});
  return out;
}

}  // namespace burn::differential
