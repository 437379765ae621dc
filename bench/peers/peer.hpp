// bench/peers/peer.hpp — the library tessel-bench compares a GEMM against.
//
// Contract: one peer per backend build (OpenBLAS for cpu, cuBLAS for cuda,
// none for hip). The bench gives it, per problem, every rotating operand set
// on the bench's device, all packed row-major, `batch` matrices one after the
// other (batch strides M·K, K·N, M·N elements):
//   A [batch, M, K] (or [batch, K, M] with trans_a) of the input type,
//   B [batch, K, N] (or [batch, N, K] with trans_b) of the input type,
//   C [batch, M, N] of the output type `out` (fp32, or the input type).
// run(i) computes C = op(A)·op(B) (alpha 1, beta 0, fp32 accumulation) for set
// i, all batch entries in one call where the library has one (strided
// batched); on a GPU it may return before the work is done, on the problem's
// stream (the bench synchronizes the device, which covers every stream).
// prepare() may copy the inputs (outside timing), e.g. to widen them when the
// library lacks a kernel for the input type; name() then says so. Work that
// run() does besides the library call (a conversion of the output, say) is
// timed with it and named too. Errors throw std::runtime_error.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tessel/tensor.hpp"

namespace tessel::bench {

struct gemm_problem {
  int m = 0, n = 0, k = 0;
  dtype in = dtype::f32;
  dtype out = dtype::f32;  // fp32, or the input type
  bool trans_a = false, trans_b = false;
  int batch = 1;    // >= 1: independent problems, packed (strided batched)
  int threads = 0;  // CPU peers: threads to use (> 0)
  void* stream = nullptr;  // GPU peers: the stream to run on (cudaStream_t; nullptr: the legacy default stream)
};

struct gemm_operands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;  // of the problem's output type
};

class gemm_peer {
 public:
  virtual ~gemm_peer() = default;
  // For the table's peer column, per problem: e.g. "openblas sgemm(bf16->fp32)" or "cublasGemmEx bf16->bf16".
  virtual std::string name(const gemm_problem& p) const = 0;
  // The library call(s) run() makes for p, in full (entry point, ops, types, compute type): for the JSON.
  virtual std::string call(const gemm_problem& p) const { return name(p); }
  // Library version and configuration, for the header and the JSON.
  virtual std::string description() const = 0;
  virtual void prepare(const gemm_problem& p, const std::vector<gemm_operands>& sets) = 0;
  virtual void run(std::size_t set) = 0;
};

// The peer of this build; nullptr when the backend has none.
std::unique_ptr<gemm_peer> make_gemm_peer();

}  // namespace tessel::bench
