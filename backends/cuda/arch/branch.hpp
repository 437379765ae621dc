// tessel/cuda/arch/branch.hpp — keeping a conditional block a branch.
//
//   keep_branch()   an empty statement the compiler must keep in place: a
//                   conditional block that holds one stays a branch, where the
//                   compiler would otherwise turn the block's assignments into
//                   one select per value, executed whether the condition holds
//                   or not (tile_ops_sm80.hpp's zero_if)
// Device code only.
#pragma once

#include "tessel/core/config.hpp"

namespace tessel::cuda::arch {

TESSEL_DEVICE void keep_branch() {
#if TESSEL_DEVICE_PASS
  asm volatile("");
#endif
}

}  // namespace tessel::cuda::arch
