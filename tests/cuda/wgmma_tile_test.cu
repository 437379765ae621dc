// tests/cuda/wgmma_tile_test.cu — the sm90 policy's wgmma tile mma, one warpgroup at a time.
//
// A 64 × BK A and a BK × N B (random, exact in T) travel global -> shared
// (swizzle128, either majorness) through the policy's own loads; the 4 warps of
// one warpgroup compute C = A·B with sm90_tile_ops::mma — A from shared memory
// or (register form) from this warp's 16 rows loaded by ldmatrix — and store
// C, which was poisoned, for a float64 check on the host. The shapes are the
// ones tessel's kernels use (GEMM 64×256×64; attention Q·Kᵀ 64×64×128 and
// P·V 64×{64,128}×64) and the other majorness and panel combinations.
// Runs only where the sm90 policy would (policy_choice.hpp's use_sm90); skips elsewhere.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/one_warpgroup.hpp"
#include "device_buffer.hpp"
#include "seed.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/cuda/policy_sm90.hpp"

namespace tessel::test {
namespace {

template <class T, int N, int BK, bool AK, bool BNC, bool RegisterA> struct wgmma_case {
  using P = cuda::sm90;
  using atom = cuda::mma_m16n8k16<T>;
  using tile_a = st<T, cuda::swizzle128<64, BK, AK>>;
  using tile_b = st<T, cuda::swizzle128<BK, N, BNC>>;
  static constexpr int smem_bytes = int(sizeof(T)) * (64 * BK + BK * N);
  struct params { gmatrix<const T> a, b; gmatrix<float> c; };
  using problem = params;  // what use_sm90 names the launched entry by
  template <class Ctx> TESSEL_DEVICE static void run(Ctx& ctx, const params& p) {
    const tile_a sa{reinterpret_cast<T*>(ctx.smem())};
    const tile_b sb{reinterpret_cast<T*>(ctx.smem() + sizeof(T) * 64 * BK)};
    P::load(ctx, sa, p.a, 0, 0);
    P::load(ctx, sb, p.b, 0, 0);
    P::commit();
    P::template wait<0>();
    ctx.sync();
    const int row0 = 16 * ctx.warp();
    rt_c<atom, 16, N> c;
    P::zero(c);
    if constexpr (RegisterA) {
      rt_a<atom, 16, BK> a;
      P::load(ctx, a, sa, row0, 0);
      P::mma(ctx, c, a, sb, 0, 0);
    } else {
      P::mma(ctx, c, sa, sb, row0, 0);
    }
    P::store(ctx, p.c, c, row0, 0, 1.0f, 0.0f);
  }
};

template <class Case, class T> void expect_product(int n, int bk, const std::string& what) {
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  if (!cuda::use_sm90<Case, 128>())
    GTEST_SKIP() << "needs a device of compute capability 9.0 and this kernel built for sm_90a (wgmma)";
  std::mt19937_64 rng(case_seed("wgmma-" + what));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<T> a(std::size_t(64) * bk), b(std::size_t(bk) * n);
  for (T& x : a) x = convert<T>(u(rng));
  for (T& x : b) x = convert<T>(u(rng));
  std::vector<float> c(std::size_t(64) * n, std::nanf(""));
  const device dev = device::cuda(0);
  support::device_buffer da(dev, a.size() * sizeof(T)), db(dev, b.size() * sizeof(T)), dc(dev, c.size() * sizeof(float));
  da.upload(a.data(), a.size() * sizeof(T));
  db.upload(b.data(), b.size() * sizeof(T));
  dc.upload(c.data(), c.size() * sizeof(float));
  // Row-major A and B, 16-byte aligned rows: the cp.async path where the tile's
  // majorness matches, the generic element copy where it does not.
  typename Case::params p{{static_cast<const T*>(da.data()), 64, bk, bk, 1, true},
                          {static_cast<const T*>(db.data()), bk, n, n, 1, true},
                          {static_cast<float*>(dc.data()), 64, n, n, 1, true}};
  const cudaError_t e = run_one_warpgroup<Case>(p);
  ASSERT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e);
  dc.download(c.data(), c.size() * sizeof(float));
  double num = 0, den = 0;
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0;
      for (int k = 0; k < bk; ++k) ref += double(to_float(a[std::size_t(i) * bk + k])) * to_float(b[std::size_t(k) * n + j]);
      const double got = c[std::size_t(i) * n + j];
      ASSERT_TRUE(std::isfinite(got)) << what << ": C(" << i << "," << j << ") not written";
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  EXPECT_LT(std::sqrt(num / den), 1e-6) << what;  // exact products, fp32 sums
}

#define TESSEL_WGMMA_CASE(NAME, T, N, BK, AK, BNC, REGA)                                        \
  TEST(WgmmaTileMma, NAME) {                                                                    \
    expect_product<wgmma_case<T, N, BK, AK, BNC, REGA>, T>(N, BK, #NAME);                       \
  }

// Shared × shared: (N, K, A K-major, B N-major).
TESSEL_WGMMA_CASE(GemmShape_bf16_N256_K64, bf16, 256, 64, true, true, false)
TESSEL_WGMMA_CASE(GemmShape_fp16_N256_K64, fp16, 256, 64, true, true, false)
TESSEL_WGMMA_CASE(AttentionScores_bf16_N64_K128_BKMajor, bf16, 64, 128, true, false, false)
TESSEL_WGMMA_CASE(AttentionScores_fp16_N64_K64_BKMajor, fp16, 64, 64, true, false, false)
TESSEL_WGMMA_CASE(MnMajorA_bf16_N128_K128_BKMajor, bf16, 128, 128, false, false, false)
TESSEL_WGMMA_CASE(MnMajorA_fp16_N64_K128_BNMajor, fp16, 64, 128, false, true, false)
// Registers × shared.
TESSEL_WGMMA_CASE(RegisterA_bf16_N128_K64_BNMajor, bf16, 128, 64, true, true, true)
TESSEL_WGMMA_CASE(RegisterA_fp16_N64_K64_BNMajor, fp16, 64, 64, true, true, true)
TESSEL_WGMMA_CASE(RegisterA_bf16_N256_K128_BKMajor, bf16, 256, 128, true, false, true)
TESSEL_WGMMA_CASE(RegisterA_fp16_N64_K128_BKMajor, fp16, 64, 128, true, false, true)

}  // namespace
}  // namespace tessel::test
