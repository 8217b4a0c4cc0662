// The gradient scaler: scaled losses, unscaled gradients, skipped steps on
// inf/nan, and the scale's schedule.
#include <burn/amp.hpp>
#include <burn/optim/sgd.hpp>

#include <cmath>
#include <limits>
#include <span>
#include <vector>

#if BURN_HAS_CAPTURE
#include <burn/trace.hpp>
#endif

#include "burn_test.hpp"

#if BURN_HAS_AUTODIFF
namespace {

using namespace burn;
using burn::testing::all_devices;

struct Problem {
  Device device;
  nn::Linear model;
  Tensor<2> x;
  Tensor<2> y;

  explicit Problem(const Device& base)
      : device(base.autodiff()), model(make_model(device)), x(inputs(device)), y(targets(device)) {}

  static nn::Linear make_model(const Device& d) {
    d.seed(7);
    return nn::LinearConfig{3, 2}.init(d);
  }
  static Tensor<2> inputs(const Device& d) {
    return Tensor<2>::from_floats({{0.5, -1.0, 2.0}, {1.5, 0.25, -0.5}, {-2.0, 1.0, 0.75}}, d);
  }
  static Tensor<2> targets(const Device& d) { return Tensor<2>::from_floats({{1.0, 0.0}, {0.0, 1.0}, {0.5, 0.5}}, d); }
  Tensor<1> loss(const nn::Linear& m) const { return nn::loss::MseLoss{}.forward(m.forward(x), y); }
  optim::GradientsParams grads(const Tensor<1>& l, const nn::Linear& m) const {
    Gradients g = l.backward();
    return optim::GradientsParams::from_grads(g, m);
  }
};

void expect_same_params(const nn::Linear& a, const nn::Linear& b) {
  a.weight->to_data().assert_approx_eq(b.weight->to_data(), Tolerance::rel_abs(1e-6, 1e-7));
  a.bias.value()->to_data().assert_approx_eq(b.bias.value()->to_data(), Tolerance::rel_abs(1e-6, 1e-7));
}

TEST(GradScaler, ScalesTheLossAndStepsOnTheTrueGradients) {
  for (const auto& base : all_devices()) {
    Problem p(base);
    amp::GradScaler scaler;
    ASSERT_EQ(scaler.get_scale(), 65536.0);
    const auto loss = p.loss(p.model);
    const auto scaled = scaler.scale(loss);
    EXPECT_NEAR(scaled.into_scalar<double>(), loss.into_scalar<double>() * 65536.0,
                1e-5 * std::abs(loss.into_scalar<double>()) * 65536.0)
        << base;

    // The same step without a scaler is the reference.
    auto plain_optim = optim::SgdConfig{}.init();
    const auto reference = plain_optim.step(0.1, p.model, p.grads(p.loss(p.model), p.model));

    auto optim = optim::SgdConfig{}.init();
    auto grads = p.grads(scaler.scale(p.loss(p.model)), p.model);
    auto unscaled = grads;
    EXPECT_TRUE(scaler.unscale(unscaled)) << base;
    const auto expected_grad = p.grads(p.loss(p.model), p.model);
    for (const auto& [id, g] : unscaled.items())
      Tensor<2>(burn::detail::reshape_exact(g, Shape{g->spec.shape.num_elements(), 1}))
          .to_data()
          .assert_approx_eq(Tensor<2>(burn::detail::reshape_exact(expected_grad.get_ref(id).value(),
                                                                  Shape{g->spec.shape.num_elements(), 1}))
                                .to_data(),
                            Tolerance::rel_abs(1e-5, 1e-7));
    const auto stepped = scaler.step(optim, 0.1, p.model, std::move(unscaled));
    scaler.update();
    EXPECT_FALSE(scaler.found_inf());
    EXPECT_EQ(scaler.skipped_steps(), 0u);
    EXPECT_EQ(scaler.get_scale(), 65536.0) << "one good step of 2000 does not grow the scale";
    EXPECT_EQ(scaler.growth_tracker(), 1u);
    expect_same_params(stepped, reference);
  }
}

TEST(GradScaler, SkipsAStepWithAnInjectedInfOrNanAndBacksOff) {
  for (const auto& base : all_devices()) {
    for (double bad : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
      Problem p(base);
      amp::GradScaler scaler(amp::GradScalerConfig{}.with_init_scale(1024.0));
      auto optim = optim::SgdConfig{}.init();
      auto grads = p.grads(scaler.scale(p.loss(p.model)), p.model);
      // One element of the bias gradient becomes inf (or nan), as an f16
      // overflow would make it.
      const auto& bias = p.model.bias.value();
      const Tensor<1> g(grads.get_ref(bias.id()).value());
      const Tensor<1> poisoned = g.slice_fill({Range{0, 1}}, bad);
      grads.insert_ref(bias.id(), poisoned.ref());
      const auto after = scaler.step(optim, 0.1, p.model, std::move(grads));
      EXPECT_TRUE(scaler.found_inf()) << base << " " << bad;
      EXPECT_EQ(scaler.skipped_steps(), 1u);
      expect_same_params(after, p.model);
      EXPECT_EQ(optim.num_states(), 0u) << "a skipped step leaves the optimiser untouched";
      scaler.update();
      EXPECT_EQ(scaler.get_scale(), 512.0);
      EXPECT_EQ(scaler.growth_tracker(), 0u);
    }
  }
}

TEST(GradScaler, GrowsAfterTheIntervalOfGoodSteps) {
  const Device base = all_devices().front();
  Problem p(base);
  amp::GradScaler scaler(amp::GradScalerConfig{}.with_init_scale(8.0).with_growth_interval(2));
  auto optim = optim::SgdConfig{}.init();
  auto model = p.model;
  const double first_loss = p.loss(model).into_scalar<double>();
  const std::vector<double> expected_scale{8.0, 16.0, 16.0, 32.0};
  for (std::size_t i = 0; i < expected_scale.size(); ++i) {
    model = scaler.step(optim, 0.05, std::move(model), p.grads(scaler.scale(p.loss(model)), model));
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), expected_scale[i]) << "after step " << i + 1;
  }
  EXPECT_LT(p.loss(model).into_scalar<double>(), first_loss) << "the steps trained the model";
}

TEST(GradScaler, ScaledF16TrainingUnderAutocastLowersTheLoss) {
  for (const auto& base : all_devices()) {
    if (!base.supports_dtype(DType::F16)) continue;
    Problem p(base);
    amp::GradScaler scaler;
    auto optim = optim::SgdConfig{}.init();
    auto model = p.model;
    const double first = p.loss(model).into_scalar<double>();
    for (int i = 0; i < 20; ++i) {
      optim::GradientsParams grads;
      {
        amp::Autocast autocast(p.device, DType::F16);
        grads = p.grads(scaler.scale(p.loss(model)), model);
      }
      model = scaler.step(optim, 0.05, std::move(model), std::move(grads));
      scaler.update();
    }
    EXPECT_EQ(model.weight->dtype(), DType::F32) << "master weights stay f32 on " << base;
    EXPECT_LT(p.loss(model).into_scalar<double>(), 0.8 * first) << base;
  }
}

TEST(GradScaler, MisuseAndBadSettingsAreClearErrors) {
  const Device base = all_devices().front();
  auto expect_error = [](auto fn, const std::string& needle) {
    try {
      fn();
      ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error([] { amp::GradScaler(amp::GradScalerConfig{}.with_init_scale(0.0)); }, "init_scale");
  expect_error([] { amp::GradScaler(amp::GradScalerConfig{}.with_growth_factor(1.0)); }, "growth_factor");
  expect_error([] { amp::GradScaler(amp::GradScalerConfig{}.with_backoff_factor(1.5)); }, "backoff_factor");
  expect_error([] { amp::GradScaler(amp::GradScalerConfig{}.with_growth_interval(0)); }, "growth_interval");

  Problem p(base);
  amp::GradScaler scaler;
  expect_error([&] { scaler.update(); }, "no gradients were checked");
  auto grads = p.grads(scaler.scale(p.loss(p.model)), p.model);
  scaler.unscale(grads);
  expect_error([&] { scaler.unscale(grads); }, "already unscaled");
  expect_error([&] { scaler.load_state(std::nan(""), 0); }, "finite and positive");
  scaler.load_state(128.0, 5);
  EXPECT_EQ(scaler.get_scale(), 128.0);
  EXPECT_EQ(scaler.growth_tracker(), 5u);

  // Every step diverging drives the scale to zero: an error, not a silent
  // division by zero.
  amp::GradScaler falling(amp::GradScalerConfig{}.with_init_scale(1e-300).with_backoff_factor(1e-30));
  auto bad = p.grads(falling.scale(p.loss(p.model)), p.model);
  const auto& bias = p.model.bias.value();
  bad.insert_ref(bias.id(), Tensor<1>::full(Shape{2}, std::numeric_limits<double>::infinity(), p.device).ref());
  falling.unscale(bad);
  expect_error([&] { falling.update(); }, "fell to zero");
}

#if BURN_HAS_CAPTURE
std::vector<float> flat_floats(const burn::detail::TensorRef& t) {
  return Tensor<1>(burn::detail::reshape_exact(t, Shape{t->spec.shape.num_elements()})).to_data().to_vec<float>();
}

// A traced step takes the scale as an input and gives the check as a
// result: the gradients unscale() gives, bit for bit, and its flag; after
// commit_traced() the scale follows the same schedule as after unscale().
TEST(GradScaler, ATracedStepUnscalesAndChecksAsUnscaleDoes) {
  for (const Device& base : {Device::flex(), Device::cpu()}) {
    SCOPED_TRACE(base.to_string());
    Problem p(base);
    amp::GradScaler eager(amp::GradScalerConfig{}.with_init_scale(1024.0));
    amp::GradScaler traced(amp::GradScalerConfig{}.with_init_scale(1024.0));

    // Inputs: the model's tensors, x, y, the scales, and what is added to
    // the bias gradient (0, or inf as an f16 overflow would make it).
    const nn::Linear plain = module::valid(p.model);
    TracedFunction::Tensors in = module::tensors_of(plain);
    const std::size_t n = in.size();
    in.push_back(Problem::inputs(base).ref());
    in.push_back(Problem::targets(base).ref());
    in.push_back(traced.traced_scales(base));
    in.push_back(Tensor<1>::zeros(Shape{1}, base).ref());
    const TracedFunction check = trace(
        [n](const TracedFunction::Tensors& t) -> TracedFunction::Tensors {
          const auto m = module::with_tensors(nn::LinearConfig{3, 2}.init(t[0]->device), std::span(t).first(n));
          const auto loss = nn::loss::MseLoss{}.forward(m.forward(Tensor<2>(t[n])), Tensor<2>(t[n + 1]));
          Gradients g = amp::GradScaler::traced_scale(loss, t[n + 2]).backward();
          auto grads = optim::GradientsParams::from_grads(g, m);
          const auto& bias = m.bias.value();
          grads.insert(bias.id(), *grads.get<1>(bias.id()) + Tensor<1>(t[n + 3]));
          const auto found = amp::GradScaler::traced_unscale(grads, t[n + 2]);
          return {*grads.get_ref(m.weight.id()), *grads.get_ref(bias.id()), found.ref()};
        },
        specs_of(in));

    auto want = p.grads(eager.scale(p.loss(p.model)), p.model);
    ASSERT_TRUE(eager.unscale(want));
    eager.update();
    const auto out = check(in);
    const bool found = Tensor<1, Bool>(out[2]).into_scalar<bool>();
    EXPECT_FALSE(found);
    EXPECT_EQ(flat_floats(out[0]), flat_floats(*want.get_ref(p.model.weight.id())));
    EXPECT_EQ(flat_floats(out[1]), flat_floats(*want.get_ref(p.model.bias.value().id())));
    traced.commit_traced(found);
    traced.update();
    EXPECT_EQ(traced.get_scale(), eager.get_scale());
    EXPECT_EQ(traced.growth_tracker(), 1u);
    EXPECT_EQ(traced.skipped_steps(), 0u);

    // An inf in one gradient: found, the step counts as skipped, the scale backs off.
    in[n + 3] = Tensor<1>::full(Shape{1}, std::numeric_limits<double>::infinity(), base).ref();
    in[n + 2] = traced.traced_scales(base);
    const auto poisoned = check(in);
    EXPECT_TRUE((Tensor<1, Bool>(poisoned[2]).into_scalar<bool>()));
    traced.commit_traced(true);
    EXPECT_TRUE(traced.found_inf());
    EXPECT_EQ(traced.skipped_steps(), 1u);
    burn::testing::expect_error([&] { traced.commit_traced(true); }, "already checked");
    traced.update();
    EXPECT_EQ(traced.get_scale(), 512.0);
    EXPECT_EQ(traced.growth_tracker(), 0u);

    // Scales that are not traced_scales()'s are refused while tracing.
    TracedFunction::Tensors wrong = in;
    wrong[n + 2] = Tensor<1>::ones(Shape{3}, base).ref();
    burn::testing::expect_error([&] { (void)check(wrong); }, "traced_scales()");
  }
}
#endif

}  // namespace
#endif
