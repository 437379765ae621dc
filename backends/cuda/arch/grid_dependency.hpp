// tessel/cuda/arch/grid_dependency.hpp — programmatic dependent launch (sm_90): a kernel's own wait for the kernel before it.
//
// A kernel launched with programmatic stream serialization (launch.hpp does so
// for schedules that declare waits_for_predecessor) may start while the kernel
// before it in the stream still runs, once that kernel's blocks have all
// signalled (or ended):
//
//   grid_dependency_wait()    returns once every grid this one depends on has
//                             completed and its memory operations are visible.
//                             Nothing before it may touch global memory that
//                             the kernel before could read or write.
//   grid_dependents_launch()  lets the stream's next kernel so launched be
//                             scheduled before this one ends: its blocks take
//                             SMs as this kernel's blocks leave them, run up to
//                             their own wait, and wait there. Once per block.
//
// Both are no-ops in a kernel launched without the attribute and on targets
// before sm_90. Device code only.
#pragma once

#include "tessel/core/config.hpp"

namespace tessel::cuda::arch {

TESSEL_DEVICE void grid_dependency_wait() {
#if TESSEL_DEVICE_PASS && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

TESSEL_DEVICE void grid_dependents_launch() {
#if TESSEL_DEVICE_PASS && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

}  // namespace tessel::cuda::arch
