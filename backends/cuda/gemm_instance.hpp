// tessel/cuda/gemm_instance.hpp — the body of each gemm_<in>_<out>.cu: the GEMM
// for one type pair on the sm90 policy (TMA + wgmma) where it applies — its
// units split by steps (sm90_split_units, or the 128 × 128 units of
// sm90_split_narrow or 64 × 128 of sm90_split_short: choose_split_tile) where
// the split plan says that pays on this device, whole on those smaller units
// where their waves cost less (choose_split_tile, cheaper_whole_tile), on a
// plain-store kernel (sm90_plain_store, or sm90_wide_store where its
// 192 × 256 blocks fill the waves better, sm90_n192_store where its 128 × 192
// ones do: cheaper_whole_tile) for C = A·B as it is into a
// TMA-storable C — else on the sm80 policy, launched through launch.hpp. An
// operand no tensor map can describe is first copied aligned where that pays
// (operand_copy.hpp).
#pragma once
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "tessel/core/split_plan.hpp"
#include "tessel/cuda/gemm_paths.hpp"
#include "tessel/cuda/operand_copy.hpp"
#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/cuda/policy_sm90.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::cuda {

template <class Tag, class Problem> void gemm_launcher::operator()(Tag, const Problem& problem) const {
  using K = typename Tag::type;
  constexpr int threads = K::warps * warp_lanes;
  launch<K, threads>(K::shape(problem), K::prepare(problem), stream);
}

// Whether the sm90 kernel can take this call: its operands fit tensor maps.
template <class TIn, class TOut> struct sm90_applies {
  bool& ok;
  template <class Tag, class Problem> void operator()(Tag, const Problem& problem) const {
    using K = typename Tag::type;
    ok = K::schedule::template supports<typename K::op>(problem);
  }
};

// Whether the plain-store kernel can take this call: C = A·B as it is (alpha 1,
// beta 0) into an output a tensor map describes.
struct plain_store_applies {
  bool& ok;
  template <class Tag, class Problem> void operator()(Tag, const Problem& problem) const {
    using K = typename Tag::type;
    ok = problem.alpha == 1.0f && problem.beta == 0.0f &&
         K::schedule::template stores_by_tma<typename K::op>(problem);
  }
};

// The current device's SM count, 0 where it cannot be read (no split, no wide tile).
inline int device_sms() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 0;
  return sms;
}

// What a split kernel's plan (the schedule's own, from the op's units and
// steps) does with a call on a device of `sms` SMs: whether it splits, and
// how many blocks run at once (the pieces where it splits, else the units, at
// most the grid), and whether every unit runs at once (one wave).
struct split_option {
  bool splits = false;
  int blocks = 0;
  bool one_wave = false;
};
struct split_option_of {
  split_option& option;
  int sms;
  template <class Tag, class Problem> void operator()(Tag, const Problem& problem) const {
    using K = typename Tag::type;
    option = split_option{};
    if (sms <= 0) return;
    const split_plan sp = K::schedule::template plan<typename K::op>(problem, sms * blocks_per_sm<K>::value);
    option.splits = sp.splits();
    option.blocks = sp.splits() ? sp.blocks : int(sp.units < sp.grid ? sp.units : sp.grid);
    option.one_wave = sp.units <= sp.grid;
  }
};

// How many waves `units` take on a device of `sms` SMs (one block an SM).
inline long long waves_of(long long units, int sms) { return (units + sms - 1) / sms; }

// Whether the wide plain-store kernel (sm90_wide_store: 192 × 256 blocks) takes
// a plain-store call: where its waves cost no more than the 128 × 256 kernel's
// on a device of `sms` SMs (0: never), a wave taking one unit's time and a
// 192-row unit 1.5 times a 128-row one. At equal cost the wide tile's faster step (+0.6-4.7%, H100,
// gemm_config.hpp) is what it gains; where 192 rows leave a partial tile or a
// fuller last wave (4096³: 3 wide waves against 4 narrow) it would lose.
inline bool wide_tile_pays(int m, int n, int batch, int sms) {
  if (sms <= 0) return false;
  const long long columns = (n + 255) / 256 * (long long)batch;
  return 3 * waves_of((m + 191) / 192 * columns, sms) <= 2 * waves_of((m + 127) / 128 * columns, sms);
}

// A call's cost on a kernel whose units (tile_m × tile_n of C) run whole, on
// a device of `sms` SMs: its waves × (a unit's steps of 64 in K × its area,
// in 128 × 256 units, × its cost per area + a unit's fixed part, its start
// and epilogue, about one 128 × 256 step).
inline double whole_units_cost(int tile_m, int tile_n, double per_area, int m, int n, int k, int batch, int sms) {
  const long long units = (long long)((m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n) * batch;
  const double area = double(tile_m) * tile_n / (128.0 * 256.0);
  return double(waves_of(units, sms)) * (area * per_area * double((k + 63) / 64) + 1);
}

// Which kernel runs a call whose units run whole where smaller units fill
// its waves better than the unsplit kernel's (192 × 256 where `wide`, else
// 128 × 256): the 128 × 128 units (sm90_split_narrow) or, where `plain` (the
// plain-store kernels apply), the 128 × 192 ones (sm90_n192_store), on a
// device of `sms` SMs (0: the unsplit kernel). By whole_units_cost, per area
// a 128 × 128 step costing 1.07 times a 128 × 256 one, a 128 × 192 step 1.04
// times and a 192 × 256 step 0.97 times; a smaller tile is taken where it
// costs 3% less than the unsplit kernel, the cheaper of the two where both do.
// Fitted on an H200 (bench/notes/cuda_gemm.md): 128 × 128 in session 41
// against the unsplit kernel at 1536³ −8%, 2048³ −6%, 2560³ −8%,
// 3072 × 3072 × 1024 +1%, 3072³ +9%, then checked on seven more shapes, each
// within 2 points of the prediction (taken at 1024 × 6144 × 4096 +21%,
// predicted +23%; 2048 × 5120² +6% (+7%), 2560 × 4096² +7% (+7%),
// 4096 × 3584 × 4096 +4% (+5%); not at 5120³ −2% (0%), 3072 × 4096² −9%
// (−11%), 4096³ −8% (−8%)); 128 × 192 in session 42 against the kernel
// chosen before (bf16 in, bf16 and fp32 C) at 3072³ +14 to +15% (predicted
// +16%), 1536³ +21 to +24% (+27%); not taken at 5120³ +1% (−1%),
// 4608 × 3072 × 4096 ±0 (−3%), 4096³ −10 to −12% (−15%),
// 6144 × 3072 × 4096 and 3072 × 6144 × 4096 −5 to −6% (−8%),
// 2048 × 6144 × 4096 −3 to −4% (−8%).
enum class whole_tile { unsplit, units_128x128, units_128x192 };
inline whole_tile cheaper_whole_tile(int m, int n, int k, int batch, int sms, bool wide, bool plain) {
  if (sms <= 0) return whole_tile::unsplit;
  const double unsplit = wide ? whole_units_cost(192, 256, 0.97, m, n, k, batch, sms)
                              : whole_units_cost(128, 256, 1.0, m, n, k, batch, sms);
  whole_tile pick = whole_tile::unsplit;
  double bar = unsplit / 1.03;
  const double narrow = whole_units_cost(128, 128, 1.07, m, n, k, batch, sms);
  if (narrow < bar) pick = whole_tile::units_128x128, bar = narrow;
  if (plain && whole_units_cost(128, 192, 1.04, m, n, k, batch, sms) < bar) pick = whole_tile::units_128x192;
  return pick;
}

// Which split kernel runs a call: none (the unsplit kernels), the 128 × 256
// units (sm90_split_units), the 128 × 128 ones (sm90_split_narrow) or the
// 64 × 128 ones (sm90_split_short), from what the three kernels' plans do
// with it (in pieces where either 128-row plan splits; else whole, where
// the smaller units all run at once), C's rows m (of a layer) and columns n.
// Measured on an H200 (bench/notes/cuda_gemm.md, sessions 39-41; bf16 in):
// - m ≤ 64: the 64 × 128 units (one consumer warpgroup, no rows of MMA past
//   C's 64; 8 stages: 128 KiB of B in flight a block) ran +7 to +25% over
//   the 128-row kernels' choice and +11 to +37% over the 128 × 128 units at
//   16-64 rows × 1024-14336 × 4096-14336 (sessions 39 and 40).
// - 96 ≤ m ≤ 128: two rows of 64 × 128 units, the second at least half
//   full: +8 to +33% at 128 rows × 2048-14336 × 2048-14336 (each row of
//   units reads all of B), +1 to +2% at 96 × 4096²; at
//   80 × 4096² (a second row a quarter full) −4 to −6%, so below 96 rows:
// - 64 < m < 96 (one row of 128-row units): the pieces stream B from
//   memory, so what bounds them is the bytes of B in flight: 128 KiB a block
//   on 128 × 256 units (4 stages of 32 KiB), 96 KiB on 128 × 128 ones (6 of
//   16 KiB). The 128 × 128 units where their blocks keep more in flight
//   (16-128 × 4096²: 128 blocks against 80, +11 to +29%; at as many blocks,
//   16 × 8192² and 16 × 4096 × 14336, they ran 12-30% slower), or where
//   n ≤ 128 (the 128 × 256 units would multiply columns past C).
// - m > 128: the 64 × 128 units where all of them run at once (their own
//   plan: in pieces or whole): +4 to +34% at 1024 × 1024 × 4096,
//   256 × 512 × 16384, 200 × 704 × 4096, 640 × 1024 × 2048, 256 × 4096²,
//   −1.5% at 256 × 2048 × 8192; in two waves −24% (512 × 4096²) or +0-2%
//   (1280 × 1024 × 2048). Else
//   the 128 × 128 units where they run on as many blocks or more —
//   in fewer pieces or whole, so fewer or no partials to pass (1024 × 1024 ×
//   4096 in 2 pieces against 4: +19-21%; 512 × 4096² and 256 × 8192² whole
//   against 2 pieces: +25% and +8-10%); on fewer blocks (4 × 512 × 512 ×
//   2048: 64 units whole against 32 in 4 pieces, not measured) the 128 × 256
//   units.
// - neither 128-row plan splits (K too short for a piece to pay its fixed
//   steps): the units run whole, on the 64 × 128 kernel where all its units
//   run at once (at m ≤ 64 or m ≥ 96), else on the 128 × 128 one where all
//   of its do, else on the unsplit kernels (128 × 256, or 192 × 256 where
//   that pays). So a call of few 128 × 256 units spreads over more SMs:
//   768³ +75-82% and 1024³ +85-87% on 64 × 128 units (72 and 128 of them
//   against 18 and 32), 2048 × 1024 × 1024 +42-48% on 128 × 128 ones (128
//   against 64; 256 of 64 × 128 in two waves: +15-20%); where neither fits
//   one wave, 1536³ (72 units of 128 × 256) ran 8-13% slower on the smaller
//   units, 3072³ +8% on 128 × 128 ones (5 waves against 2 of 192 × 256)
//   (session 41, H200): there the 128 × 128 units where cheaper_whole_tile
//   picks them (`narrow_waves_cheaper`); where it picks 128 × 192 units
//   (1536³, 3072³: session 42), none here and the plain-store kernel on them.
// TESSEL_CUDA_SPLIT_TILE in the environment forces a kernel, to measure one
// against another: 128x256 where its own plan splits (elsewhere it would be
// the unsplit kernels' tile), 128x128 or 64x128 on every call of the TMA
// path (their plans may run the units whole: e.g. 1024³, 32 units of
// 128 × 256 on 32 SMs, is 128 units of 64 × 128), none the unsplit kernels
// on every call (the plain-store ones on the tile cheaper_whole_tile picks
// among 128 × 256, 192 × 256 and 128 × 192, or TESSEL_CUDA_PLAIN_TILE forces).
enum class split_tile { none, units_128x256, units_128x128, units_64x128 };
// The choice that environment variable `var` names among `names`: nullopt
// where it is unset or empty; a value named by none of them is an Error.
template <class E, std::size_t N>
std::optional<E> env_choice(const char* var, const std::pair<const char*, E> (&names)[N]) {
  const char* e = std::getenv(var);
  if (e == nullptr || *e == '\0') return std::nullopt;
  std::string choices;
  for (std::size_t i = 0; i < N; ++i) {
    if (std::strcmp(e, names[i].first) == 0) return names[i].second;
    choices += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + names[i].first;
  }
  throw Error(std::string("tessel cuda backend: ") + var + " must be " + choices + " (or unset), not '" + e + "'");
}
inline std::optional<split_tile> split_tile_forced() {
  static const std::pair<const char*, split_tile> names[] = {{"128x256", split_tile::units_128x256},
                                                             {"128x128", split_tile::units_128x128},
                                                             {"64x128", split_tile::units_64x128},
                                                             {"none", split_tile::none}};
  static const std::optional<split_tile> forced = env_choice("TESSEL_CUDA_SPLIT_TILE", names);
  return forced;
}
inline split_tile choose_split_tile(split_option units_128x256, split_option units_128x128,
                                    split_option units_64x128, int m, int n, bool narrow_waves_cheaper,
                                    std::optional<split_tile> forced = std::nullopt) {
  const split_option &wide = units_128x256, &narrow = units_128x128, &shorter = units_64x128;
  if (forced == split_tile::units_128x256) return wide.splits ? *forced : split_tile::none;
  if (forced) return *forced;
  if (!wide.splits && !narrow.splits) {
    // Units whole: the smaller units where all of them run at once (the
    // 64 × 128 ones first, but not for one row of 128-row units).
    if (shorter.one_wave && (m <= 64 || m >= 96)) return split_tile::units_64x128;
    return narrow.one_wave || narrow_waves_cheaper ? split_tile::units_128x128 : split_tile::none;
  }
  if (m <= 64 || (m >= 96 && m <= 128) || (m > 128 && shorter.one_wave)) return split_tile::units_64x128;
  if (m > 128)
    return narrow.blocks >= wide.blocks || !wide.splits ? split_tile::units_128x128 : split_tile::units_128x256;
  if (narrow.splits && (n <= 128 || 3LL * narrow.blocks > 4LL * wide.blocks)) return split_tile::units_128x128;
  return wide.splits ? split_tile::units_128x256 : split_tile::none;
}

// TESSEL_CUDA_PLAIN_TILE in the environment forces the plain-store kernel's
// tile where a call runs on the plain-store kernels (no split kernel): 128x256
// (sm90_plain_store), 192x256 (sm90_wide_store) or 128x192 (sm90_n192_store).
enum class plain_tile { units_128x256, units_192x256, units_128x192 };
inline std::optional<plain_tile> plain_tile_forced() {
  static const std::pair<const char*, plain_tile> names[] = {{"128x256", plain_tile::units_128x256},
                                                             {"192x256", plain_tile::units_192x256},
                                                             {"128x192", plain_tile::units_128x192}};
  static const std::optional<plain_tile> forced = env_choice("TESSEL_CUDA_PLAIN_TILE", names);
  return forced;
}

// Runs `call` on the sm90 policy (on 128 × 256, 128 × 128 or 64 × 128 split
// units, in pieces or whole; plain-store — 192 × 256 or 128 × 192 where that
// pays, else 128 × 256 — or general) where its operands fit tensor maps; false
// where they do not (nothing launched).
template <class TIn, class TOut> bool gemm_sm90(const gemm_call& call, gemm_launcher& launch) {
  bool tma = false;
  sm90_applies<TIn, TOut> check_tma{tma};
  ops::gemm_typed<sm90, TIn, TOut>(call, check_tma);
  if (!tma) return false;
  const int sms = device_sms();
  split_option units_128x256, units_128x128, units_64x128;
  split_option_of wide_plan{units_128x256, sms}, narrow_plan{units_128x128, sms}, short_plan{units_64x128, sms};
  ops::gemm_typed<sm90_split_units, TIn, TOut>(call, wide_plan);
  ops::gemm_typed<sm90_split_narrow, TIn, TOut>(call, narrow_plan);
  ops::gemm_typed<sm90_split_short, TIn, TOut>(call, short_plan);
  bool plain = false;
  plain_store_applies check_plain{plain};
  ops::gemm_typed<sm90_plain_store, TIn, TOut>(call, check_plain);
  const bool wide = plain && wide_tile_pays(call.m, call.n, call.batch, sms);
  const whole_tile whole = cheaper_whole_tile(call.m, call.n, call.k, call.batch, sms, wide, plain);
  const split_tile split = choose_split_tile(units_128x256, units_128x128, units_64x128, call.m, call.n,
                                             whole == whole_tile::units_128x128, split_tile_forced());
  if (split == split_tile::units_128x128) ops::gemm_typed<sm90_split_narrow, TIn, TOut>(call, launch);
  else if (split == split_tile::units_64x128) ops::gemm_typed<sm90_split_short, TIn, TOut>(call, launch);
  else if (split == split_tile::units_128x256) ops::gemm_typed<sm90_split_units, TIn, TOut>(call, launch);
  else if (plain) {
    const plain_tile tile = plain_tile_forced().value_or(whole == whole_tile::units_128x192 ? plain_tile::units_128x192
                                                         : wide ? plain_tile::units_192x256
                                                                : plain_tile::units_128x256);
    if (tile == plain_tile::units_128x192) ops::gemm_typed<sm90_n192_store, TIn, TOut>(call, launch);
    else if (tile == plain_tile::units_192x256) ops::gemm_typed<sm90_wide_store, TIn, TOut>(call, launch);
    else ops::gemm_typed<sm90_plain_store, TIn, TOut>(call, launch);
  } else {
    ops::gemm_typed<sm90, TIn, TOut>(call, launch);
  }
  return true;
}

template <class TIn, class TOut> void gemm_instance(const gemm_call& call, cudaStream_t stream) {
  gemm_launcher launch{stream};
  if constexpr (sizeof(TIn) == 2) {
    if (call.portable) {
      ops::gemm_typed<sm80, TIn, TOut>(call, launch);
      return;
    }
    using probe = ops::gemm_kernel<sm90, TIn, TOut, true, true>;
    if (use_sm90<probe, probe::warps * warp_lanes>()) {
      // Matrices a tensor map cannot describe (an odd leading dimension):
      // aligned copies where they pay (operand_copy.hpp).
      const operand_copies copies(call, sizeof(TIn), sizeof(TOut), stream);
      const gemm_call& run = copies.ok() ? copies.call : call;
      if (!gemm_sm90<TIn, TOut>(run, launch)) ops::gemm_typed<sm80, TIn, TOut>(run, launch);
      copies.finish();
      return;
    }
  }
  ops::gemm_typed<sm80, TIn, TOut>(call, launch);
}

}  // namespace tessel::cuda
