// QuantScheme's record spelling.
#include <burn/quant/scheme.hpp>

#include <charconv>

#include <fmt/format.h>

#include <burn/error.hpp>

namespace burn::quant {

std::string QuantScheme::to_string() const {
  const char* width = bits == QuantBits::Int8 ? "int8" : "int4";
  switch (level) {
    case QuantLevel::Tensor: return fmt::format("{}-tensor", width);
    case QuantLevel::Channel: return fmt::format("{}-channel{}", width, axis);
    case QuantLevel::Block: return fmt::format("{}-block{}", width, block_size);
  }
  return width;
}

QuantScheme QuantScheme::parse(std::string_view text) {
  auto fail = [&]() -> QuantScheme {
    throw Error("QuantScheme::parse",
                fmt::format("'{}' is not a quantization scheme; expected int8-tensor, int8-channel<axis>, "
                            "int8-block<size> or int4-block<size>",
                            text));
  };
  QuantScheme s;
  if (text.starts_with("int8-")) s.bits = QuantBits::Int8;
  else if (text.starts_with("int4-")) s.bits = QuantBits::Int4;
  else return fail();
  std::string_view rest = text.substr(5);
  auto number = [&](std::string_view digits) {
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) fail();
    return n;
  };
  if (rest == "tensor") {
    s.level = QuantLevel::Tensor;
  } else if (rest.starts_with("channel")) {
    s.level = QuantLevel::Channel;
    s.axis = number(rest.substr(7));
  } else if (rest.starts_with("block")) {
    s.level = QuantLevel::Block;
    s.block_size = number(rest.substr(5));
    if (s.block_size == 0) fail();
  } else {
    return fail();
  }
  return s;
}

}  // namespace burn::quant
