// bench/peers/attention_unfused.cpp — the CPU attention peer: unfused attention
// from OpenBLAS cblas_sgemm calls, the way a framework without a fused kernel
// computes it.
//
// Per (batch, head), one at a time (so the workspace is one q_len × kv_len fp32
// matrix S, whatever the batch and heads):
//   S = scale · Q·Kᵀ           cblas_sgemm (scale folded into alpha)
//   P = exp(S − rowmax(S))     one pass for the max, one for exp + sum (fp32)
//   O = (P·V) / rowsum         cblas_sgemm, then each O row scaled by 1/sum
// Causal (bottom-right: query i sees keys j <= i + kv_len − q_len): rows go in
// blocks of 256 whose sgemms stop at the block's last visible key, and the
// softmax zeroes the masked tail of each row — the masked upper triangle is
// mostly not computed, as a reasonable unfused implementation would. A row
// that sees no key is zeros (tessel's semantics).
// The softmax passes run on `threads` oneTBB threads; their loops keep 16
// independent lanes so that the compiler vectorizes them without fast-math,
// and exp is a polynomial (Cody–Waite reduction, degree 7; ~2 ulp). fp16 and
// bf16 inputs are widened to fp32 once in prepare() (exactly), as the GEMM
// peer does; the name says "(bf16->fp32)".
#include <cblas.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "attention_peer.hpp"
#include "widen.hpp"

namespace tessel::bench {
namespace {

constexpr int lanes = 16;
constexpr int row_block = 256;

// exp(x) for x <= 0 (a score minus its row's max); x below -87 gives exp(-87).
inline float exp_nonpos(float x) {
  x = x < -87.0f ? -87.0f : x;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
  const float r = (x - n * 0.693145751953125f) - n * 1.428606765330187045e-06f;  // |r| <= ln(2)/2
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;  // 2^n, n in [-126, 0]
  float two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);
  return p * two_n;
}

// tools/CMakeLists.txt defines TESSEL_PEER_SIMD_CLONES as a target_clones
// attribute (AVX-512 / AVX2 / baseline, picked at load time) on x86-64, and as
// nothing elsewhere.
#ifndef TESSEL_PEER_SIMD_CLONES
#define TESSEL_PEER_SIMD_CLONES
#endif

// Row softmax numerator in place over s[0, visible), zeros in s[visible, width);
// returns 1 / sum (0 when visible is 0).
TESSEL_PEER_SIMD_CLONES float softmax_row(float* s, int visible, int width) {
  float inv = 0.0f;
  if (visible > 0) {
    float m = s[0];
    for (int j = 1; j < visible; ++j) m = s[j] > m ? s[j] : m;

    float sum[lanes] = {};
    int j = 0;
    for (; j + lanes <= visible; j += lanes)
      for (int l = 0; l < lanes; ++l) {
        const float e = exp_nonpos(s[j + l] - m);
        s[j + l] = e;
        sum[l] += e;
      }
    float total = 0.0f;
    for (; j < visible; ++j) total += (s[j] = exp_nonpos(s[j] - m));
    for (int l = 0; l < lanes; ++l) total += sum[l];
    inv = 1.0f / total;
  }
  std::fill(s + std::max(visible, 0), s + width, 0.0f);
  return inv;
}

class unfused_peer final : public attention_peer {
 public:
  std::string name(dtype in) const override {
    return in == dtype::f32 ? "unfused openblas" : std::string("unfused openblas(") + dtype_name(in) + "->fp32)";
  }
  std::string description() const override {
    const char* cfg = openblas_get_config();
    return std::string("unfused attention: sgemm, fp32 softmax, sgemm; ") +
           (cfg ? std::string(cfg) : std::string("OpenBLAS (no config string)"));
  }
  double workspace_bytes(const attention_problem& p) const override {
    return double(p.q_len) * double(p.kv_len) * 4.0 + double(p.q_len) * 4.0;
  }

  void prepare(const attention_problem& p, const std::vector<attention_operands>& sets) override {
    if (p.threads <= 0) throw std::runtime_error("unfused attention peer: thread count must be positive");
    if (p.heads <= 0 || p.kv_heads <= 0 || p.heads % p.kv_heads != 0)
      throw std::runtime_error("unfused attention peer: kv_heads must divide heads");
    p_ = p;
    openblas_set_num_threads(p.threads);
    arena_ = std::make_unique<tbb::task_arena>(p.threads);
    sets_ = sets;
    s_ = std::vector<float>(std::size_t(p.q_len) * std::size_t(p.kv_len));
    inv_ = std::vector<float>(std::size_t(p.q_len));
    wide_.clear();
    if (p.in == dtype::f32) return;
    const std::size_t nq = std::size_t(p.batch) * p.q_len * p.heads * p.head_dim,
                      nk = std::size_t(p.batch) * p.kv_len * p.kv_heads * p.head_dim;
    wide_.resize(sets.size());
    for (std::size_t i = 0; i < sets.size(); ++i) {
      wide_[i].q = widen(sets[i].q, nq, p.in);
      wide_[i].k = widen(sets[i].k, nk, p.in);
      wide_[i].v = widen(sets[i].v, nk, p.in);
      sets_[i].q = wide_[i].q.data();
      sets_[i].k = wide_[i].k.data();
      sets_[i].v = wide_[i].v.data();
    }
  }

  void run(std::size_t set) override {
    const attention_operands& o = sets_.at(set);
    const int H = p_.heads, Hk = p_.kv_heads, D = p_.head_dim, Lq = p_.q_len, Lk = p_.kv_len;
    const int ldq = H * D, ldk = Hk * D;
    const std::int64_t shift = std::int64_t(Lk) - Lq;
    float* S = s_.data();
    for (int b = 0; b < p_.batch; ++b)
      for (int h = 0; h < H; ++h) {
        const float* q = static_cast<const float*>(o.q) + (std::size_t(b) * Lq * H + h) * D;
        const float* k = static_cast<const float*>(o.k) + (std::size_t(b) * Lk * Hk + h / (H / Hk)) * D;
        const float* v = static_cast<const float*>(o.v) + (std::size_t(b) * Lk * Hk + h / (H / Hk)) * D;
        float* out = o.out + (std::size_t(b) * Lq * H + h) * D;
        const int step = p_.causal ? row_block : std::max(Lq, 1);
        for (int r0 = 0; r0 < Lq; r0 += step) {
          const int r1 = std::min(Lq, r0 + step);
          auto visible = [&](int i) {
            return p_.causal ? int(std::clamp<std::int64_t>(i + shift + 1, 0, Lk)) : Lk;
          };
          const int width = visible(r1 - 1);  // the block's widest row
          if (width == 0) {
            for (int i = r0; i < r1; ++i) std::fill(out + std::size_t(i) * ldq, out + std::size_t(i) * ldq + D, 0.0f);
            continue;
          }
          float* Sb = S + std::size_t(r0) * Lk;
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r1 - r0, width, D, p_.scale, q + std::size_t(r0) * ldq,
                      ldq, k, ldk, 0.0f, Sb, Lk);
          arena_->execute([&] {
            tbb::parallel_for(tbb::blocked_range<int>(r0, r1, 16), [&](const tbb::blocked_range<int>& rows) {
              for (int i = rows.begin(); i < rows.end(); ++i)
                inv_[std::size_t(i)] = softmax_row(S + std::size_t(i) * Lk, visible(i), width);
            });
          });
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r1 - r0, D, width, 1.0f, Sb, Lk, v, ldk, 0.0f,
                      out + std::size_t(r0) * ldq, ldq);
          for (int i = r0; i < r1; ++i) {
            float* row = out + std::size_t(i) * ldq;
            const float s = inv_[std::size_t(i)];
            for (int d = 0; d < D; ++d) row[d] *= s;
          }
        }
      }
  }

 private:
  struct widened {
    std::vector<float> q, k, v;
  };

  attention_problem p_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::vector<attention_operands> sets_;
  std::vector<widened> wide_;
  std::vector<float> s_, inv_;
};

}  // namespace

std::unique_ptr<attention_peer> make_attention_peer() { return std::make_unique<unfused_peer>(); }

}  // namespace tessel::bench
