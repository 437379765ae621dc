// tessel/cuda/arch/ldmatrix.hpp — the raw ldmatrix instruction (sm_75 and newer).
//
// ldmatrix.x4 loads four 8×8 matrices of 16-bit elements from shared memory;
// lanes 8j .. 8j+7 give the addresses of the 8 rows (16 bytes each, 16-byte
// aligned) of matrix j. Register j of a lane then holds, of matrix j:
//   plain:  (lane, j, e) -> (row lane/4,            col 2·(lane%4) + e)
//   .trans: (lane, j, e) -> (row 2·(lane%4) + e,    col lane/4)
// for its low (e = 0) and high (e = 1) half. Device code only.
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"

namespace tessel::cuda::arch {

// The 32-bit shared-memory address of a generic pointer into shared memory.
TESSEL_DEVICE std::uint32_t shared_address(const void* p) {
#if TESSEL_DEVICE_PASS
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
#else
  (void)p;
  return 0;
#endif
}

TESSEL_DEVICE void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
#if TESSEL_DEVICE_PASS
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  (void)r, (void)addr;
#endif
}

TESSEL_DEVICE void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
#if TESSEL_DEVICE_PASS
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  (void)r, (void)addr;
#endif
}

}  // namespace tessel::cuda::arch
