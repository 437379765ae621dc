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
//   f32  scale2_or_zero(f32 p, f32 n, f32 x, f32 low)
//        +0 where x < low, else scale2(p, n) (NaN in x keeps scale2's lane); for
//        a p · 2^n that is normal, so that no lane underflows (exp2.hpp's weights)
//   f32  max_or_x(f32 c, f32 x), min_or_x(f32 c, f32 x)
//        c where c > x (c < x), else x: NaN in x stays (one vmaxps / vminps
//        with c first, where a compare and a blend spelled the same)
//   void fold16(const f32 (&x)[16 · 16 / W], Op op, float* out)
//        16 rows of 16 values (row r: x[r · 16/W ...], value c in lane c % W of
//        its vector c / W) -> out[r] = row r folded by op as a tree: the pairs
//        op(c, c + 8), then (c, c + 4), (c, c + 2), (c, c + 1) with c the lower
//        half: the same operations on every width (a transposed butterfly,
//        ~3 instructions a row instead of ~15 scalar ones)
// and, AVX-512 only (the AMX attention's P, attention_amx.hpp):
//   void store_bf16_ne(uint16_t* p, f32 v)    16 bf16 patterns by vcvtneps2bf16: to nearest
//        even, magnitudes below 2^-126 to a signed zero, NaN made quiet (AVX512_BF16)
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
