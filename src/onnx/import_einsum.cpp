// ONNX's Einsum as burn tensor operations: each operand's indices that no
// other operand and not the output name are summed first; the operands are
// then multiplied pairwise, left to right, each pair as one batched matmul
// (the shared indices still needed later are the batch, the shared ones
// that are not are contracted); the result is permuted into the output's
// order. Ellipses broadcast numpy's way (right-aligned, size 1 against n).
// Refused with the node named: an index repeated within one operand (a
// diagonal, as "ii->i"), and output indices no operand has.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <burn/detail/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_ops.hpp"

namespace burn::onnx {

using detail::TensorRef;
using I64s = std::vector<std::int64_t>;

namespace {

// Index labels: letters are their own character code; the ellipsis's dims
// are kEllipsis + their position counted from the right, so that operands
// with ellipses of different lengths line up as numpy broadcasts them.
constexpr int kEllipsis = 1000;
using Labels = std::vector<int>;

/// One operand (or the result so far) with a label per dim.
struct Term {
  TensorRef tensor;
  Labels labels;
};

bool contains(const Labels& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

std::string label_name(int label) {
  return label >= kEllipsis ? fmt::format("...[{}]", label - kEllipsis) : std::string(1, static_cast<char>(label));
}

/// The labels of one side of the equation for an operand of `rank` dims
/// (rank < 0: the output, whose ellipsis stands for `ellipsis_dims` dims).
Labels parse_term(const NodeArgs& a, const std::string& term, std::ptrdiff_t rank, std::size_t ellipsis_dims) {
  std::size_t letters = 0;
  bool ellipsis = false;
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      ++letters;
    } else if (term.compare(i, 3, "...") == 0 && !ellipsis) {
      ellipsis = true;
      i += 2;
    } else {
      a.fail(fmt::format("equation term '{}' has '{}' where a letter or one '...' belongs", term, term[i]));
    }
  }
  std::size_t covered = ellipsis_dims;
  if (rank >= 0) {
    if (static_cast<std::size_t>(rank) < letters || (!ellipsis && static_cast<std::size_t>(rank) != letters))
      a.fail(fmt::format("equation term '{}' names {} dims for an input of rank {}", term, letters, rank));
    covered = static_cast<std::size_t>(rank) - letters;
  }
  Labels out;
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      for (std::size_t d = covered; d-- > 0;) out.push_back(kEllipsis + static_cast<int>(d));
      i += 2;
    } else {
      out.push_back(term[i]);
    }
  }
  return out;
}

/// Sums the dims of `t` whose labels `keep` rejects, dropping them.
template <class Keep>
Term sum_out(Term t, Keep keep) {
  Labels labels;
  I64s shape;
  bool summed = false;
  for (std::size_t d = 0; d < t.labels.size(); ++d) {
    if (keep(t.labels[d])) {
      labels.push_back(t.labels[d]);
      shape.push_back(static_cast<std::int64_t>(t.tensor->spec.shape[d]));
    } else {
      t.tensor = detail::reduce_dim(ir::ReduceOp::Sum, t.tensor, static_cast<std::int64_t>(d));
      summed = true;
    }
  }
  if (summed) t.tensor = detail::reshape(t.tensor, shape);
  t.labels = std::move(labels);
  return t;
}

/// `t` with its dims in the order of `order` (each label of t once).
TensorRef arrange(const Term& t, const Labels& order) {
  I64s perm;
  for (int label : order)
    perm.push_back(std::distance(t.labels.begin(), std::find(t.labels.begin(), t.labels.end(), label)));
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<std::int64_t>(i);
  return identity ? t.tensor : detail::permute(t.tensor, perm);
}

std::size_t dim_of(const Term& t, int label) {
  const auto d = std::distance(t.labels.begin(), std::find(t.labels.begin(), t.labels.end(), label));
  return t.tensor->spec.shape[static_cast<std::size_t>(d)];
}

/// `t` with the dim of `label` broadcast from 1 to n.
Term broadcast(Term t, int label, std::size_t n) {
  I64s shape;
  for (int l : t.labels) shape.push_back(static_cast<std::int64_t>(l == label ? n : dim_of(t, l)));
  t.tensor = detail::expand(t.tensor, shape);
  return t;
}

/// The product of x and y, keeping the labels `later` still needs.
Term contract(const Term& x, const Term& y, const Labels& later) {
  const auto kept = [&](int label) { return contains(later, label); };
  // Indices only one side has and nothing later needs are summed on that side.
  Term l = sum_out(x, [&](int label) { return kept(label) || contains(y.labels, label); });
  Term r = sum_out(y, [&](int label) { return kept(label) || contains(l.labels, label); });
  Labels batch, left, right, summed;
  for (int label : l.labels) {
    if (!contains(r.labels, label)) left.push_back(label);
    else if (kept(label)) batch.push_back(label);
    else summed.push_back(label);
  }
  for (int label : r.labels)
    if (!contains(l.labels, label)) right.push_back(label);
  // Shared ellipsis dims of size 1 against n: matmul broadcasts batch dims,
  // a contracted one is broadcast here.
  for (int label : summed) {
    const std::size_t nl = dim_of(l, label), nr = dim_of(r, label);
    if (nl < nr) l = broadcast(std::move(l), label, nr);
    if (nr < nl) r = broadcast(std::move(r), label, nl);
  }
  const auto product = [](const Term& t, const Labels& labels) {
    std::int64_t p = 1;
    for (int label : labels) p *= static_cast<std::int64_t>(dim_of(t, label));
    return p;
  };
  // [batch..., left, summed] x [batch..., summed, right].
  I64s l_shape, r_shape, out_shape;
  for (int label : batch) {
    const std::size_t nl = dim_of(l, label), nr = dim_of(r, label);
    l_shape.push_back(static_cast<std::int64_t>(nl));
    r_shape.push_back(static_cast<std::int64_t>(nr));
    out_shape.push_back(static_cast<std::int64_t>(std::max(nl, nr)));
  }
  Labels l_order = batch, r_order = batch;
  l_order.insert(l_order.end(), left.begin(), left.end());
  l_order.insert(l_order.end(), summed.begin(), summed.end());
  r_order.insert(r_order.end(), summed.begin(), summed.end());
  r_order.insert(r_order.end(), right.begin(), right.end());
  l_shape.push_back(product(l, left));
  l_shape.push_back(product(l, summed));
  r_shape.push_back(product(r, summed));
  r_shape.push_back(product(r, right));
  const TensorRef out =
      detail::matmul(detail::reshape(arrange(l, l_order), l_shape), detail::reshape(arrange(r, r_order), r_shape));
  for (int label : left) out_shape.push_back(static_cast<std::int64_t>(dim_of(l, label)));
  for (int label : right) out_shape.push_back(static_cast<std::int64_t>(dim_of(r, label)));
  Labels labels = batch;
  labels.insert(labels.end(), left.begin(), left.end());
  labels.insert(labels.end(), right.begin(), right.end());
  return {detail::reshape(out, out_shape), std::move(labels)};
}

}  // namespace

std::vector<TensorRef> import_einsum(const NodeArgs& a) {
  std::string equation;
  for (char c : a.attr_string("equation", "")) {
    if (c != ' ') equation += c;
  }
  if (equation.empty()) a.fail("Einsum needs its 'equation' attribute");
  const auto arrow = equation.find("->");
  const std::string inputs = equation.substr(0, arrow);

  std::vector<std::string> terms;
  for (std::size_t start = 0;;) {
    const auto comma = inputs.find(',', start);
    terms.push_back(inputs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != a.num_inputs())
    a.fail(fmt::format("the equation '{}' names {} operands, the node has {} inputs", equation, terms.size(),
                       a.num_inputs()));

  std::vector<Term> operands;
  std::map<int, std::size_t> sizes;  // each label's size, checked to agree across operands
  std::size_t ellipsis_dims = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const TensorRef& x = a.in(i);
    Term t{x, parse_term(a, terms[i], static_cast<std::ptrdiff_t>(x->spec.shape.rank()), 0)};
    for (std::size_t d = 0; d < t.labels.size(); ++d) {
      const int label = t.labels[d];
      if (std::count(t.labels.begin(), t.labels.end(), label) > 1)
        a.fail(fmt::format("index '{}' appears twice in operand {} ('{}'): diagonals are not supported",
                           label_name(label), i, terms[i]));
      if (label >= kEllipsis) ellipsis_dims = std::max(ellipsis_dims, static_cast<std::size_t>(label - kEllipsis) + 1);
      const std::size_t n = x->spec.shape[d];
      auto [it, fresh] = sizes.emplace(label, n);
      if (fresh || it->second == n) continue;
      // Ellipsis dims broadcast (1 against n); a letter has one size everywhere.
      if (label >= kEllipsis && (it->second == 1 || n == 1)) {
        it->second = std::max(it->second, n);
        continue;
      }
      a.fail(
          fmt::format("index '{}' has size {} in operand {} and {} in another", label_name(label), n, i, it->second));
    }
    operands.push_back(std::move(t));
  }

  Labels output;
  if (arrow != std::string::npos) {
    output = parse_term(a, equation.substr(arrow + 2), -1, ellipsis_dims);
    for (int label : output) {
      if (!sizes.contains(label))
        a.fail(fmt::format("output index '{}' is not an index of any operand", label_name(label)));
      if (std::count(output.begin(), output.end(), label) > 1)
        a.fail(fmt::format("output index '{}' appears twice", label_name(label)));
    }
  } else {
    // Implicit output: the ellipsis, then the letters used once, in order.
    for (std::size_t d = ellipsis_dims; d-- > 0;) output.push_back(kEllipsis + static_cast<int>(d));
    std::map<int, int> uses;
    for (const Term& t : operands)
      for (int label : t.labels) ++uses[label];
    for (const auto& [label, count] : uses)
      if (label < kEllipsis && count == 1) output.push_back(label);
  }

  // Left to right, each product keeps what the output and the operands
  // after it still name.
  const auto needed_after = [&](std::size_t i) {
    Labels later = output;
    for (std::size_t j = i + 1; j < operands.size(); ++j)
      later.insert(later.end(), operands[j].labels.begin(), operands[j].labels.end());
    return later;
  };
  Term acc = sum_out(operands[0], [&](int label) { return contains(needed_after(0), label); });
  for (std::size_t i = 1; i < operands.size(); ++i) acc = contract(acc, operands[i], needed_after(i));
  acc = sum_out(acc, [&](int label) { return contains(output, label); });
  return {arrange(acc, output)};
}

}  // namespace burn::onnx
