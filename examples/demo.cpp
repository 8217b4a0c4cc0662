// A small tour on the default device (until the training program exists,
// this is what the README's first command runs).
#include <burn/burn.hpp>

#include <iostream>

int main() {
  using burn::Tensor;
  try {
    burn::Device device;  // BURN_DEVICE overrides the choice
    std::cout << "default device: " << device << "\n";
    auto a = Tensor<2>::from_floats({{1.0, 2.0}, {3.0, 4.0}}, device);
    auto b = Tensor<2>::ones({2, 2}, device);
    std::cout << "a + b = " << (a + b) << "\n";
  } catch (const burn::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
