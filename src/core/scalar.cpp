#include <burn/scalar.hpp>

#include <fmt/format.h>

namespace burn {

std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::Float: return fmt::format("{}", f_);
    case Kind::Int: return fmt::format("{}", i_);
    case Kind::Bool: return i_ ? "true" : "false";
  }
  return {};
}

}  // namespace burn
