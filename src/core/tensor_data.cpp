#include <burn/tensor_data.hpp>

#include <cmath>
#include <fmt/format.h>

namespace burn {

TensorData::TensorData(std::vector<std::byte> bytes, Shape shape, DType dtype)
    : bytes_(std::move(bytes)), shape_(std::move(shape)), dtype_(dtype) {
  // Checked: a wrapped-around size could match the bytes given.
  if (bytes_.size() != shape_.checked_num_elements("TensorData", dtype_size(dtype_)) * dtype_size(dtype_))
    throw Error("TensorData",
                fmt::format("{} bytes cannot hold shape {} of {} ({} bytes expected)", bytes_.size(),
                            shape_.to_string(), dtype_name(dtype_), shape_.num_elements() * dtype_size(dtype_)));
}

TensorData TensorData::zeros(Shape shape, DType dtype) {
  const std::size_t n = shape.checked_num_elements("TensorData::zeros", dtype_size(dtype));
  std::vector<std::byte> bytes(n * dtype_size(dtype));
  return TensorData(std::move(bytes), std::move(shape), dtype);
}

void TensorData::check_count(std::size_t n) const {
  // Checked: a wrapped-around count could match n.
  if (n != shape_.checked_num_elements("TensorData"))
    throw Error("TensorData", fmt::format("{} values cannot fill shape {} ({} expected)", n, shape_.to_string(),
                                          shape_.num_elements()));
}

void TensorData::throw_dtype_mismatch(DType asked) const {
  throw Error("TensorData::to_vec", fmt::format("the data holds {} but {} was asked for; use convert<T>() first",
                                                dtype_name(dtype_), dtype_name(asked)));
}

TensorData TensorData::convert(DType dtype) const {
  if (dtype == dtype_) return *this;
  TensorData out = zeros(shape_, dtype);
  const std::size_t n = num_elements();
  visit_dtype(dtype_, [&]<class From>() {
    visit_dtype(dtype, [&]<class To>() {
      const auto* src = reinterpret_cast<const From*>(bytes_.data());
      auto* dst = reinterpret_cast<To*>(out.bytes_.data());
      for (std::size_t i = 0; i < n; ++i) {
        From v;
        std::memcpy(&v, src + i, sizeof(From));
        To w = convert_element<To>(v);
        std::memcpy(dst + i, &w, sizeof(To));
      }
    });
  });
  return out;
}

double TensorData::value_as_double(std::size_t i) const {
  return visit_dtype(dtype_, [&]<class T>() -> double {
    T v;
    std::memcpy(&v, bytes_.data() + i * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) return static_cast<float>(v);
    else return static_cast<double>(v);
  });
}

namespace {

std::string format_value(const TensorData& d, std::size_t i) {
  if (is_bool(d.dtype())) return d.value_as_double(i) != 0 ? "true" : "false";
  if (is_int(d.dtype())) {
    // Print integers exactly, including 64-bit values beyond double precision.
    return visit_dtype(d.dtype(), [&]<class T>() -> std::string {
      if constexpr (std::is_integral_v<T>) {
        T v;
        std::memcpy(&v, d.bytes().data() + i * sizeof(T), sizeof(T));
        return fmt::format("{}", v);
      } else {
        return {};
      }
    });
  }
  return fmt::format("{}", d.value_as_double(i));
}

std::string index_of(const Shape& shape, std::size_t flat) {
  std::vector<std::size_t> idx(shape.rank());
  for (std::size_t i = shape.rank(); i-- > 0;) {
    const std::size_t d = shape.dims()[i];
    idx[i] = d ? flat % d : 0;
    flat = d ? flat / d : 0;
  }
  return Shape(idx).to_string();
}

constexpr std::size_t kMaxReportedMismatches = 10;

}  // namespace

std::string TensorData::to_string(std::size_t max_values) const {
  std::string values;
  const std::size_t n = num_elements();
  for (std::size_t i = 0; i < n && i < max_values; ++i) {
    if (i) values += ", ";
    values += format_value(*this, i);
  }
  if (n > max_values) values += ", ...";
  return fmt::format("TensorData {{ shape: {}, dtype: {}, values: [{}] }}", shape_.to_string(), dtype_name(dtype_),
                     values);
}

void TensorData::assert_eq(const TensorData& expected, bool check_dtype) const {
  if (check_dtype && dtype_ != expected.dtype_)
    throw Error("assert_eq",
                fmt::format("dtypes differ: got {}, expected {}", dtype_name(dtype_), dtype_name(expected.dtype_)));
  if (shape_ != expected.shape_)
    throw Error("assert_eq",
                fmt::format("shapes differ: got {}, expected {}", shape_.to_string(), expected.shape_.to_string()));
  const TensorData other = expected.convert(dtype_);
  std::string report;
  std::size_t mismatches = 0;
  const std::size_t width = dtype_size(dtype_);
  for (std::size_t i = 0; i < num_elements(); ++i) {
    bool equal = std::memcmp(bytes_.data() + i * width, other.bytes_.data() + i * width, width) == 0;
    if (!equal && is_float(dtype_)) {  // -0 == 0 and NaN == NaN for assertions
      const double a = value_as_double(i), b = other.value_as_double(i);
      equal = a == b || (std::isnan(a) && std::isnan(b));
    }
    if (!equal && ++mismatches <= kMaxReportedMismatches)
      report += fmt::format("\n  at {} (flat {}): got {}, expected {}", index_of(shape_, i), i, format_value(*this, i),
                            format_value(other, i));
  }
  if (mismatches)
    throw Error("assert_eq", fmt::format("{} of {} values differ:{}{}", mismatches, num_elements(), report,
                                         mismatches > kMaxReportedMismatches ? "\n  ..." : ""));
}

void TensorData::assert_approx_eq(const TensorData& expected, Tolerance tol) const {
  if (shape_ != expected.shape_)
    throw Error("assert_approx_eq",
                fmt::format("shapes differ: got {}, expected {}", shape_.to_string(), expected.shape_.to_string()));
  std::string report;
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < num_elements(); ++i) {
    const double a = value_as_double(i), b = expected.value_as_double(i);
    bool ok;
    if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
    else if (std::isinf(a) || std::isinf(b)) ok = a == b;
    else ok = std::abs(a - b) <= std::max(tol.relative * std::abs(a + b), tol.absolute);
    if (!ok && ++mismatches <= kMaxReportedMismatches)
      report += fmt::format("\n  at {} (flat {}): got {}, expected {} (diff {:.3g})", index_of(shape_, i), i, a, b,
                            std::abs(a - b));
  }
  if (mismatches)
    throw Error("assert_approx_eq",
                fmt::format("{} of {} values differ beyond tolerance (relative {}, absolute {}):{}{}", mismatches,
                            num_elements(), tol.relative, tol.absolute, report,
                            mismatches > kMaxReportedMismatches ? "\n  ..." : ""));
}

}  // namespace burn
