// tessel/cuda/arch/flag.hpp — flags in global memory that hand data from one block to another.
//
//   flag_release(f, v)   store v to *f with release semantics at GPU scope: the
//                        writes this thread made, and those it observed (those
//                        of threads it synchronised with through a barrier
//                        before), are visible to whoever acquires the value
//   flag_acquire(f)      load *f with acquire semantics at GPU scope
//   flag_wait(f)         flag_acquire until the value is nonzero
//   load_l2 / store_l2   16-byte accesses that bypass L1 (ld.global.cg / st.global.cg):
//                        data another block wrote in this kernel
// Device code only (sm_70 and later).
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"

namespace tessel::cuda::arch {

TESSEL_DEVICE void flag_release(unsigned* f, unsigned v) {
#if TESSEL_DEVICE_PASS
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(f), "r"(v) : "memory");
#else
  (void)f, (void)v;
#endif
}
TESSEL_DEVICE unsigned flag_acquire(const unsigned* f) {
  unsigned v = 0;
#if TESSEL_DEVICE_PASS
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(f) : "memory");
#else
  (void)f;
#endif
  return v;
}
// Spins until *f is nonzero (each read an acquire, as flag_acquire).
TESSEL_DEVICE void flag_wait(const unsigned* f) {
  while (flag_acquire(f) == 0) {
  }
}
TESSEL_DEVICE void store_l2(float* p, float a, float b, float c, float d) {
#if TESSEL_DEVICE_PASS
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
#else
  (void)p, (void)a, (void)b, (void)c, (void)d;
#endif
}
// The builtin: a volatile asm without a memory clobber. Volatile keeps it in
// order with flag_acquire, the barriers and the other loads (volatile asm
// too); without the clobber the compiler may move ordinary code (adds,
// address arithmetic) around it, so a caller's batch of loads issues back to
// back (sm90_partials.hpp's add_global: 19 before its first add).
TESSEL_DEVICE void load_l2(const float* p, float& a, float& b, float& c, float& d) {
#if TESSEL_DEVICE_PASS
  const float4 v = __ldcg(reinterpret_cast<const float4*>(p));
  a = v.x, b = v.y, c = v.z, d = v.w;
#else
  (void)p, a = b = c = d = 0.0f;
#endif
}

}  // namespace tessel::cuda::arch
