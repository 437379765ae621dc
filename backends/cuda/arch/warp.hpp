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
//   block_x_apart()   blockIdx.x, read by an instruction of its own: a
//                     divergent branch on it leaves the kernel's other uses of
//                     blockIdx.x (and what derives from them) in uniform
//                     registers, where a branch on blockIdx.x itself moved them
//                     to vector registers (the sm90 producer's TMA coordinates:
//                     R2UR moves for each copy).
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

TESSEL_DEVICE int block_x_apart() {
#if TESSEL_DEVICE_PASS
  int b;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(b));
  return b;
#else
  return 0;
#endif
}

}  // namespace tessel::cuda::arch
