// bench/peers/cublas.cu — the CUDA peer: cublasGemmEx, fp32 accumulation, fp32 output.
//
// A, B of the input type (CUDA_R_32F, CUDA_R_16F or CUDA_R_16BF), C CUDA_R_32F,
// CUBLAS_COMPUTE_32F (no TF32: the default math mode does not allow it for
// COMPUTE_32F), CUBLAS_GEMM_DEFAULT, on the legacy default stream like tessel
// in tessel-bench. Row-major C = op(A)·op(B) is computed as the column-major
// Cᵀ = op(B)ᵀ·op(A)ᵀ, i.e. cuBLAS gets (B, A) with N and M swapped.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "peer.hpp"

namespace tessel::bench {
namespace {

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cublas peer: ") + what + " failed: " + cublasGetStatusString(s));
}
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("cublas peer: ") + what + " failed: " + cudaGetErrorString(e));
}

cudaDataType_t cuda_type(dtype t) {
  return t == dtype::f32 ? CUDA_R_32F : t == dtype::f16 ? CUDA_R_16F : CUDA_R_16BF;
}

class cublas_peer final : public gemm_peer {
 public:
  ~cublas_peer() override {
    if (handle_) (void)cublasDestroy(handle_);  // nothing useful to do with a failure in a destructor
  }
  std::string name(dtype in) const override { return std::string("cublasGemmEx ") + dtype_name(in) + "->fp32"; }
  std::string description() const override {
    int major = 0, minor = 0, patch = 0, rt = 0;
    check(cublasGetProperty(MAJOR_VERSION, &major), "cublasGetProperty");
    check(cublasGetProperty(MINOR_VERSION, &minor), "cublasGetProperty");
    check(cublasGetProperty(PATCH_LEVEL, &patch), "cublasGetProperty");
    check(cudaRuntimeGetVersion(&rt), "cudaRuntimeGetVersion");
    return "cuBLAS " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) +
           ", CUDA runtime " + std::to_string(rt) + ", CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT";
  }

  void prepare(const gemm_problem& p, const std::vector<gemm_operands>& sets) override {
    if (!handle_) {
      check(cublasCreate(&handle_), "cublasCreate");
      check(cublasSetStream(handle_, nullptr), "cublasSetStream");
      check(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    }
    p_ = p;
    sets_ = sets;
  }

  void run(std::size_t set) override {
    const gemm_operands& s = sets_.at(set);
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType_t t = cuda_type(p_.in);
    // Column-major view: B is [N, K] (ld N) untransposed, [K, N] (ld K) with trans_b; A likewise.
    const int ldb = p_.trans_b ? p_.k : p_.n, lda = p_.trans_a ? p_.m : p_.k;
    check(cublasGemmEx(handle_, p_.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, p_.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, p_.n,
                       p_.m, p_.k, &one, s.b, t, ldb, s.a, t, lda, &zero, s.c, CUDA_R_32F, p_.n, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  }

 private:
  cublasHandle_t handle_ = nullptr;
  gemm_problem p_;
  std::vector<gemm_operands> sets_;
};

}  // namespace

std::unique_ptr<gemm_peer> make_gemm_peer() { return std::make_unique<cublas_peer>(); }

}  // namespace tessel::bench
