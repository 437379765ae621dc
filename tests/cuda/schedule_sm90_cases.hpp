// tests/cuda/schedule_sm90_cases.hpp — what the sm90 schedule tests share: a shape case, the
// check of one configuration on one case (expect_schedule), the common shapes.
//
// expect_schedule<Policy>(case, what) launches Policy's GEMM kernel directly on
// fresh random bf16 operands (C poisoned, or random where beta reads it) and
// checks C whole against the portable path and on 2048 sampled entries
// against float64; it skips where the sm90 policy would not run
// (policy_choice.hpp's use_sm90). Included by schedule_sm90_test.cu and
// schedule_sm90_split_test.cu, two translation units of one program (their
// kernels compile in parallel).
#pragma once
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "device_buffer.hpp"
#include "seed.hpp"
#include "tessel/cuda/gemm_instance.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/tessel.hpp"

namespace tessel::test {
namespace {

struct shape_case {
  int m, n, k, batch;
  bool ta, tb;
  float alpha, beta;
};

std::string describe(const shape_case& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " batch " +
         std::to_string(s.batch) + (s.ta ? " ta" : "") + (s.tb ? " tb" : "") + " alpha " + std::to_string(s.alpha) +
         " beta " + std::to_string(s.beta);
}

template <class Policy> void expect_schedule(const shape_case& s, const std::string& what) {
  using T = bf16;
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  using probe = ops::gemm_kernel<Policy, T, T, true, true>;
  if (!cuda::use_sm90<probe, probe::warps * cuda::warp_lanes>())
    GTEST_SKIP() << "needs a device of compute capability 9.0 and this kernel built for sm_90a";
  const std::uint64_t seed = case_seed("schedule-sm90-" + what + describe(s));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  // Packed operands: A [batch, M, K] (or [batch, K, M] when ta), B [batch, K, N] (or [batch, N, K]).
  const std::int64_t sa = std::int64_t(s.m) * s.k, sb = std::int64_t(s.k) * s.n, sc = std::int64_t(s.m) * s.n;
  std::vector<T> a(sa * s.batch), b(sb * s.batch), c0(sc * s.batch);
  for (T& x : a) x = convert<T>(u(rng));
  for (T& x : b) x = convert<T>(u(rng));
  for (T& x : c0) x = convert<T>(u(rng));
  const device dev = device::cuda(0);
  support::device_buffer da(dev, a.size() * 2), db(dev, b.size() * 2), dc(dev, c0.size() * 2), dr(dev, c0.size() * 2);
  da.upload(a.data(), a.size() * 2);
  db.upload(b.data(), b.size() * 2);
  std::vector<T> poison(c0.size());
  for (T& x : poison) x = T::from_bits(0x7fc1);  // NaN: an unwritten element shows
  dc.upload(s.beta != 0.0f ? c0.data() : poison.data(), c0.size() * 2);
  dr.upload(s.beta != 0.0f ? c0.data() : poison.data(), c0.size() * 2);

  // The call as src/gemm.cpp reduces it (transposes folded into the strides).
  gemm_call call{};
  call.a = {da.data(), s.ta ? 1 : s.k, s.ta ? s.m : 1, sa};
  call.b = {db.data(), s.tb ? 1 : s.n, s.tb ? s.k : 1, sb};
  call.c = {dc.data(), s.n, 1, sc};
  call.in = call.out = dtype::bf16;
  call.m = s.m, call.n = s.n, call.k = s.k, call.batch = s.batch;
  call.alpha = s.alpha, call.beta = s.beta;
  bool fits = false;  // the kernel is launched directly: no aligned copy of what a tensor map cannot describe
  cuda::sm90_applies<T, T> check{fits};
  ops::gemm_typed<Policy, T, T>(call, check);
  ASSERT_TRUE(fits) << what << " " << describe(s)
                    << ": no tensor map describes these operands, so this shape cannot test the kernel";
  cuda::gemm_launcher launch{nullptr};
  ops::gemm_typed<Policy, T, T>(call, launch);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what << " " << describe(s);

  // The portable path on the same inputs, through the public API.
  const auto view = [&](void* p, std::int64_t r, std::int64_t cols) {
    return tensor_view::contiguous(p, dtype::bf16, {s.batch, r, cols}, dev);
  };
  gemm_options o;
  o.alpha = s.alpha, o.beta = s.beta, o.trans_a = s.ta, o.trans_b = s.tb, o.path = kernel_path::portable;
  gemm(view(da.data(), s.ta ? s.k : s.m, s.ta ? s.m : s.k), view(db.data(), s.tb ? s.n : s.k, s.tb ? s.k : s.n),
       view(dr.data(), s.m, s.n), o);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<T> got(c0.size()), portable(c0.size());
  dc.download(got.data(), got.size() * 2);
  dr.download(portable.data(), portable.size() * 2);

  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = to_float(got[i]), r = to_float(portable[i]);
    ASSERT_TRUE(std::isfinite(g)) << what << " " << describe(s) << ": C element " << i << " not written";
    num += (g - r) * (g - r);
    den += r * r;
  }
  EXPECT_LT(std::sqrt(num / den), 2 * 0.0078125) << what << " " << describe(s) << ": vs the portable path";

  std::uniform_int_distribution<std::int64_t> pick(0, std::int64_t(got.size()) - 1);
  double enum_ = 0, eden = 0;
  for (int t = 0; t < 2048; ++t) {
    const std::int64_t e = pick(rng), z = e / sc, i = (e % sc) / s.n, j = e % s.n;
    double ref = 0;
    for (int kk = 0; kk < s.k; ++kk) {
      const double av = to_float(a[z * sa + (s.ta ? std::int64_t(kk) * s.m + i : i * s.k + kk)]);
      const double bv = to_float(b[z * sb + (s.tb ? j * s.k + kk : std::int64_t(kk) * s.n + j)]);
      ref += av * bv;
    }
    ref = s.alpha * ref + (s.beta != 0.0f ? s.beta * double(to_float(c0[e])) : 0.0);
    const double g = to_float(got[e]);
    enum_ += (g - ref) * (g - ref);
    eden += ref * ref;
  }
  EXPECT_LT(std::sqrt(enum_ / eden), 0.0078125) << what << " " << describe(s) << ": vs float64 (seed " << seed << ")";
}

const shape_case shapes[] = {
    {2048, 2048, 1024, 1, false, false, 1.0f, 0.0f},  // 2 units per block at 128 × 128, 16 steps
    {1000, 1800, 1000, 1, false, true, 0.5f, 0.25f},  // edges in M, N and K; alpha, beta
    {640, 1152, 704, 3, true, false, 1.0f, 0.0f},     // a batch, A transposed
    {1536, 2304, 448, 2, true, true, 1.0f, 1.0f},     // both transposed, batched, beta
    // Cluster pairs at 128 × 256: 640 x 1152 has 5 x 5 tiles per layer, 75 in
    // all — an odd count (the last pair's second block a copy, not stored),
    // pairs across B columns (strips of 5 block-rows) and across layers, so
    // not multicast; the others pair within strips and multicast B, by panels
    // (B N-contiguous) or by halves of each panel's lines (B K-contiguous).
    {100, 200, 3000, 1, false, true, 1.0f, 0.0f},  // one unit: a pair whose second block only helps load
};

}  // namespace
}  // namespace tessel::test
