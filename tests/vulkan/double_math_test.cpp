// The software f64 transcendentals (shaders/double_math.glsl) against the C
// library (through the reference device) over their whole ranges, to within
// a few ulps, with the C results at NaN, infinities, zeros and overflow.
#include "vk_test.hpp"

#include <cmath>
#include <limits>
#include <random>

namespace {

using burn::DType;
using burn::Shape;
using namespace burn::vktest;
namespace ir = burn::ir;
namespace detail = burn::detail;
using ir::BinaryOp;
using ir::UnaryOp;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// n values spread over [lo, hi]: uniform, or log-uniform in magnitude when `log_scale` (same sign as lo).
std::vector<double> spread(double lo, double hi, std::size_t n, bool log_scale = false, std::uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v)
    x = log_scale
            ? std::copysign(
                  std::exp(std::log(std::abs(lo)) + u(rng) * (std::log(std::abs(hi)) - std::log(std::abs(lo)))), lo)
            : lo + u(rng) * (hi - lo);
  return v;
}

/// vulkan:0 agrees with the reference within `rel` (relative to the values) or `abs`.
void close(const std::string& what, const std::function<TensorRef(const std::vector<TensorRef>&)>& op,
           const std::vector<std::vector<double>>& inputs, double rel = 2e-15, double abs = 1e-300) {
  SCOPED_TRACE(what);
  std::vector<TensorRef> host, dev;
  for (const auto& v : inputs) {
    host.push_back(values(v, Shape{v.size()}, DType::F64, ref()));
    dev.push_back(values(v, Shape{v.size()}, DType::F64, vk()));
  }
  try {
    burn::detail::to_data(op(dev)).assert_approx_eq(burn::detail::to_data(op(host)), burn::Tolerance{rel, abs});
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

const std::vector<double> kSpecial = {kNan, kInf, -kInf, 0.0, -0.0, 1e-300, -1e-300, 5e-324, 1.0, -1.0, 0.5, -0.5};

TEST(VulkanDoubleMath, ExpLogFamily) {
  auto un = [](UnaryOp op) { return [op](const auto& in) { return burn::detail::unary(op, in[0]); }; };
  close("exp", un(UnaryOp::Exp), {spread(-745, 709.7, 4000)});
  close("exp near 0", un(UnaryOp::Exp), {spread(-1e-3, 1e-3, 500)});
  close("exp edges", un(UnaryOp::Exp), {{709.78, 709.79, -745.2, -745.1, -708.5, 1e-17, -1e-17}}, 2e-15, 1e-320);
  close("log", un(UnaryOp::Log), {spread(1e-300, 1e300, 4000, true)});
  close("log near 1", un(UnaryOp::Log), {spread(0.9, 1.1, 1000)});
  close("log1p", un(UnaryOp::Log1p), {spread(-0.999, 1e6, 3000)});
  close("log1p tiny", un(UnaryOp::Log1p), {spread(1e-20, 1e-3, 1000, true)});
  close("expm1", un(UnaryOp::Expm1), {spread(-50, 700, 3000)});
  close("expm1 small", un(UnaryOp::Expm1), {spread(-0.5, 0.5, 2000)});
  for (UnaryOp op : {UnaryOp::Exp, UnaryOp::Log, UnaryOp::Log1p, UnaryOp::Expm1})
    close(std::string(ir::unary_name(op)) + " special", un(op), {kSpecial}, 2e-15, 1e-320);
}

TEST(VulkanDoubleMath, Trigonometric) {
  auto un = [](UnaryOp op) { return [op](const auto& in) { return burn::detail::unary(op, in[0]); }; };
  for (UnaryOp op : {UnaryOp::Sin, UnaryOp::Cos, UnaryOp::Tan}) {
    const std::string name(ir::unary_name(op));
    // Near zeros of sin and cos the error is absolute: a few ulps of the argument's reduction.
    close(name, un(op), {spread(-10, 10, 3000)}, 2e-15, 4e-16);
    close(name + " large", un(op), {spread(-1e5, 1e5, 3000)}, 2e-15, 1e-13);
    close(name + " tiny", un(op), {spread(1e-300, 1e-5, 500, true)});
    close(name + " special", un(op), {kSpecial}, 2e-15, 1e-320);
  }
  close("asin", un(UnaryOp::Asin), {spread(-1, 1, 3000)});
  close("acos", un(UnaryOp::Acos), {spread(-1, 1, 3000)});
  close("atan", un(UnaryOp::Atan), {spread(-1e10, 1e10, 3000)});
  close("atan near 0", un(UnaryOp::Atan), {spread(-2, 2, 3000)});
  for (UnaryOp op : {UnaryOp::Asin, UnaryOp::Acos, UnaryOp::Atan})
    close(std::string(ir::unary_name(op)) + " special", un(op), {kSpecial, {2.0, -1.5, 1e300}}, 2e-15, 1e-320);
}

TEST(VulkanDoubleMath, HyperbolicAndErf) {
  auto un = [](UnaryOp op) { return [op](const auto& in) { return burn::detail::unary(op, in[0]); }; };
  close("sinh", un(UnaryOp::Sinh), {spread(-710, 710, 3000)});
  close("sinh small", un(UnaryOp::Sinh), {spread(-1, 1, 2000)});
  close("cosh", un(UnaryOp::Cosh), {spread(-710, 710, 3000)});
  close("tanh", un(UnaryOp::Tanh), {spread(-25, 25, 3000)});
  close("asinh", un(UnaryOp::Asinh), {spread(-1e300, 1e300, 2000), spread(-2, 2, 2000)});
  close("acosh", un(UnaryOp::Acosh), {spread(1, 1e300, 3000, true)});
  close("atanh", un(UnaryOp::Atanh), {spread(-1, 1, 3000)});
  close("erf", un(UnaryOp::Erf), {spread(-7, 7, 4000)});
  close("erf small", un(UnaryOp::Erf), {spread(1e-300, 1, 1000, true)});
  for (UnaryOp op :
       {UnaryOp::Sinh, UnaryOp::Cosh, UnaryOp::Tanh, UnaryOp::Asinh, UnaryOp::Acosh, UnaryOp::Atanh, UnaryOp::Erf})
    close(std::string(ir::unary_name(op)) + " special", un(op), {kSpecial, {711.0, -711.0, 30.0, 2.0}}, 2e-15, 1e-320);
}

TEST(VulkanDoubleMath, PowAndAtan2) {
  auto bin = [](BinaryOp op) { return [op](const auto& in) { return burn::detail::binary(op, in[0], in[1]); }; };
  // |b log a| up to ~700: exp(b log a) carries that many ulps of the product.
  close("pow", bin(BinaryOp::Pow), {spread(1e-3, 1e3, 3000, true), spread(-100, 100, 3000, false, 9)}, 2e-13);
  close("pow integer exponents", bin(BinaryOp::Pow),
        {spread(-10, 10, 2000),
         [] {
           auto v = spread(-20, 20, 2000, false, 11);
           for (auto& x : v) x = std::round(x);
           return v;
         }()},
        4e-15);
  std::vector<double> a, b;
  for (double x : {kNan, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5})
    for (double y : {kNan, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 2.0, -3.0, 0.5, -0.5}) {
      a.push_back(x);
      b.push_back(y);
    }
  close("pow special", bin(BinaryOp::Pow), {a, b}, 2e-15, 1e-320);
  close("atan2", bin(BinaryOp::Atan2), {spread(-1e3, 1e3, 3000), spread(-1e3, 1e3, 3000, false, 13)});
  close("atan2 special", bin(BinaryOp::Atan2), {a, b}, 2e-15, 1e-320);
}

}  // namespace
