#include "backends/cuda/cublaslt.hpp"

#include <cublasLt.h>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/dynamic_library.hpp"

#ifndef BURN_CUDA_CUBLASLT_LIBRARY
#error "the build defines BURN_CUDA_CUBLASLT_LIBRARY (cmake/backends/cuda.cmake)"
#endif

namespace burn::cuda {
namespace {

struct LtApi {
  decltype(&::cublasLtGetVersion) get_version = nullptr;
  decltype(&::cublasLtGetStatusString) get_status_string = nullptr;
  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtDestroy) destroy = nullptr;
  decltype(&::cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;
};

struct Lt {
  LtApi api;
  std::string unavailable;
  std::size_t version = 0;
};

#define BURN_LT_RESOLVE(member, name) library.resolve(lt.api.member, #name)

const Lt& lt() {
  static const Lt loaded = [] {
    Lt lt;
    static DynamicLibrary library(BURN_CUDA_CUBLASLT_LIBRARY);
    BURN_LT_RESOLVE(get_version, cublasLtGetVersion);
    BURN_LT_RESOLVE(get_status_string, cublasLtGetStatusString);
    BURN_LT_RESOLVE(create, cublasLtCreate);
    BURN_LT_RESOLVE(destroy, cublasLtDestroy);
    BURN_LT_RESOLVE(desc_create, cublasLtMatmulDescCreate);
    BURN_LT_RESOLVE(desc_destroy, cublasLtMatmulDescDestroy);
    BURN_LT_RESOLVE(layout_create, cublasLtMatrixLayoutCreate);
    BURN_LT_RESOLVE(layout_destroy, cublasLtMatrixLayoutDestroy);
    BURN_LT_RESOLVE(layout_set, cublasLtMatrixLayoutSetAttribute);
    BURN_LT_RESOLVE(preference_create, cublasLtMatmulPreferenceCreate);
    BURN_LT_RESOLVE(preference_destroy, cublasLtMatmulPreferenceDestroy);
    BURN_LT_RESOLVE(preference_set, cublasLtMatmulPreferenceSetAttribute);
    BURN_LT_RESOLVE(heuristic, cublasLtMatmulAlgoGetHeuristic);
    BURN_LT_RESOLVE(matmul, cublasLtMatmul);
    if (!library.error().empty()) {
      lt.unavailable = library.error() + " (cuBLASLt comes with the CUDA toolkit; docs/cuda.md)";
      return lt;
    }
    lt.version = lt.api.get_version();
    return lt;
  }();
  return loaded;
}

#undef BURN_LT_RESOLVE

std::string status_text(cublasStatus_t status) {
  const char* text = lt().api.get_status_string ? lt().api.get_status_string(status) : nullptr;
  return text ? fmt::format("{} ({})", text, static_cast<int>(status))
              : fmt::format("status {}", static_cast<int>(status));
}

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw ExecutionError("matmul", fmt::format("cuBLASLt's {} failed: {}", call, status_text(status)));
}

cudaDataType_t data_type(DType d) {
  switch (d) {
    case DType::F64: return CUDA_R_64F;
    case DType::F16: return CUDA_R_16F;
    case DType::BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

/// A device address as the pointer cuBLASLt's signatures take: the host
/// never dereferences it.
void* device_pointer(std::uint64_t address) {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a device address, not host memory
  return reinterpret_cast<void*>(address);
}

std::uint64_t batch_of(const Shape& s) {
  std::uint64_t batch = 1;
  for (std::size_t d = 0; d + 2 < s.rank(); ++d) batch *= s[d];
  return batch;
}

}  // namespace

const std::string& cublaslt_unavailable() { return lt().unavailable; }
std::size_t cublaslt_version() { return lt().version; }

bool cublaslt_takes(const ir::TensorSpec& a, const ir::TensorSpec& b, const ir::TensorSpec& out) {
  const DType d = a.dtype;
  if (b.dtype != d || out.dtype != d) return false;
  if (d != DType::F32 && d != DType::F16 && d != DType::BF16 && d != DType::F64) return false;
  if (a.shape.rank() < 2 || a.shape.rank() != b.shape.rank() || out.shape.rank() != a.shape.rank()) return false;
  if (a.shape.num_elements() == 0 || b.shape.num_elements() == 0 || out.shape.num_elements() == 0) return false;
  // cuBLASLt's sizes and leading dimensions are 64-bit, its batch count an int.
  if (batch_of(out.shape) > 0x7fffffffu) return false;
  const std::size_t r = a.shape.rank();
  bool same = true;
  for (std::size_t d2 = 0; d2 + 2 < r; ++d2) same = same && a.shape[d2] == b.shape[d2];
  return same || batch_of(a.shape) == 1 || batch_of(b.shape) == 1;
}

LtProblem lt_problem(const ir::TensorSpec& a, const ir::TensorSpec& b, const ir::TensorSpec& out) {
  const std::size_t r = out.shape.rank();
  LtProblem p;
  p.dtype = a.dtype;
  p.m = out.shape[r - 2];
  p.n = out.shape[r - 1];
  p.k = a.shape[r - 1];
  p.batch = batch_of(out.shape);
  p.a_broadcast = p.batch > 1 && batch_of(a.shape) == 1;
  p.b_broadcast = p.batch > 1 && batch_of(b.shape) == 1;
  return p;
}

struct LtMatmul::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr;   // b as column-major [n, k]
  cublasLtMatrixLayout_t second = nullptr;  // a as column-major [k, m]
  cublasLtMatrixLayout_t result = nullptr;  // out as column-major [n, m]
  cublasLtMatmulAlgo_t algo{};
  bool found = false;
  bool wide = false;  // f64: alpha and beta are doubles

  ~Plan() {
    const LtApi& api = lt().api;
    if (result) (void)api.layout_destroy(result);
    if (second) (void)api.layout_destroy(second);
    if (first) (void)api.layout_destroy(first);
    if (desc) (void)api.desc_destroy(desc);
  }
};

LtMatmul::LtMatmul(CUstream stream, bool allow_tf32) : stream_(stream), allow_tf32_(allow_tf32) {
  if (!lt().unavailable.empty()) throw ConfigurationError("matmul", lt().unavailable);
  cublasLtHandle_t handle = nullptr;
  const cublasStatus_t status = lt().api.create(&handle);
  if (status != CUBLAS_STATUS_SUCCESS)
    throw ConfigurationError("matmul", "cuBLASLt's cublasLtCreate failed: " + status_text(status));
  handle_ = handle;
}

LtMatmul::~LtMatmul() {
  plans_.clear();
  if (handle_) (void)lt().api.destroy(static_cast<cublasLtHandle_t>(handle_));
}

const LtMatmul::Plan* LtMatmul::plan_for(const LtProblem& p) {
  auto& slot = plans_[p.key()];
  if (slot) return slot.get();
  const LtApi& api = lt().api;
  auto plan = std::make_unique<Plan>();
  plan->wide = p.dtype == DType::F64;
  const cudaDataType_t type = data_type(p.dtype);
  const cublasComputeType_t compute = plan->wide                               ? CUBLAS_COMPUTE_64F
                                      : (p.dtype == DType::F32 && allow_tf32_) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                               : CUBLAS_COMPUTE_32F;
  check(api.desc_create(&plan->desc, compute, plan->wide ? CUDA_R_64F : CUDA_R_32F), "cublasLtMatmulDescCreate");
  const auto layout = [&](cublasLtMatrixLayout_t& l, std::uint64_t rows, std::uint64_t cols, bool broadcast) {
    check(api.layout_create(&l, type, rows, cols, static_cast<std::int64_t>(rows)), "cublasLtMatrixLayoutCreate");
    if (p.batch == 1) return;
    const auto count = static_cast<std::int32_t>(p.batch);
    const std::int64_t stride = broadcast ? 0 : static_cast<std::int64_t>(rows * cols);
    check(api.layout_set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
          "cublasLtMatrixLayoutSetAttribute");
    check(api.layout_set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
          "cublasLtMatrixLayoutSetAttribute");
  };
  layout(plan->first, p.n, p.k, p.b_broadcast);
  layout(plan->second, p.k, p.m, p.a_broadcast);
  layout(plan->result, p.n, p.m, false);

  cublasLtMatmulPreference_t preference = nullptr;
  check(api.preference_create(&preference), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t workspace = kWorkspaceBytes;
  cublasStatus_t status =
      api.preference_set(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
  // Split-K partial sums are added in the compute type (f32), never in an
  // f16/bf16 output: a long row of a half-precision matmul otherwise loses
  // the low bits of every partial sum (PyTorch's default "reduced precision
  // reduction" does that; burn's CPU backends do not).
  const std::uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  if (status == CUBLAS_STATUS_SUCCESS)
    status =
        api.preference_set(preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reductions, sizeof(reductions));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  if (status == CUBLAS_STATUS_SUCCESS)
    status = api.heuristic(static_cast<cublasLtHandle_t>(handle_), plan->desc, plan->first, plan->second, plan->result,
                           plan->result, preference, 1, &result, &returned);
  (void)api.preference_destroy(preference);
  // No algorithm (an unusual shape): the generated kernel computes it.
  plan->found = status == CUBLAS_STATUS_SUCCESS && returned > 0 && result.state == CUBLAS_STATUS_SUCCESS;
  if (plan->found) plan->algo = result.algo;
  slot = std::move(plan);
  return slot.get();
}

bool LtMatmul::run(const LtProblem& problem, std::uint64_t a, std::uint64_t b, std::uint64_t out,
                   std::uint64_t workspace) {
  const Plan* plan = plan_for(problem);
  if (!plan->found) return false;
  const double alpha64 = 1.0, beta64 = 0.0;
  const float alpha32 = 1.0f, beta32 = 0.0f;
  const void* alpha = plan->wide ? static_cast<const void*>(&alpha64) : static_cast<const void*>(&alpha32);
  const void* beta = plan->wide ? static_cast<const void*>(&beta64) : static_cast<const void*>(&beta32);
  void* out_ptr = device_pointer(out);
  // C (beta 0, never read) and D are both the output.
  check(lt().api.matmul(static_cast<cublasLtHandle_t>(handle_), plan->desc, alpha, device_pointer(b), plan->first,
                        device_pointer(a), plan->second, beta, out_ptr, plan->result, out_ptr, plan->result,
                        &plan->algo, device_pointer(workspace), kWorkspaceBytes, stream_),
        "cublasLtMatmul");
  return true;
}

}  // namespace burn::cuda
