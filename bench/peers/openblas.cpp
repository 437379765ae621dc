// bench/peers/openblas.cpp — the CPU peer: OpenBLAS cblas_sgemm.
//
// fp32 inputs go to sgemm as they are. OpenBLAS has no fp16 GEMM, and Debian
// 12's OpenBLAS 0.3.21 is built without cblas_sbgemm (its header declares it,
// the library does not export it), so fp16 and bf16 inputs are widened to
// fp32 once in prepare() (exactly: every fp16/bf16 value is a float) and
// sgemm runs on those; the peer's name says "(bf16->fp32)" / "(fp16->fp32)".
// The widened peer reads twice the bytes tessel reads: a fair comparison of
// arithmetic, not of memory traffic.
#include <cblas.h>

#include <stdexcept>
#include <string>

#include "peer.hpp"
#include "widen.hpp"

namespace tessel::bench {
namespace {

class openblas_peer final : public gemm_peer {
 public:
  std::string name(dtype in) const override {
    return in == dtype::f32 ? "openblas sgemm" : std::string("openblas sgemm(") + dtype_name(in) + "->fp32)";
  }
  std::string description() const override {
    const char* cfg = openblas_get_config();
    return cfg ? std::string(cfg) : std::string("OpenBLAS (no config string)");
  }

  void prepare(const gemm_problem& p, const std::vector<gemm_operands>& sets) override {
    if (p.threads <= 0) throw std::runtime_error("openblas peer: thread count must be positive");
    p_ = p;
    openblas_set_num_threads(p.threads);
    sets_ = sets;
    wide_.clear();
    if (p.in == dtype::f32) return;
    const std::size_t na = std::size_t(p.m) * std::size_t(p.k), nb = std::size_t(p.k) * std::size_t(p.n);
    wide_.resize(sets.size());
    for (std::size_t i = 0; i < sets.size(); ++i) {
      wide_[i].a = widen(sets[i].a, na, p.in);
      wide_[i].b = widen(sets[i].b, nb, p.in);
      sets_[i].a = wide_[i].a.data();
      sets_[i].b = wide_[i].b.data();
    }
  }

  void run(std::size_t set) override {
    const gemm_operands& s = sets_.at(set);
    const int lda = p_.trans_a ? p_.m : p_.k, ldb = p_.trans_b ? p_.k : p_.n;
    cblas_sgemm(CblasRowMajor, p_.trans_a ? CblasTrans : CblasNoTrans, p_.trans_b ? CblasTrans : CblasNoTrans, p_.m,
                p_.n, p_.k, 1.0f, static_cast<const float*>(s.a), lda, static_cast<const float*>(s.b), ldb, 0.0f, s.c,
                p_.n);
  }

 private:
  struct widened {
    std::vector<float> a, b;
  };

  gemm_problem p_;
  std::vector<gemm_operands> sets_;
  std::vector<widened> wide_;
};

}  // namespace

std::unique_ptr<gemm_peer> make_gemm_peer() { return std::make_unique<openblas_peer>(); }

}  // namespace tessel::bench
