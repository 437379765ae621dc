// bench/peers/peer.hpp — the library tessel-bench compares a GEMM against.
//
// Contract: one peer per backend build (OpenBLAS for cpu, cuBLAS for cuda,
// none for hip). The bench gives it, per shape, every rotating operand set
// on the bench's device: A [M, K] (or [K, M] with trans_a) and B [K, N] (or
// [N, K] with trans_b), row-major, of the input type; C [M, N] row-major fp32.
// run(i) computes C = op(A)·op(B) (alpha 1, beta 0) for set i; on a GPU it
// may return before the work is done (the bench synchronizes the device,
// which covers the peer's default-stream work). prepare() may copy the inputs
// (outside timing), e.g. to widen them when the library lacks a kernel for
// the input type; name() then says so. Errors throw std::runtime_error.
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
  bool trans_a = false, trans_b = false;
  int threads = 0;  // CPU peers: threads to use (> 0)
};

struct gemm_operands {
  const void* a = nullptr;
  const void* b = nullptr;
  float* c = nullptr;
};

class gemm_peer {
 public:
  virtual ~gemm_peer() = default;
  // For the table's peer column, per input type: e.g. "openblas sgemm(bf16->fp32)".
  virtual std::string name(dtype in) const = 0;
  // Library version and configuration, for the header and the JSON.
  virtual std::string description() const = 0;
  virtual void prepare(const gemm_problem& p, const std::vector<gemm_operands>& sets) = 0;
  virtual void run(std::size_t set) = 0;
};

// The peer of this build; nullptr when the backend has none.
std::unique_ptr<gemm_peer> make_gemm_peer();

}  // namespace tessel::bench
