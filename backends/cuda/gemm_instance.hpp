// tessel/cuda/gemm_instance.hpp — the body of each gemm_<in>_<out>.cu: the GEMM
// for one type pair on the sm90 policy (TMA + wgmma) where it applies — its
// units split by steps (sm90_split_units) where the split plan says that pays
// on this device, on a plain-store kernel (sm90_plain_store, or sm90_wide_store
// where its 192 × 256 blocks fill the waves better) for C = A·B as it is into a
// TMA-storable C — else on the sm80 policy, launched through launch.hpp. An
// operand no tensor map can describe is first copied aligned where that pays
// (operand_copy.hpp).
#pragma once
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

// Whether the split kernel's plan (the schedule's own, from the op's units and
// steps) splits this call on the current device.
struct split_applies {
  bool& ok;
  template <class Tag, class Problem> void operator()(Tag, const Problem& problem) const {
    using K = typename Tag::type;
    int device = 0, sms = 0;
    ok = cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
         K::schedule::template plan<typename K::op>(problem, sms * blocks_per_sm<K>::value).splits();
  }
};

// Whether the wide plain-store kernel (sm90_wide_store: 192 × 256 blocks) takes
// a plain-store call: where its waves cost no more than the 128 × 256 kernel's
// on this device, a wave taking one unit's time and a 192-row unit 1.5 times a
// 128-row one. At equal cost the wide tile's faster step (+0.6-4.7%, H100,
// gemm_config.hpp) is what it gains; where 192 rows leave a partial tile or a
// fuller last wave (4096³: 3 wide waves against 4 narrow) it would lose.
inline bool wide_tile_pays(int m, int n, int batch, int sms) {
  if (sms <= 0) return false;
  const long long columns = (n + 255) / 256 * (long long)batch;
  const long long narrow = (m + 127) / 128 * columns, wide = (m + 191) / 192 * columns;
  return 3 * ((wide + sms - 1) / sms) <= 2 * ((narrow + sms - 1) / sms);
}
inline bool wide_tile_pays(const gemm_call& call) {
  int device = 0, sms = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
         wide_tile_pays(call.m, call.n, call.batch, sms);
}

// Runs `call` on the sm90 policy (split, plain-store — 192 × 256 where that
// pays, else 128 × 256 — or general) where its operands fit tensor maps; false
// where they do not (nothing launched).
template <class TIn, class TOut> bool gemm_sm90(const gemm_call& call, gemm_launcher& launch) {
  bool tma = false;
  sm90_applies<TIn, TOut> check_tma{tma};
  ops::gemm_typed<sm90, TIn, TOut>(call, check_tma);
  if (!tma) return false;
  bool split = false, plain = false;
  split_applies check_split{split};
  ops::gemm_typed<sm90_split_units, TIn, TOut>(call, check_split);
  plain_store_applies check_plain{plain};
  if (!split) ops::gemm_typed<sm90_plain_store, TIn, TOut>(call, check_plain);
  if (split) ops::gemm_typed<sm90_split_units, TIn, TOut>(call, launch);
  else if (plain && wide_tile_pays(call)) ops::gemm_typed<sm90_wide_store, TIn, TOut>(call, launch);
  else if (plain) ops::gemm_typed<sm90_plain_store, TIn, TOut>(call, launch);
  else ops::gemm_typed<sm90, TIn, TOut>(call, launch);
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
