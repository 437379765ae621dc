// bench/peers/cublas.cu — the CUDA peer: cuBLAS, fp32 accumulation, output fp32 or the input type.
//
// What torch.mm / torch.bmm run on these operands: cublasGemmEx for one
// problem, cublasGemmStridedBatchedEx for a batch (one call, batch strides of
// the packed operands). A, B of the input type (CUDA_R_32F, CUDA_R_16F or
// CUDA_R_16BF); C CUDA_R_32F or the input type (bf16 in -> bf16 out, the
// rounding done by cuBLAS's epilogue); CUBLAS_COMPUTE_32F with fp32
// alpha/beta (no TF32: the default math mode does not allow it for
// COMPUTE_32F), CUBLAS_GEMM_DEFAULT, cuBLAS's default workspace, on the legacy
// stream tessel-bench gives (the legacy default stream unless --stream own). Row-major C = op(A)·op(B) is
// computed as the column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, i.e. cuBLAS gets (B, A)
// with N and M swapped: bench "nt" (A [M,K], B [N,K], both K-major) is the
// cuBLAS call with transa = T, transb = N — cuBLAS's "TN".
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
const char* cuda_type_name(dtype t) {
  return t == dtype::f32 ? "CUDA_R_32F" : t == dtype::f16 ? "CUDA_R_16F" : "CUDA_R_16BF";
}

class cublas_peer final : public gemm_peer {
 public:
  ~cublas_peer() override {
    if (handle_) (void)cublasDestroy(handle_);  // nothing useful to do with a failure in a destructor
  }
  std::string name(const gemm_problem& p) const override {
    return std::string(p.batch > 1 ? "cublasGemmStridedBatchedEx " : "cublasGemmEx ") + dtype_name(p.in) + "->" +
           dtype_name(p.out);
  }
  std::string call(const gemm_problem& p) const override {
    // The column-major call: (B, A), n and m swapped.
    const int ldb = p.trans_b ? p.k : p.n, lda = p.trans_a ? p.m : p.k;
    std::string s = p.batch > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx";
    s += std::string("(transa=") + (p.trans_b ? "T" : "N") + ", transb=" + (p.trans_a ? "T" : "N") +
         ", m=" + std::to_string(p.n) + ", n=" + std::to_string(p.m) + ", k=" + std::to_string(p.k) + ", A=B_bench " +
         cuda_type_name(p.in) + " lda=" + std::to_string(ldb) + ", B=A_bench " + cuda_type_name(p.in) +
         " ldb=" + std::to_string(lda) + ", C " + cuda_type_name(p.out) + " ldc=" + std::to_string(p.n);
    if (p.batch > 1)
      s += ", strides " + std::to_string((long long)p.k * p.n) + "/" + std::to_string((long long)p.m * p.k) + "/" +
           std::to_string((long long)p.m * p.n) + ", batchCount=" + std::to_string(p.batch);
    return s + ", CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)";
  }
  std::string description() const override {
    int major = 0, minor = 0, patch = 0, rt = 0;
    check(cublasGetProperty(MAJOR_VERSION, &major), "cublasGetProperty");
    check(cublasGetProperty(MINOR_VERSION, &minor), "cublasGetProperty");
    check(cublasGetProperty(PATCH_LEVEL, &patch), "cublasGetProperty");
    check(cudaRuntimeGetVersion(&rt), "cudaRuntimeGetVersion");
    return "cuBLAS " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) +
           ", CUDA runtime " + std::to_string(rt) +
           ", cublasGemmEx / cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT, default math mode"
           " and workspace";
  }

  void prepare(const gemm_problem& p, const std::vector<gemm_operands>& sets) override {
    if (p.out != dtype::f32 && p.out != p.in)
      throw std::runtime_error("cublas peer: the output type must be fp32 or the input type");
    if (p.batch < 1) throw std::runtime_error("cublas peer: batch must be >= 1");
    if (!handle_) {
      check(cublasCreate(&handle_), "cublasCreate");
      check(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    }
    check(cublasSetStream(handle_, static_cast<cudaStream_t>(p.stream)), "cublasSetStream");
    p_ = p;
    sets_ = sets;
  }

  void run(std::size_t set) override {
    const gemm_operands& s = sets_.at(set);
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType_t t = cuda_type(p_.in), tc = cuda_type(p_.out);
    const cublasOperation_t opb = p_.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, opa = p_.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    // Column-major view: B is [N, K] (ld N) untransposed, [K, N] (ld K) with trans_b; A likewise.
    const int ldb = p_.trans_b ? p_.k : p_.n, lda = p_.trans_a ? p_.m : p_.k;
    if (p_.batch == 1) {
      check(cublasGemmEx(handle_, opb, opa, p_.n, p_.m, p_.k, &one, s.b, t, ldb, s.a, t, lda, &zero, s.c, tc, p_.n,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
      return;
    }
    const long long sb = (long long)p_.k * p_.n, sa = (long long)p_.m * p_.k, sc = (long long)p_.m * p_.n;
    check(cublasGemmStridedBatchedEx(handle_, opb, opa, p_.n, p_.m, p_.k, &one, s.b, t, ldb, sb, s.a, t, lda, sa,
                                     &zero, s.c, tc, p_.n, sc, p_.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
  }

 private:
  cublasHandle_t handle_ = nullptr;
  gemm_problem p_;
  std::vector<gemm_operands> sets_;
};

}  // namespace

std::unique_ptr<gemm_peer> make_gemm_peer() { return std::make_unique<cublas_peer>(); }

}  // namespace tessel::bench
