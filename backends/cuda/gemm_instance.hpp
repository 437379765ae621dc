// tessel/cuda/gemm_instance.hpp — the body of each gemm_<in>_<out>.cu: the GEMM
// for one type pair on the sm90 policy (TMA + wgmma) where it applies — its
// units split by steps (sm90_split_units) where the split plan says that pays
// on this device, on the plain-store kernel (sm90_plain_store) for C = A·B as
// it is into a TMA-storable C — else on the sm80 policy, launched through launch.hpp. Where
// the split plan's tail_start() says so, the partial last wave of a call with
// more units than SMs runs as a second launch of the split kernel (a tail
// launch, schedule_sm90.hpp). An operand no tensor map can describe is first
// copied aligned where that pays (operand_copy.hpp).
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

// The number of SMs of the current device (0 where it cannot be asked).
inline int current_sms() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 0;
  return sms;
}

// The first unit of this call's tail launch on the split kernel's grid (its
// units where the last wave runs whole), and what the tail's workspace needs.
struct tail_applies {
  long long& first;
  long long& units;
  int& grid;
  workspace_need& need;
  template <class Tag, class Problem> void operator()(Tag, const Problem& problem) const {
    using K = typename Tag::type;
    using S = typename K::schedule;
    grid = current_sms() * blocks_per_sm<K>::value;
    units = (long long)K::op::tiles(problem) * K::op::layers(problem);
    first = grid > 0 ? S::template tail_start<typename K::op>(problem, grid) : units;
    need = S::template split_workspace<typename K::op>(grid);
  }
};

// Launches one of a tail's two launches: units [begin, end) of the call.
// The first (begin 0) zeroes the tail's flags; the tail (begin > 0) gets the
// workspace those flags head.
struct range_launcher {
  cudaStream_t stream;
  long long begin, end;
  void* workspace;
  unsigned flags;
  template <class Tag, class Problem> void operator()(Tag, const Problem& problem) const {
    using K = typename Tag::type;
    using S = typename K::schedule;
    constexpr int threads = K::warps * warp_lanes;
    auto pp = K::prepare(problem);
    pp.units_begin = begin;
    pp.units_end = end;
    if (begin == 0) {
      pp.clear_flags = static_cast<unsigned*>(workspace);
      pp.clear_count = int(flags);
    } else {
      S::template attach<typename K::op>(pp, workspace, int(flags));
    }
    launch<K, threads>(K::shape(problem), pp, stream);
  }
};

// Runs `call`'s units whole on the kernel of policy P, its partial last wave
// as a tail launch of the split kernel where that pays; false where it does
// not (nothing launched).
template <class P, class TIn, class TOut> bool gemm_with_tail(const gemm_call& call, cudaStream_t stream) {
  long long first = 0, units = 0;
  int grid = 0;
  workspace_need need{0, 0};
  tail_applies ask{first, units, grid, need};
  ops::gemm_typed<sm90_split_units, TIn, TOut>(call, ask);
  if (first >= units) return false;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice", launch_shape{});
  void* ws = nullptr;
  check(cudaMallocFromPoolAsync(&ws, need.bytes, workspace_pool(device), stream),
        "cudaMallocFromPoolAsync (the tail launch's workspace)", launch_shape{});
  try {
    range_launcher whole{stream, 0, first, ws, unsigned(grid)};
    ops::gemm_typed<P, TIn, TOut>(call, whole);
    range_launcher tail{stream, first, units, ws, unsigned(grid)};
    ops::gemm_typed<sm90_split_units, TIn, TOut>(call, tail);
  } catch (...) {
    (void)cudaFreeAsync(ws, stream);
    throw;
  }
  check(cudaFreeAsync(ws, stream), "cudaFreeAsync (the tail launch's workspace)", launch_shape{});
  return true;
}

// Runs `call` on the sm90 policy (split, plain-store or general) where its
// operands fit tensor maps; false where they do not (nothing launched).
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
  else if (plain && !gemm_with_tail<sm90_plain_store, TIn, TOut>(call, launch.stream))
    ops::gemm_typed<sm90_plain_store, TIn, TOut>(call, launch);
  else if (!plain && !gemm_with_tail<sm90, TIn, TOut>(call, launch.stream)) ops::gemm_typed<sm90, TIn, TOut>(call, launch);
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
