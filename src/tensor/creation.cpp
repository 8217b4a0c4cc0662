// Creation, data transfer, casts and kind conversion.
#include <cstring>

#include <fmt/format.h>

#include <burn/tensor.hpp>

#include "autodiff/graph.hpp"
#include "device/runtime.hpp"

namespace burn::detail {

void throw_moved_from(std::string_view op) {
  // Tensor passes its caller's name (__builtin_FUNCTION), which for a
  // function template carries the arguments: "linear<2>" -> "linear".
  if (!op.starts_with("operator")) op = op.substr(0, op.find('<'));
  throw Error(op, "the tensor was moved from (std::move); use it only after assigning a new value");
}

void check_rank(const TensorRef& t, std::size_t rank, std::string_view what) {
  if (!t) throw Error(what, "empty tensor handle");
  if (t->spec.shape.rank() != rank)
    throw Error(what, fmt::format("a rank-{} tensor cannot hold shape {} (rank {})", rank, t->spec.shape.to_string(),
                                  t->spec.shape.rank()));
}

namespace {
std::string_view kind_name(TensorKind k) {
  switch (k) {
    case TensorKind::Float: return "Float";
    case TensorKind::Int: return "Int";
    case TensorKind::Bool: return "Bool";
  }
  return "?";
}
}  // namespace

void check_kind(const TensorRef& t, TensorKind kind, std::string_view what) {
  if (!dtype_matches_kind(t->spec.dtype, kind))
    throw Error(what, fmt::format("a {} tensor cannot hold dtype {}", kind_name(kind), dtype_name(t->spec.dtype)));
}

void check_cast_kind(DType dtype, TensorKind kind) {
  if (!dtype_matches_kind(dtype, kind))
    throw Error("cast", fmt::format("dtype {} is not a {} dtype; use to_float(), to_int() or to_bool() to change kind",
                                    dtype_name(dtype), kind_name(kind)));
}

DType creation_dtype(const TensorCreationOptions& options, TensorKind kind, std::string_view op) {
  const DeviceSettings settings = options.device.runtime().lock_settings();
  if (options.dtype) {
    if (!dtype_matches_kind(*options.dtype, kind))
      throw Error(op, fmt::format("dtype {} is not a {} dtype", dtype_name(*options.dtype), kind_name(kind)));
    if (!options.device.supports_dtype(*options.dtype))
      throw Error(op,
                  fmt::format("{} does not support dtype {}", options.device.to_string(), dtype_name(*options.dtype)));
    return *options.dtype;
  }
  switch (kind) {
    case TensorKind::Float: return to_dtype(settings.float_dtype);
    case TensorKind::Int: return to_dtype(settings.int_dtype);
    case TensorKind::Bool: return to_dtype(settings.bool_dtype);
  }
  return DType::F32;
}

TensorRef full(const Shape& shape, Scalar value, const TensorCreationOptions& options, TensorKind kind) {
  return create(ir::Full{shape, value, creation_dtype(options, kind, "full")}, options.device);
}

TensorRef arange(std::int64_t start, std::int64_t end, std::int64_t step, const TensorCreationOptions& options,
                 TensorKind kind) {
  return create(ir::Arange{start, end, step, creation_dtype(options, kind, "arange")}, options.device);
}

TensorRef linspace(double start, double end, std::size_t steps, const TensorCreationOptions& options) {
  const DType dtype = creation_dtype(options, TensorKind::Float, "linspace");
  Shape{steps}.checked_num_elements("linspace", dtype_size(DType::F64));  // before the int64 cast below
  if (steps == 0) return create(ir::Full{Shape{0}, 0.0, dtype}, options.device);
  if (steps == 1) return create(ir::Full{Shape{1}, start, dtype}, options.device);
  // start + i * step computed in f64 then cast, so the last value is exactly `end`
  // up to the target dtype's rounding.
  auto idx = create(ir::Arange{0, static_cast<std::int64_t>(steps), 1, DType::F64}, options.device);
  const double step = (end - start) / static_cast<double>(steps - 1);
  auto values = binary_scalar(ir::BinaryOp::Add, binary_scalar(ir::BinaryOp::Mul, idx, step), start);
  auto last = create(ir::Full{Shape{1}, end, DType::F64}, options.device);
  values = slice_assign(values, std::vector<Range>{Range::from(-1)}, last);
  return cast(values, dtype);
}

TensorRef eye(std::size_t n, const TensorCreationOptions& options, TensorKind kind) {
  const DType dtype = creation_dtype(options, kind, "eye");
  // Checked before anything is built from n (the int64 cast, n * n).
  Shape{n, n}.checked_num_elements("eye", dtype_size(dtype));
  const auto i = static_cast<std::int64_t>(n);
  auto rows = reshape(create(ir::Arange{0, i, 1, DType::I64}, options.device), std::vector<std::int64_t>{i, 1});
  auto cols = reshape(create(ir::Arange{0, i, 1, DType::I64}, options.device), std::vector<std::int64_t>{1, i});
  auto diag = binary(ir::BinaryOp::Equal, expand(rows, std::vector<std::int64_t>{i, i}),
                     expand(cols, std::vector<std::int64_t>{i, i}));
  return cast(diag, dtype);
}

TensorRef random(const Shape& shape, const Distribution& dist, const TensorCreationOptions& options, TensorKind kind) {
  const DType dtype = creation_dtype(options, kind, "random");
  return create(ir::Random{shape, static_cast<ir::DistributionKind>(dist.kind()), dist.a(), dist.b(), dtype},
                options.device);
}

TensorRef from_data(TensorData data, const TensorCreationOptions& options, TensorKind kind) {
  const DType dtype = creation_dtype(options, kind, "from_data");
  if (data.dtype() != dtype) data = data.convert(dtype);
  const Device& device = options.device;
  auto& runtime = device.runtime();
  ir::TensorSpec spec{data.shape(), data.dtype()};
  auto prim = runtime.backend().from_data(std::move(data));
  runtime.count_op();
  return std::make_shared<const TensorImpl>(TensorImpl{std::move(spec), device, std::move(prim)});
}

TensorRef copy_from_data(const TensorData& data, const TensorCreationOptions& options, TensorKind kind) {
  const DType dtype = creation_dtype(options, kind, "from_data");
  const Device& device = options.device;
  auto& runtime = device.runtime();
  auto* host = runtime.backend().host_access();
  if (data.dtype() != dtype || !host) return from_data(data, options, kind);
  ir::TensorSpec spec{data.shape(), dtype};
  auto target = host->allocate_host(spec);
  if (!data.bytes().empty()) std::memcpy(target.bytes.data(), data.bytes().data(), data.bytes().size());
  runtime.count_op();
  return std::make_shared<const TensorImpl>(TensorImpl{std::move(spec), device, std::move(target.primitive)});
}

TensorData to_data(const TensorRef& t) {
  if (auto* stream = t->device.runtime().backend().stream()) stream->sync();
  return t->device.runtime().backend().to_data(t->primitive, t->spec);
}

TensorRef to_device(const TensorRef& t, const Device& device) {
  // The tensor keeps its own autodiff context, whatever the destination's.
  Device target = device.without_autodiff();
#if BURN_HAS_AUTODIFF
  if (t->device.is_autodiff()) {
    target = target.autodiff();
    if (t->device.gradient_checkpointing_strategy()) target = target.gradient_checkpointing();
  }
#endif
  if (t->device == device) return with_context(t, target);
  TensorData data = to_data(t);
  auto& runtime = target.runtime();
  runtime.lock_settings();
  if (!runtime.backend().supports_dtype(data.dtype()))
    throw Error("to_device", fmt::format("{} does not support dtype {}; cast the tensor first", target.to_string(),
                                         dtype_name(data.dtype())));
  auto prim = runtime.backend().from_data(std::move(data));
  runtime.count_op();
  // A tracked tensor stays tracked: backward moves its gradient back here.
  return autodiff::track_to_device(t, std::make_shared<const TensorImpl>(TensorImpl{t->spec, target, std::move(prim)}));
}

TensorRef cast(const TensorRef& t, DType dtype) {
  if (t->spec.dtype == dtype) return t;
  return execute1(ir::Cast{dtype}, {t});
}

TensorRef to_kind(const TensorRef& t, TensorKind kind) {
  if (dtype_matches_kind(t->spec.dtype, kind)) return t;
  const DeviceSettings s = t->device.settings();
  switch (kind) {
    case TensorKind::Float: return cast(t, to_dtype(s.float_dtype));
    case TensorKind::Int: return cast(t, to_dtype(s.int_dtype));
    case TensorKind::Bool: return cast(t, DType::Bool);
  }
  return t;
}

TensorRef with_context(const TensorRef& t, const Device& device_with_context) {
  // Leaving autodiff drops the graph; staying keeps it.
  if (!device_with_context.is_autodiff())
    return std::make_shared<const TensorImpl>(TensorImpl{t->spec, device_with_context, t->primitive});
  return std::make_shared<const TensorImpl>(
      TensorImpl{t->spec, device_with_context, t->primitive, t->node, t->node_output});
}

}  // namespace burn::detail
