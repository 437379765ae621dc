// tessel/cuda/gemm_instance.hpp — the body of each gemm_<in>_<out>.cu: the sm80
// policy's GEMM for one type pair, launched through launch.hpp.
#pragma once
#include "tessel/cuda/gemm_paths.hpp"
#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/cuda/policy_sm90.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::cuda {

template <class Tag, class Problem> void gemm_launcher::operator()(Tag, const Problem& problem) const {
  using K = typename Tag::type;
  constexpr int threads = K::cfg::warps_m * K::cfg::warps_n * warp_lanes;
  launch<K, threads>(K::shape(problem), problem, stream);
}

template <class TIn, class TOut> void gemm_instance(const gemm_call& call, cudaStream_t stream) {
  gemm_launcher launch{stream};
  if constexpr (sizeof(TIn) == 2) {
    using probe = ops::gemm_kernel<sm90, TIn, TOut, true, true>;
    if (use_sm90<probe, probe::cfg::warps_m * probe::cfg::warps_n * warp_lanes>()) {
      ops::gemm_typed<sm90, TIn, TOut>(call, launch);
      return;
    }
  }
  ops::gemm_typed<sm80, TIn, TOut>(call, launch);
}

}  // namespace tessel::cuda
