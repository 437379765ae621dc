// tessel/cuda/arch/warp.hpp — a value every lane of a warp holds, made one the compiler knows is.
//
//   warp_uniform(v)   lane 0's v, for all 32 lanes (which must all execute it,
//                     converged). Where v is the same in every lane anyway (a
//                     warp or warpgroup index), this only tells the compiler
//                     so: what is derived from it can live in uniform
//                     registers. The sm90 consumers' wgmma descriptors are
//                     built from their warpgroup index: derived from
//                     threadIdx, each needs a vector add and two R2UR moves
//                     per wgmma; from warp_uniform, a uniform add
//                     (schedule_sm90.hpp; bench/notes/cuda_gemm.md, session 22).
// Device code only.
#pragma once

#include "tessel/core/config.hpp"

namespace tessel::cuda::arch {

TESSEL_DEVICE int warp_uniform(int v) {
#if TESSEL_DEVICE_PASS
  return __shfl_sync(0xffffffffu, v, 0);
#else
  return v;
#endif
}

}  // namespace tessel::cuda::arch
