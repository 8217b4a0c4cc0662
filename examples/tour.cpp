// The README's API tour, compiled and run by the tests so it stays true.
#include <burn/burn.hpp>

#include <iostream>

int main() {
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

  std::cout << "shapes: " << h.shape() << " " << i.shape() << " " << m.shape() << " " << top.shape() << " "
            << idx.shape() << " " << s.shape() << " " << v.shape() << " " << conv.shape() << " " << values.size()
            << " " << d.dtype() << "\n";
  return 0;
}
