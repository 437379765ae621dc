// tests/cuda/wgmma_skipping_test.cu — mma_skipping (core/tile_ops.hpp) on the sm90 group-scope wgmma atom, one warpgroup.
//
// Attention's O += P·V on the Hopper TMA schedule: P in registers (the atom's
// A fragments, 64 rows × BKV keys), V a swizzle128 BKV × D tile in shared
// memory, O the warpgroup's fp32 accumulator. tile_ops_sm90.hpp's
// mma_skipping (masked_a: P is zero where the mask hides) issues only the first
// half of the K slices where every one of the warpgroup's 64 rows hides the
// second half of the keys (the causal diagonal's first warpgroup), else all.
// For masks (core/math.hpp's hide_keys) that hide nothing, a causal diagonal at
// several offsets, rows that see no key, keys past the end and everything, each
// on random O, P and V:
//   the plain mma (P zero where hidden, V zero from the mask's last visible key
//   on, rounded up to the half) against float64: exact products, fp32 sums;
//   mma_skipping, where P is NaN on the half it may skip (every row hides it)
//   and V NaN from that same key on: bit for bit the plain mma's O. A policy
//   that skipped less would meet a NaN; one that skipped a product it needs,
//   or kept O's registers wrong across the shorter chain, would differ.
// Runs only where the sm90 policy would (policy_choice.hpp's use_sm90); skips elsewhere.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/one_warpgroup.hpp"
#include "device_buffer.hpp"
#include "seed.hpp"
#include "tessel/core/math.hpp"
#include "tessel/core/pipeline.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/cuda/policy_sm90.hpp"

namespace tessel::test {
namespace {

template <class T, int D, int BKV> struct skipping_case {
  using P = cuda::sm90;
  using atom = cuda::wgmma_m64k16<T, 64>;
  using tile_v = st<T, cuda::swizzle128<BKV, D, true>>;  // attention's layout_v
  static constexpr int smem_bytes = int(sizeof(T)) * BKV * D;
  struct params {
    const T* p;      // 64 × BKV, row-major
    gmatrix<const T> v;
    const float* o;  // 64 × D, row-major: O before
    float* out;      // O after
    hide_keys mask;
    bool skipping;
  };
  using problem = params;
  template <class Ctx> TESSEL_DEVICE static void run(Ctx& ctx, const params& p) {
    const tile_v sv{reinterpret_cast<T*>(ctx.smem())};
    P::load(ctx, sv, p.v, 0, 0);
    P::commit();
    P::template wait<0>();
    ctx.sync();
    unit_context<Ctx, group_scope<4>, 32> u(ctx, 0);
    const int lane = u.lane();
    rt<atom, operand::a, 1, BKV / 16> a;
    for (int k = 0; k < BKV / 16; ++k)
      for (int e = 0; e < atom::a_values; ++e) {
        const coord rc = atom::a_coord(lane, e);
        a.frag[0][k][e] = p.p[rc.row * BKV + 16 * k + rc.col];
      }
    rt<atom, operand::c, 1, D / 64> o;
    for (int j = 0; j < D / 64; ++j)
      for (int e = 0; e < atom::c_values; ++e) {
        const coord rc = atom::c_coord(lane, e);
        o.frag[0][j][e] = p.o[rc.row * D + 64 * j + rc.col];
      }
    if (p.skipping) P::mma_skipping(u, o, a, sv, 0, 0, masked_a<hide_keys>{p.mask}, true);
    else P::mma(u, o, a, sv, 0, 0);
    P::template mma_wait<0>(o);
    for (int j = 0; j < D / 64; ++j)
      for (int e = 0; e < atom::c_values; ++e) {
        const coord rc = atom::c_coord(lane, e);
        p.out[rc.row * D + 64 * j + rc.col] = o.frag[0][j][e];
      }
  }
};

template <class T, int D, int BKV> void expect_skipping(const std::string& what) {
  using Case = skipping_case<T, D, BKV>;
  static_assert(mma_skipping_of<cuda::sm90, unit_context<cuda::context, group_scope<4>, 32>,
                                rt<typename Case::atom, operand::c, 1, D / 64>,
                                rt<typename Case::atom, operand::a, 1, BKV / 16>, typename Case::tile_v,
                                masked_a<hide_keys>>::value,
                "the sm90 policy has mma_skipping for attention's P·V");
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  if (!cuda::use_sm90<Case, 128>())
    GTEST_SKIP() << "needs a device of compute capability 9.0 and this kernel built for sm_90a (wgmma)";
  std::mt19937_64 rng(case_seed("wgmma-skipping-" + what));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const device dev = device::cuda(0);
  support::device_buffer dp(dev, sizeof(T) * 64 * BKV), dv(dev, sizeof(T) * BKV * D), d_o(dev, sizeof(float) * 64 * D),
      dout(dev, sizeof(float) * 64 * D);
  std::vector<float> o(std::size_t(64) * D);
  for (float& x : o) x = dist(rng);
  d_o.upload(o.data(), o.size() * sizeof(float));
  constexpr int rows = 64, keys = BKV, half = BKV / 2;
  const hide_keys masks[] = {{keys, keys},     {keys, 1},          {keys, 1 - rows / 2}, {keys, -rows - 3},
                             {keys, 1 - rows}, {keys, half - rows + 5}, {half + 3, keys}, {keys, 33},
                             {0, 0},           {keys - 7, -2},    {keys, 1 + rows},     {half, keys}};
  auto run = [&](const std::vector<T>& p, const std::vector<T>& v, const hide_keys& m, bool skipping) {
    std::vector<float> out(o.size(), std::nanf(""));
    dp.upload(p.data(), p.size() * sizeof(T));
    dv.upload(v.data(), v.size() * sizeof(T));
    dout.upload(out.data(), out.size() * sizeof(float));
    typename Case::params prm{static_cast<const T*>(dp.data()),
                              {static_cast<const T*>(dv.data()), BKV, D, D, 1, true},
                              static_cast<const float*>(d_o.data()),
                              static_cast<float*>(dout.data()),
                              m,
                              skipping};
    const cudaError_t e = run_one_warpgroup<Case>(prm);
    EXPECT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e);
    dout.download(out.data(), out.size() * sizeof(float));
    return out;
  };
  for (const hide_keys& m : masks) {
    const std::string name = what + ", visible " + std::to_string(m.visible) + ", diagonal " + std::to_string(m.diagonal);
    // The keys the policy may skip (P NaN there, V's rows NaN from there on):
    // the second half, where every row hides it.
    const int last = m.hidden_from(rows - 1) < 0 ? 0 : m.hidden_from(rows - 1);
    const int skipped_from = last <= half ? half : keys;
    std::vector<T> p(std::size_t(rows) * keys), p_nan(p.size()), v(std::size_t(keys) * D), v_nan(v.size());
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < keys; ++c) {
        const T x = convert<T>(c >= m.hidden_from(r) ? 0.0f : dist(rng));
        p[std::size_t(r) * keys + c] = x;
        p_nan[std::size_t(r) * keys + c] = c >= skipped_from ? convert<T>(std::nanf("")) : x;
      }
    for (int k = 0; k < keys; ++k)
      for (int d = 0; d < D; ++d) {
        const T x = convert<T>(dist(rng));
        v[std::size_t(k) * D + d] = k >= skipped_from ? convert<T>(0.0f) : x;
        v_nan[std::size_t(k) * D + d] = k >= skipped_from ? convert<T>(std::nanf("")) : x;
      }
    const std::vector<float> plain = run(p, v, m, false), got = run(p_nan, v_nan, m, true);
    double num = 0, den = 0;
    long unwritten = 0;
    for (int r = 0; r < rows; ++r)
      for (int d = 0; d < D; ++d) {
        double ref = o[std::size_t(r) * D + d];
        for (int k = 0; k < keys; ++k)
          ref += double(to_float(p[std::size_t(r) * keys + k])) * to_float(v[std::size_t(k) * D + d]);
        const double g = plain[std::size_t(r) * D + d];
        unwritten += !std::isfinite(g);
        num += (g - ref) * (g - ref);
        den += ref * ref;
      }
    EXPECT_EQ(unwritten, 0) << name << ": the plain mma's O not written (or not finite)";
    EXPECT_LT(std::sqrt(num / den), 1e-6) << name << ": the plain mma against float64";
    EXPECT_EQ(std::memcmp(got.data(), plain.data(), got.size() * sizeof(float)), 0)
        << name << ": mma_skipping's O not the plain mma's (P and V NaN from key " << skipped_from << ")";
  }
}

TEST(WgmmaSkipping, PvSkipsOnlyTheHiddenHalf_bf16_D64) { expect_skipping<bf16, 64, 128>("bf16 D64"); }
TEST(WgmmaSkipping, PvSkipsOnlyTheHiddenHalf_fp16_D128) { expect_skipping<fp16, 128, 128>("fp16 D128"); }
TEST(WgmmaSkipping, PvSkipsOnlyTheHiddenHalf_bf16_D128) { expect_skipping<bf16, 128, 128>("bf16 D128"); }
TEST(WgmmaSkipping, PvSkipsOnlyTheHiddenHalf_fp16_D64_BKV64) { expect_skipping<fp16, 64, 64>("fp16 D64 BKV64"); }

}  // namespace
}  // namespace tessel::test
