// tests/cuda/attention_sm90_test.cu — the two sm_90a attention configurations, launched directly.
//
// The library runs attention on the Hopper TMA schedule (cooperative consumer
// warpgroups, resident Q slots, 4-D tensor maps over [batch, seq, heads,
// head_dim]) wherever tensor maps can describe q, k and v, and on the ring
// schedule with per-warp wgmma (sm90_ring_attention) otherwise; at head_dim 64
// on a persistent grid (two Q slots): causal calls heaviest first, dealt in
// alternating rounds, the others its config's `non_causal` (head by head),
// picked by the dispatch; at head_dim 128 causal calls one block per unit, the
// others `non_causal` (a persistent grid, one Q slot). Here both schedules are
// launched on the same inputs, as attention.cu launches them, and each is
// checked against float64 (out: relative Frobenius error within the dtype's
// tolerance; LSE: absolute error below 1e-3; every element written, nothing
// outside the views touched); the public API's output must equal the TMA
// launch's bit for bit (the API takes that path), and a view a tensor map
// cannot describe must be refused by the TMA schedule (and so take the ring).
// Shapes: odd q_len / kv_len, GQA and MQA, causal with q_len < kv_len and
// q_len > kv_len (rows without keys), head-major views with padded rows,
// more units than blocks (each block's resident slots and stage ring wrap),
// more steps than stages, and a causal call on 8k keys (2 MiB of K/V a head:
// 18 heads fill nine groups of the 4 MiB heaviest-first config below,
// ops/attention/unit_order.hpp). Causal calls also run configs that order the
// units otherwise, one block per unit (heaviest first in 4 MiB groups; at
// head_dim 64, head by head), and every call a persistent grid with one Q
// slot: each must match float64 and the default config bit for bit.
// Runs only where the sm90 policy would.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "device_buffer.hpp"
#include "reference_attention.hpp"
#include "seed.hpp"
#include "tessel/cuda/attention_launch.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/cuda/policy_sm90.hpp"
#include "tessel/ops/attention/dispatch.hpp"
#include "tessel/tessel.hpp"

namespace tessel::test {
namespace {

struct att_case {
  int batch, q_len, kv_len, heads, kv_heads, head_dim;
  bool causal, heads_major;
  int pad;  // elements after each row (and each head / batch block)
  dtype type;
};

std::string describe(const att_case& c) {
  return "b" + std::to_string(c.batch) + " q" + std::to_string(c.q_len) + " kv" + std::to_string(c.kv_len) + " h" +
         std::to_string(c.heads) + "x" + std::to_string(c.kv_heads) + " d" + std::to_string(c.head_dim) +
         (c.causal ? " causal" : "") + (c.heads_major ? " bhsd" : "") + " pad" + std::to_string(c.pad) + " " +
         dtype_name(c.type);
}

// [b, s, h, d] strides of a padded buffer in either memory order.
struct layout {
  std::int64_t s[4], elements;
  layout(int b, int seq, int h, int d, bool heads_major, int pad) {
    const std::int64_t row = d + pad;
    s[3] = 1;
    if (heads_major) {
      s[1] = row, s[2] = seq * row + pad, s[0] = h * s[2] + pad;
    } else {
      s[2] = row, s[1] = h * row + pad, s[0] = seq * s[1] + pad;
    }
    elements = b * s[0];
  }
  tensor_view view(void* p, dtype t, std::int64_t b, std::int64_t seq, std::int64_t h, std::int64_t d,
                   const device& dev) const {
    return tensor_view::strided(p, t, {b, seq, h, d}, {s[0], s[1], s[2], s[3]}, dev);
  }
};

constexpr std::uint16_t poison_bits = 0x7fc1;  // NaN in bf16 and fp16 alike: an unwritten element shows

struct outcome {
  std::vector<std::uint16_t> out;
  std::vector<float> lse;
};

void check(const att_case& c, const char* what, const outcome& got, const layout& lq,
           const support::attention_reference& ref, const std::vector<bool>& inside) {
  double num = 0, den = 0, lse_err = 0;
  std::int64_t unwritten = 0, touched = 0;
  const auto value = [&](std::uint16_t b) {
    return c.type == dtype::bf16 ? double(to_float(bf16::from_bits(b))) : double(to_float(fp16::from_bits(b)));
  };
  for (std::size_t i = 0; i < got.out.size(); ++i)
    if (!inside[i] && got.out[i] != poison_bits) ++touched;
  std::size_t n = 0;
  for (int b = 0; b < c.batch; ++b)
    for (int s = 0; s < c.q_len; ++s)
      for (int h = 0; h < c.heads; ++h)
        for (int d = 0; d < c.head_dim; ++d, ++n) {
          const std::uint16_t bits = got.out[std::size_t(b * lq.s[0] + s * lq.s[1] + h * lq.s[2] + d)];
          const double g = value(bits), r = ref.out[n];
          if (std::isnan(g)) {
            ++unwritten;
            continue;
          }
          num += (g - r) * (g - r);
          den += r * r;
        }
  for (std::size_t i = 0; i < ref.lse.size(); ++i) {
    const double r = ref.lse[i], g = got.lse[i];
    if (std::isinf(r)) {
      EXPECT_TRUE(std::isinf(g) && g < 0) << what << " " << describe(c) << ": LSE " << i << " = " << g;
      continue;
    }
    lse_err = std::max(lse_err, std::fabs(g - r));
  }
  const double tol = c.type == dtype::bf16 ? 1e-2 : 2e-3;
  EXPECT_EQ(unwritten, 0) << what << " " << describe(c) << ": out elements not written (or NaN)";
  EXPECT_EQ(touched, 0) << what << " " << describe(c) << ": elements outside the out view written";
  EXPECT_LT(std::sqrt(num / (den > 0 ? den : 1)), tol) << what << " " << describe(c) << ": out vs float64";
  EXPECT_LT(lse_err, 1e-3) << what << " " << describe(c) << ": LSE vs float64";
}

// Two other orders of the causal units, one block per unit (4 stages at
// head_dim 64): heaviest first (ops/attention/unit_order.hpp) in groups of
// 4 MiB of K/V (the 8k-key case: two K/V heads a group, nine groups); and, at
// head_dim 64, head by head (the default there is one group of every head,
// dealt to a persistent grid in alternating rounds: core/pipeline.hpp
// dealt_unit). Configs a user may pick (bench/notes/cuda_attention.md Run 13).
struct sm90_heaviest_first : cuda::sm90 {
  template <class T, int D>
  using attention_config = cuda::sm90_tma_attention_config<T, D, 128, (D >= 128 ? 3 : 4), 2, false, true, (4LL << 20)>;
};
struct sm90_head_by_head : cuda::sm90 {
  template <class T, int D>
  using attention_config = cuda::sm90_tma_attention_config<T, D, 128, (D >= 128 ? 3 : 4), 2, false, true, 0>;
};
// A persistent grid with one Q slot (the next unit's Q copied once the
// consumers are done with the unit before) at both head_dims, causal calls
// dealt in one group; hd 128 fits it in 3 stages (192 + 32 KiB).
struct sm90_one_q_slot : cuda::sm90 {
  template <class T, int D>
  using attention_config =
      cuda::sm90_tma_attention_config<T, D, 128, (D >= 128 ? 3 : 5), 2, true, true, heaviest_first_all_heads, 1>;
};

// Three consumer warpgroups at head_dim 64 (BQ 192, FlashAttention-3's
// arrangement there) beside the producer, taking turns in a ring of three
// (schedule SelfLoad = false, 152 registers a consumer lane); head_dim 128 the
// default config. Other query tiles than the default's (192 rows): checked
// against float64 only.
struct sm90_three_consumers : cuda::sm90 {
  template <class T, int D>
  using attention_config = std::conditional_t<(D < 128), cuda::sm90_tma_attention_config<T, D, 128, 5, 3>,
                                              cuda::sm90_tma_attention_config<T, D>>;
};

void expect_paths(const att_case& c) {
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  using probe = ops::attention_kernel<cuda::sm90, bf16, 128>;
  if (!cuda::use_sm90<probe, probe::warps * cuda::warp_lanes>())
    GTEST_SKIP() << "needs a device of compute capability 9.0 and this kernel built for sm_90a";
  const std::uint64_t seed = case_seed("attention-sm90-" + describe(c));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const layout lq(c.batch, c.q_len, c.heads, c.head_dim, c.heads_major, c.pad);
  const layout lkv(c.batch, c.kv_len, c.kv_heads, c.head_dim, c.heads_major, c.pad);
  const auto bits = [&](float x) {
    return c.type == dtype::bf16 ? convert<bf16>(x).bits : convert<fp16>(x).bits;
  };
  std::vector<std::uint16_t> q(std::size_t(lq.elements), poison_bits), k(std::size_t(lkv.elements), poison_bits),
      v(std::size_t(lkv.elements), poison_bits);
  std::vector<bool> inside(q.size(), false);
  for (int b = 0; b < c.batch; ++b)
    for (int s = 0; s < c.q_len; ++s)
      for (int h = 0; h < c.heads; ++h)
        for (int d = 0; d < c.head_dim; ++d) {
          const std::size_t i = std::size_t(b * lq.s[0] + s * lq.s[1] + h * lq.s[2] + d);
          q[i] = bits(u(rng));
          inside[i] = true;
        }
  for (auto* t : {&k, &v})
    for (int b = 0; b < c.batch; ++b)
      for (int s = 0; s < c.kv_len; ++s)
        for (int h = 0; h < c.kv_heads; ++h)
          for (int d = 0; d < c.head_dim; ++d) (*t)[std::size_t(b * lkv.s[0] + s * lkv.s[1] + h * lkv.s[2] + d)] = bits(u(rng));
  const double scale = 1.0 / std::sqrt(double(c.head_dim));
  const device host = device::host();
  const support::attention_reference ref = support::reference_attention(
      lq.view(q.data(), c.type, c.batch, c.q_len, c.heads, c.head_dim, host),
      lkv.view(k.data(), c.type, c.batch, c.kv_len, c.kv_heads, c.head_dim, host),
      lkv.view(v.data(), c.type, c.batch, c.kv_len, c.kv_heads, c.head_dim, host), c.causal, scale);

  const device dev = device::cuda(0);
  support::device_buffer dq(dev, q.size() * 2), dk(dev, k.size() * 2), dv(dev, v.size() * 2), dout(dev, q.size() * 2);
  const std::size_t lse_n = std::size_t(c.batch) * c.heads * c.q_len;
  support::device_buffer dl(dev, lse_n * 4);
  dq.upload(q.data(), q.size() * 2);
  dk.upload(k.data(), k.size() * 2);
  dv.upload(v.data(), v.size() * 2);

  attention_call call{};
  call.q = {dq.data(), lq.s[0], lq.s[1], lq.s[2]};
  call.k = {dk.data(), lkv.s[0], lkv.s[1], lkv.s[2]};
  call.v = {dv.data(), lkv.s[0], lkv.s[1], lkv.s[2]};
  call.out = {dout.data(), lq.s[0], lq.s[1], lq.s[2]};
  call.lse = static_cast<float*>(dl.data());
  call.lse_batch_stride = std::int64_t(c.heads) * c.q_len, call.lse_head_stride = c.q_len, call.lse_seq_stride = 1;
  call.type = c.type;
  call.batch = c.batch, call.heads = c.heads, call.kv_heads = c.kv_heads, call.q_len = c.q_len, call.kv_len = c.kv_len;
  call.head_dim = c.head_dim, call.causal = c.causal, call.scale = float(scale), call.device = 0;

  const auto run = [&](auto policy_tag, bool api) {
    using Policy = typename decltype(policy_tag)::type;
    const std::vector<std::uint16_t> poison(q.size(), poison_bits);
    const std::vector<float> lse_poison(lse_n, std::nanf(""));
    dout.upload(poison.data(), poison.size() * 2);
    dl.upload(lse_poison.data(), lse_n * 4);
    if (api) {
      attention_options o;
      o.causal = c.causal;
      o.scale = float(scale);
      o.lse = tensor_view::contiguous(dl.data(), dtype::f32, {c.batch, c.heads, c.q_len}, dev);
      attention(lq.view(dq.data(), c.type, c.batch, c.q_len, c.heads, c.head_dim, dev),
                lkv.view(dk.data(), c.type, c.batch, c.kv_len, c.kv_heads, c.head_dim, dev),
                lkv.view(dv.data(), c.type, c.batch, c.kv_len, c.kv_heads, c.head_dim, dev),
                lq.view(dout.data(), c.type, c.batch, c.q_len, c.heads, c.head_dim, dev), o);
    } else {
      ops::attention_dispatch<Policy>(call, cuda::attention_launcher{nullptr});
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << describe(c);
    outcome r{std::vector<std::uint16_t>(q.size()), std::vector<float>(lse_n)};
    dout.download(r.out.data(), r.out.size() * 2);
    dl.download(r.lse.data(), lse_n * 4);
    return r;
  };
  struct tma_tag {
    using type = cuda::sm90;
  };
  struct ring_tag {
    using type = cuda::sm90_ring_attention;
  };
  struct heaviest_first_tag {
    using type = sm90_heaviest_first;
  };
  struct head_by_head_tag {
    using type = sm90_head_by_head;
  };
  struct one_q_slot_tag {
    using type = sm90_one_q_slot;
  };
  struct three_consumers_tag {
    using type = sm90_three_consumers;
  };
  bool tma = false;
  ops::attention_dispatch<cuda::sm90>(call, cuda::attention_tma_applies{tma});
  const bool describable = (c.pad * 2) % 16 == 0;
  EXPECT_EQ(tma, describable) << describe(c) << ": whether tensor maps describe the views";
  const outcome ring = run(ring_tag{}, false);
  check(c, "ring", ring, lq, ref, inside);
  if (!tma) return;
  const outcome direct = run(tma_tag{}, false);
  check(c, "tma", direct, lq, ref, inside);
  const outcome api = run(tma_tag{}, true);
  EXPECT_EQ(std::memcmp(api.out.data(), direct.out.data(), api.out.size() * 2), 0)
      << describe(c) << ": the API did not take the TMA schedule";
  // The same units in another order (or on another grid) compute the same
  // values: bit for bit the default config's.
  const auto same_as_direct = [&](const char* what, const outcome& o) {
    check(c, what, o, lq, ref, inside);
    EXPECT_EQ(std::memcmp(o.out.data(), direct.out.data(), o.out.size() * 2), 0)
        << what << " " << describe(c) << ": out differs from the default config's";
    EXPECT_EQ(std::memcmp(o.lse.data(), direct.lse.data(), o.lse.size() * 4), 0)
        << what << " " << describe(c) << ": LSE differs from the default config's";
  };
  // (hd 128 without a mask: the default config already runs one Q slot.)
  if (c.causal || c.head_dim < 128) same_as_direct("one Q slot", run(one_q_slot_tag{}, false));
  if (c.head_dim < 128) check(c, "three consumers", run(three_consumers_tag{}, false), lq, ref, inside);
  if (!c.causal) return;  // (the unit orders below apply to causal calls only)
  same_as_direct("heaviest first", run(heaviest_first_tag{}, false));
  if (c.head_dim < 128) same_as_direct("head by head", run(head_by_head_tag{}, false));
}

const att_case cases[] = {
    {1, 1, 1, 1, 1, 64, false, false, 0, dtype::bf16},
    {2, 17, 200, 4, 2, 64, true, false, 0, dtype::bf16},      // GQA, causal, q < kv
    {2, 200, 17, 4, 2, 128, true, false, 0, dtype::f16},      // causal q > kv: rows without keys
    {1, 1000, 1000, 2, 2, 128, false, false, 0, dtype::bf16},  // 8 steps per unit > stages
    {1, 1000, 1000, 2, 1, 64, true, true, 8, dtype::f16},      // MQA, head-major, padded rows
    {4, 520, 100, 32, 8, 64, false, false, 0, dtype::bf16},   // 640 units: every block several
    {2, 300, 700, 24, 8, 64, false, true, 8, dtype::f16},     // persistent hd64: 144 units, 6 steps > 5 stages
    {2, 260, 900, 6, 2, 128, true, true, 8, dtype::f16},      // padded head-major, causal, 8 steps
    {2, 70, 90, 6, 3, 128, true, false, 3, dtype::bf16},      // rows 6 bytes apart: the ring only
    {3, 130, 8192, 6, 6, 64, true, false, 0, dtype::bf16},    // causal, 8k keys, 18 (batch, head) pairs
};

TEST(AttentionSm90, TmaAndRingSchedules) {
  for (const att_case& c : cases) expect_paths(c);
}

}  // namespace
}  // namespace tessel::test
