// tessel/cuda/tile_ops_sm90.hpp — the sm_90a fast path of the shared-tile mma: wgmma.
//
// Contract: as tile_ops_sm80.hpp, of which this inherits every other fast
// path. C += A·B from swizzle128 shared tiles for a warp whose accumulator is
// 16 × 256 (rt<mma_m16n8k16, c, 1, 32>): the 4 warps of a warpgroup, holding
// rows m0 + 16w .. +16 (w = warp % 4, m0 a multiple of 64), issue together one
// wgmma.m64n256k16 per 16-wide K slice, reading A and B straight from shared
// memory through descriptors of the swizzle128 layout, which is wgmma's
// 128-byte swizzle:
//   K-major tile (lines along K):  128 B per row, 8-row atoms 1024 B apart (SBO)
//   MN-major tile (lines along M or N): 64-element panels LBO apart, 8-line
//                                  K groups 1024 B apart (SBO)
// The call waits for its wgmmas before returning, so the shared tiles are free
// and the accumulator is readable, as with the generic definition. wait<N>
// adds the proxy fence that makes cp.async / st.shared data visible to wgmma.
// Other accumulator shapes take the sm80 path; a warpgroup whose rows are not
// 64-aligned (a caller that does not tile by warpgroups) traps.
#pragma once
#include "tessel/cuda/arch/wgmma.hpp"
#include "tessel/cuda/tile_ops_sm80.hpp"

namespace tessel::cuda {

struct sm90_tile_ops : sm80_tile_ops {
  using sm80_tile_ops::load;
  using sm80_tile_ops::mma;
  using sm80_tile_ops::store;

  template <int Pending> TESSEL_DEVICE static void wait() {
    arch::cp_async_wait<Pending>();
    arch::fence_proxy_async();  // this thread's shared writes, for the wgmma that read them after the barrier
  }

  template <class Ctx, class T, int BM, int BK, bool AK, int BK2, int BN, bool BNC>
  TESSEL_DEVICE static void mma(Ctx& ctx, rt<mma_m16n8k16<T>, operand::c, 1, 32>& c, st<T, swizzle128<BM, BK, AK>> a,
                                st<T, swizzle128<BK2, BN, BNC>> b, int a_row0, int b_col0) {
    static_assert(BK == BK2 && BK % 16 == 0, "mma: A's K must equal B's K, a multiple of 16");
    const int m0 = a_row0 - 16 * (ctx.warp() % 4);  // the warpgroup's first row
    static_assert(BM % 64 == 0 && BN % 64 == 0, "mma: wgmma tiles are 64-row and 64-column aligned");
    // The warpgroup must tile 64-aligned rows and the 256 columns must start on a panel;
    // anything else is a caller bug that would give wrong sums: stop loudly.
    if (m0 % 64 != 0 || b_col0 % 64 != 0) arch::trap();
    constexpr std::uint32_t panel_a = BK * 64 * sizeof(T), panel_b = BK * 64 * sizeof(T);  // MN-major panel bytes
    const std::uint32_t sa = arch::shared_address(a.data), sb = arch::shared_address(b.data);
    float d[128];
    TESSEL_UNROLL for (int j = 0; j < 32; ++j)
      TESSEL_UNROLL for (int v = 0; v < 4; ++v) {
        d[4 * j + v] = c.frag[0][j][v];
        arch::fence_register(d[4 * j + v]);
      }
    arch::wgmma_fence();
    TESSEL_UNROLL for (int ks = 0; ks < BK / 16; ++ks) {
      const std::uint64_t da =
          AK ? arch::smem_descriptor_sw128(sa + 128 * m0 + 32 * ks, 16, 1024)
             : arch::smem_descriptor_sw128(sa + panel_a * (m0 / 64) + 2048 * ks, panel_a, 1024);
      const std::uint64_t db =
          BNC ? arch::smem_descriptor_sw128(sb + panel_b * (b_col0 / 64) + 2048 * ks, panel_b, 1024)
              : arch::smem_descriptor_sw128(sb + 128 * b_col0 + 32 * ks, 16, 1024);
      arch::wgmma_m64n256k16<AK ? 0 : 1, BNC ? 1 : 0>(d, da, db, T{});
    }
    arch::wgmma_commit();
    arch::wgmma_wait<0>();
    TESSEL_UNROLL for (int j = 0; j < 32; ++j)
      TESSEL_UNROLL for (int v = 0; v < 4; ++v) {
        arch::fence_register(d[4 * j + v]);
        c.frag[0][j][v] = d[4 * j + v];
      }
  }
};

}  // namespace tessel::cuda
