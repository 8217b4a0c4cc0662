// A program outside the burn tree, built against the installed package.
#include <burn/burn.hpp>

#include <iostream>

int main() {
  burn::Device device;
  auto t = burn::Tensor<2>::ones({2, 3}, device);
  auto sum = t.sum().into_scalar<float>();
  if (sum != 6.0f) {
    std::cerr << "unexpected sum " << sum << "\n";
    return 1;
  }
  std::cout << "consumer ok on " << device << "\n";
  return 0;
}
