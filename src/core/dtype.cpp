#include <burn/dtype.hpp>

namespace burn {

std::string_view dtype_name(DType d) noexcept {
  constexpr std::string_view names[] = {"f64", "f32", "f16", "bf16", "i64", "i32", "i16",
                                        "i8",  "u64", "u32", "u16",  "u8",  "bool"};
  return names[static_cast<int>(d)];
}
std::ostream& operator<<(std::ostream& os, DType d) { return os << dtype_name(d); }
std::ostream& operator<<(std::ostream& os, FloatDType d) { return os << to_dtype(d); }
std::ostream& operator<<(std::ostream& os, IntDType d) { return os << to_dtype(d); }

}  // namespace burn
