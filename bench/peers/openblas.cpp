// bench/peers/openblas.cpp — the CPU peer: OpenBLAS cblas_sgemm.
//
// fp32 inputs go to sgemm as they are. OpenBLAS has no fp16 GEMM, and Debian
// 12's OpenBLAS 0.3.21 is built without cblas_sbgemm (its header declares it,
// the library does not export it), so fp16 and bf16 inputs are widened to
// fp32 once in prepare() (exactly: every fp16/bf16 value is a float) and
// sgemm runs on those; the peer's name says "(bf16->fp32)" / "(fp16->fp32)".
// The widened peer reads twice the bytes tessel reads: a fair comparison of
// arithmetic, not of memory traffic.
// A 16-bit output (--out input) is computed into an fp32 scratch C by sgemm and
// then rounded (RNE) into the output on the same number of threads (oneTBB);
// that conversion is part of run(), so it is timed, and the name says
// "+cvt->bf16". A batch is a loop of sgemm calls, one per entry (this
// OpenBLAS has no batched GEMM); the name says "loop xN".
#include <cblas.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "peer.hpp"
#include "widen.hpp"

namespace tessel::bench {
namespace {

class openblas_peer final : public gemm_peer {
 public:
  std::string name(const gemm_problem& p) const override {
    std::string s = p.in == dtype::f32 ? "openblas sgemm" : std::string("openblas sgemm(") + dtype_name(p.in) + "->fp32)";
    if (p.batch > 1) s += " loop x" + std::to_string(p.batch);
    if (p.out != dtype::f32) s += std::string(" +cvt->") + dtype_name(p.out);
    return s;
  }
  std::string call(const gemm_problem& p) const override {
    const int lda = p.trans_a ? p.m : p.k, ldb = p.trans_b ? p.k : p.n;
    std::string s = std::string(p.batch > 1 ? std::to_string(p.batch) + " x " : "") +
                    "cblas_sgemm(CblasRowMajor, " + (p.trans_a ? "CblasTrans" : "CblasNoTrans") + ", " +
                    (p.trans_b ? "CblasTrans" : "CblasNoTrans") + ", M=" + std::to_string(p.m) +
                    ", N=" + std::to_string(p.n) + ", K=" + std::to_string(p.k) + ", lda=" + std::to_string(lda) +
                    ", ldb=" + std::to_string(ldb) + ", ldc=" + std::to_string(p.n) + ")";
    if (p.in != dtype::f32) s += std::string(" on ") + dtype_name(p.in) + " inputs widened to fp32 in advance (untimed)";
    if (p.out != dtype::f32)
      s += std::string(", then fp32 C rounded to ") + dtype_name(p.out) + " (RNE, " + std::to_string(p.threads) +
           " oneTBB threads; timed)";
    return s;
  }
  std::string description() const override {
    const char* cfg = openblas_get_config();
    return cfg ? std::string(cfg) : std::string("OpenBLAS (no config string)");
  }

  void prepare(const gemm_problem& p, const std::vector<gemm_operands>& sets) override {
    if (p.threads <= 0) throw std::runtime_error("openblas peer: thread count must be positive");
    if (p.batch < 1) throw std::runtime_error("openblas peer: batch must be >= 1");
    if (p.out != dtype::f32 && p.out != p.in)
      throw std::runtime_error("openblas peer: the output type must be fp32 or the input type");
    p_ = p;
    openblas_set_num_threads(p.threads);
    sets_ = sets;
    wide_.clear();
    scratch_.clear();
    const std::size_t nc = std::size_t(p.batch) * std::size_t(p.m) * std::size_t(p.n);
    if (p.out != dtype::f32) {
      scratch_.resize(nc);
      arena_ = std::make_unique<tbb::task_arena>(p.threads);
    }
    if (p.in == dtype::f32) return;
    const std::size_t na = std::size_t(p.batch) * std::size_t(p.m) * std::size_t(p.k),
                      nb = std::size_t(p.batch) * std::size_t(p.k) * std::size_t(p.n);
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
    const std::size_t sa = std::size_t(p_.m) * std::size_t(p_.k), sb = std::size_t(p_.k) * std::size_t(p_.n),
                      sc = std::size_t(p_.m) * std::size_t(p_.n);
    float* c = p_.out == dtype::f32 ? static_cast<float*>(s.c) : scratch_.data();
    for (int z = 0; z < p_.batch; ++z)
      cblas_sgemm(CblasRowMajor, p_.trans_a ? CblasTrans : CblasNoTrans, p_.trans_b ? CblasTrans : CblasNoTrans, p_.m,
                  p_.n, p_.k, 1.0f, static_cast<const float*>(s.a) + z * sa, lda,
                  static_cast<const float*>(s.b) + z * sb, ldb, 0.0f, c + z * sc, p_.n);
    if (p_.out == dtype::f32) return;
    auto* out = static_cast<std::uint16_t*>(s.c);
    const bool half = p_.out == dtype::f16;
    const std::size_t total = std::size_t(p_.batch) * sc;
    arena_->execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, total, std::size_t(1) << 15),
                        [&](const tbb::blocked_range<std::size_t>& r) {
                          if (half)
                            for (std::size_t i = r.begin(); i < r.end(); ++i) out[i] = to_fp16(c[i]).bits;
                          else
                            for (std::size_t i = r.begin(); i < r.end(); ++i) out[i] = to_bf16(c[i]).bits;
                        });
    });
  }

 private:
  struct widened {
    std::vector<float> a, b;
  };

  gemm_problem p_;
  std::vector<gemm_operands> sets_;
  std::vector<widened> wide_;
  std::vector<float> scratch_;  // fp32 C when the output is 16-bit
  std::unique_ptr<tbb::task_arena> arena_;
};

}  // namespace

std::unique_ptr<gemm_peer> make_gemm_peer() { return std::make_unique<openblas_peer>(); }

}  // namespace tessel::bench
