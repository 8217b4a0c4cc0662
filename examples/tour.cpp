// The README's API tour, compiled and run by the tests so it stays true.
#include <burn/burn.hpp>
#include <burn/trace.hpp>

#include <filesystem>
#include <iostream>

// Modules: list the fields once; configs build them on a device.
struct Mlp {
  burn::nn::Linear fc1, fc2;
  burn::nn::Dropout dropout;
  BURN_MODULE(fc1, fc2, dropout)

  burn::Tensor<2> forward(const burn::Tensor<2>& x) const {
    return fc2.forward(dropout.forward(burn::activation::relu(fc1.forward(x))));
  }
};

struct MlpConfig {
  std::size_t d_input, d_hidden, d_output;
  Mlp init(const burn::Device& device) const {
    return {burn::nn::LinearConfig{d_input, d_hidden}.init(device),
            burn::nn::LinearConfig{d_hidden, d_output}.init(device), burn::nn::DropoutConfig{0.1}.init()};
  }
};

// One training step: forward, loss, backward, optimiser step (the model is a value).
float train_step(Mlp& model, burn::optim::Optimizer& optim, const burn::Tensor<2>& x,
                 const burn::Tensor<1, burn::Int>& y) {
  auto loss = burn::nn::loss::CrossEntropyLossConfig{}.init(x.device()).forward(model.forward(x), y);
  burn::Gradients grads = loss.backward();
  model = optim.step(1e-2, model, burn::optim::GradientsParams::from_grads(grads, model));
  return loss.into_scalar<float>();
}

int tour() {
  using burn::Device;
  using burn::Tensor;

  // Devices: cheap values; equality compares the compute resource.
  Device flex = Device::flex();
  Device training = flex.autodiff();  // new tensors get autodiff
  if (!(flex == training && training.is_autodiff())) return 1;
  flex.seed(42);  // reproducible random tensors
  std::cout << flex << "\n";

  // Creation, with an explicit dtype where wanted.
  auto x = Tensor<2>::random({32, 128}, burn::Distribution::normal(0, 1), flex);
  auto h = Tensor<2>::zeros({2, 3}, {flex, burn::DType::F16});
  auto i = Tensor<1, burn::Int>::arange(0, 10, flex);
  auto m = x.greater_elem(0.0);  // Tensor<2, Bool>

  // Operations take Burn's names.
  auto y = x.matmul(x.transpose()).mean_dim(1);  // [32, 1]
  auto [top, idx] = x.topk_with_indices(5, 1);
  auto s = burn::activation::softmax(x, -1);
  auto v = x.slice({{0, 4}, {burn::Range::all()}});
  auto conv = burn::module::conv2d(Tensor<4>::ones({1, 3, 8, 8}, flex), Tensor<4>::ones({4, 3, 3, 3}, flex),
                                   std::nullopt, burn::module::ConvOptions<2>({1, 1}, {1, 1}, {1, 1}));

  // Data back on the host.
  burn::TensorData data = y.to_data();
  std::vector<float> values = data.to_vec<float>();

  // Device settings: default dtypes, set before the first tensor.
  Device nd = Device::ndarray();
  nd.configure(burn::DeviceConfig{}.float_dtype(burn::FloatDType::F64));
  auto d = Tensor<1>::ones({3}, nd);

  // Errors are burn::Error with the operation in brackets.
  try {
    (void)Tensor<2>::ones({2, 3}, flex).matmul(Tensor<2>::ones({4, 5}, flex));
  } catch (const burn::Error& e) {
    std::cout << e.what() << "\n";
  }
  try {
    (void)(Tensor<1>::ones({3}, flex) + Tensor<1>::ones({3}, nd));
  } catch (const burn::Error& e) {
    std::cout << e.what() << "\n";
  }

  // Modules, losses and optimisers.
  auto ad = Device::flex().autodiff();
  Mlp model = MlpConfig{4, 16, 3}.init(ad);  // parameters are trainable leaves on `ad`
  auto optim = burn::optim::AdamConfig{}.init();
  auto xs = Tensor<2>::random({8, 4}, burn::Distribution::normal(0, 1), ad);
  auto ys = Tensor<1, burn::Int>::from_ints({0, 1, 2, 0, 1, 2, 0, 1}, ad);
  const float first = train_step(model, optim, xs, ys);
  float last = first;
  for (int step = 0; step < 50; ++step) last = train_step(model, optim, xs, ys);
  std::cout << "loss " << first << " -> " << last << " with " << model.num_params() << " parameters\n";
  if (!(last < first)) return 1;

#if BURN_HAS_CAPTURE
  // A step recorded once and replayed: the same bits as the eager step.
  using Tensors = burn::TracedFunction::Tensors;
  const auto regression = [](const Tensors& in) -> Tensors {
    Tensor<2> w = Tensor<2>(in[0]).require_grad(), x_in(in[1]);
    auto loss = x_in.matmul(w).powf_scalar(2.0).mean();
    auto grads = loss.backward();
    return {(w.detach() - w.grad(grads)->detach() * 0.1).ref(), loss.ref()};
  };
  auto step = burn::trace(regression, {{burn::Shape{128, 10}, burn::DType::F32}, {x.shape(), burn::DType::F32}});
  auto w0 = Tensor<2>::random({128, 10}, burn::Distribution::normal(0, 0.1), flex);
  const Tensors traced = step({w0.ref(), x.ref()});
  const Tensors eager = regression({w0.autodiff().ref(), x.autodiff().ref()});
  if (Tensor<2>(traced[0]).to_data().to_vec<float>() != Tensor<2>(eager[0]).to_data().to_vec<float>()) return 1;
#endif

  // Records: safetensors files (atomic writes), readable by Python's safetensors.
  const auto path = std::filesystem::temp_directory_path() / "burn-tour-mlp.safetensors";
  burn::record::save_module(model, path);
  Mlp restored = burn::record::load_module(MlpConfig{4, 16, 3}.init(ad), path);
  Mlp inference = restored.valid();  // no autodiff: dropout off, no graph
  auto probs = burn::activation::softmax(inference.forward(xs.without_autodiff()), 1);
  std::filesystem::remove(path);

  std::cout << "shapes: " << probs.shape() << " " << h.shape() << " " << i.shape() << " " << m.shape() << " "
            << top.shape() << " " << idx.shape() << " " << s.shape() << " " << v.shape() << " " << conv.shape() << " "
            << values.size() << " " << d.dtype() << "\n";
  return 0;
}

int main() {
  try {
    return tour();
  } catch (const std::exception& e) {
    std::cerr << "tour: " << e.what() << "\n";
    return 1;
  }
}
