// tessel/cpu/arch/isa_ops.hpp — what each x86 SIMD level must provide beyond xsimd 8.
//
// isa_ops<Arch> (specialised in avx2.hpp and avx512.hpp, each included only by
// the translation unit compiled with that ISA's -m flags) gives, for
// W = xsimd::batch<float, Arch>::size lanes:
//   i32  load_u16(const uint16_t* p)          W 16-bit values, zero-extended
//   void store_u16(uint16_t* p, i32 v)        the low 16 bits of each lane
//   void transpose8(const f32 (&in)[8], float* out, int ld)
//        in[l][k] -> out[k·ld + l]  for l < 8, k < W   (8 lines × W -> W rows of 8)
//   f32  fma(f32 x, f32 y, f32 z)              x · y + z, one rounding (the instruction, whatever xsimd does)
//   f32  scale2(f32 p, f32 n)                  p · 2^n for integral n in [−151, 128], one rounding
// xsimd 8.1 has no widening/narrowing integer casts nor transposes, hence these.
#pragma once
#include <cstdint>

#include <xsimd/xsimd.hpp>

namespace tessel::cpu {

template <class Arch> struct isa_ops {
  static_assert(sizeof(Arch) == 0,
                "tessel cpu: no isa_ops for this xsimd arch; include tessel/cpu/arch/avx2.hpp or avx512.hpp");
};

}  // namespace tessel::cpu
