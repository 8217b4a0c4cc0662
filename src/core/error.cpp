#include <burn/error.hpp>

#include <string>

namespace burn {

namespace {
std::string bracketed(std::string_view op, std::string_view message) {
  std::string out;
  out.reserve(op.size() + message.size() + 3);
  out.push_back('[');
  out.append(op);
  out.append("] ");
  out.append(message);
  return out;
}
}  // namespace

Error::Error(std::string_view op, std::string_view message) : std::runtime_error(bracketed(op, message)), op_(op) {}

}  // namespace burn
