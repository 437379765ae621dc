// tessel/cuda/tile_ops_sm90.hpp — the sm_90a fast paths of the mma tile op: wgmma.
//
// Contract: as tile_ops_sm80.hpp, of which this inherits every other fast
// path. C += A·B for a warp whose accumulator is 16 rows × N columns,
// N = 64, 128 or 256 (rt<mma_m16n8k16, c, 1, N/8>): the 4 warps of a
// warpgroup, holding rows m0 + 16w .. +16 (w = warp % 4, m0 a multiple of 64),
// issue together one wgmma.m64nNk16 per 16-wide K slice. The wgmma D fragment
// of warp w is the mma_m16n8k16 C fragment of its 16 rows (arch/wgmma.hpp), so
// the accumulator tile is the same register tile the sm80 path fills.
//   shared × shared: A and B straight from swizzle128 tiles through
//     descriptors — the layout is wgmma's 128-byte swizzle:
//       K-major tile (lines along K): 128 B per line, 8-line atoms 1024 B
//         apart (SBO), K beyond 64 in the next panel;
//       MN-major tile (lines along M or N): 64-element panels LBO apart,
//         8-line K groups 1024 B apart (SBO).
//   registers × shared: A held by each warp as its 16 rows
//     (rt<mma_m16n8k16, a, 1, K/16>, whose fragment is wgmma's register A),
//     B from a swizzle128 tile.
// Each call waits for its wgmmas before returning, so the shared tiles are free
// and the accumulator is readable, as with the generic definition. wait<N>
// adds the proxy fence that makes cp.async / st.shared data visible to wgmma.
// Other accumulator shapes take the sm80 path. A warpgroup whose rows are not
// 64-aligned, or a B column (row) start off a 64 (16) boundary — a caller that
// does not tile by warpgroups — traps: it would give wrong sums.
// The group-scope wgmma atom (atom/wgmma.hpp, a group_scope<4> unit) is the
// other contract below: its mma returns with the wgmmas in flight
// (mma_wait<n> retires them), optionally in two parts (mma_operands, then mma
// on what it returned: core/tile_ops.hpp). There a_row0 and b_col0 must be
// multiples of 64, as every op tiles them; it is not checked at run time,
// since the descriptors are built on every step.
#pragma once
#include <type_traits>

#include "tessel/cuda/arch/convert.hpp"
#include "tessel/cuda/arch/tma.hpp"
#include "tessel/cuda/arch/wgmma.hpp"
#include "tessel/cuda/atom/wgmma.hpp"
#include "tessel/cuda/tile_ops_sm80.hpp"

namespace tessel::cuda {

namespace sm90_detail {

// Whether a warp's 16 × (8·TN) accumulator is one wgmma N.
template <int TN> constexpr bool wgmma_n = TN == 8 || TN == 16 || TN == 32;

// The widest wgmma N (256, 128 or 64) that covers whole atom tiles of N
// columns and divides a row of TN of them: adjacent C atom tiles of a row are
// one wider instruction's accumulator, register for register (the C map at
// N' = p·N is the one at N, tile after tile).
template <int N, int TN>
constexpr int wgmma_width = (TN * N) % 256 == 0 && 256 % N == 0 ? 256 : (TN * N) % 128 == 0 && 128 % N == 0 ? 128 : N;
// Those tiles as the wider instruction's accumulator array.
template <int W, int N> TESSEL_DEVICE float (&wide(float (&first)[N]))[W / 2] {
  return *reinterpret_cast<float(*)[W / 2]>(&first);
}
// Keeps the compiler from moving accesses to a tile's registers across an asynchronous wgmma.
template <class Tile> TESSEL_DEVICE void fence_tile(Tile& c) {
  TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i)
    TESSEL_UNROLL for (int j = 0; j < Tile::tiles_c; ++j)
      TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) arch::fence_register(c.frag[i][j][v]);
}

// Descriptor of K slice ks (16 wide, starting at k element 16·ks) of a
// swizzle128 operand tile. KMajor: lines run along K (Lines = the M or N
// extent, one 128-byte line each, first line `line0`); else lines run along
// M/N in 64-wide panels of `K` lines (panel index `panel0` = first M/N / 64).
template <int Lines, int K, bool KMajor, class T>
TESSEL_HOST_DEVICE constexpr std::uint64_t operand_descriptor(std::uint32_t base, int line0, int ks) {
  if constexpr (KMajor) {
    constexpr std::uint32_t panel = Lines * 128;  // 64 K-elements × Lines lines
    return arch::smem_descriptor_sw128(base + panel * (ks / 4) + 128 * line0 + 32 * (ks % 4), 16, 1024);
  } else {
    constexpr std::uint32_t panel = K * 64 * sizeof(T);  // 64 M/N elements × K lines
    return arch::smem_descriptor_sw128(base + panel * (line0 / 64) + 2048 * ks, panel, 1024);
  }
}

// operand_descriptor(base, line0 + extra, ks) − operand_descriptor(base, line0, 0),
// a constant: line0 and extra are multiples of 64 where !KMajor, and a shared
// address stays below 2^18, so the 14-bit address field adds without carrying
// (smem_descriptor_sw128). One descriptor per operand and call, the others by
// an add: ptxas then issues each wgmma after an add instead of recomputing
// (mask, shift, or) its descriptors from the address.
template <int Lines, int K, bool KMajor, class T>
TESSEL_HOST_DEVICE constexpr std::uint64_t descriptor_step(int extra, int ks) {
  using u32 = std::uint32_t;
  if constexpr (KMajor)
    return std::uint64_t((u32(Lines) * 128 * u32(ks / 4) + 128 * u32(extra) + 32 * u32(ks % 4)) >> 4);
  else
    return std::uint64_t((u32(K * 64 * sizeof(T)) * u32(extra / 64) + 2048 * u32(ks)) >> 4);
}

// A descriptor moved on by descriptor_step: the add stays in its low word.
TESSEL_HOST_DEVICE constexpr std::uint64_t descriptor_plus(std::uint64_t d, std::uint64_t step) {
  return (d & ~std::uint64_t(0xffffffffu)) | std::uint32_t(std::uint32_t(d) + std::uint32_t(step));
}
// Whether the adds give operand_descriptor's own values for a tile of Lines ×
// K at the top of shared memory (the largest addresses a block can have), for
// every first line (a multiple of 64) and K slice; checked at compile time by
// each mma instantiation.
template <int Lines, int K, bool KMajor, class T> TESSEL_HOST_DEVICE constexpr bool descriptor_steps_agree() {
  constexpr std::uint32_t bytes = std::uint32_t(Lines) * K * sizeof(T), top = 232448;  // 227 KiB
  static_assert(bytes <= top, "descriptor_steps_agree: the tile does not fit in shared memory");
  constexpr std::uint32_t base = (top - bytes) / 1024 * 1024;
  for (int line0 = 0; line0 < Lines; line0 += 64)
    for (int ks = 0; ks < K / 16; ++ks)
      if (descriptor_plus(operand_descriptor<Lines, K, KMajor, T>(base, 0, 0),
                          descriptor_step<Lines, K, KMajor, T>(line0, ks)) !=
          operand_descriptor<Lines, K, KMajor, T>(base, line0, ks))
        return false;
  return true;
}

// A shared × shared wgmma step's view of its operand tiles: the descriptors
// of A's rows a_row0 .. and B's columns b_col0 .. at K slice 0; those of every
// other 64-row tile, column group and K slice are these plus a constant
// (descriptor_step). Built from the tiles' addresses alone.
template <class T, int BM, int BK, bool AK, int BN, bool BNC> struct ss_operands {
  static_assert(BK % 16 == 0, "mma: A's K must equal B's K, a multiple of 16");
  static_assert(BM % 64 == 0 && BN % 64 == 0, "mma: wgmma tiles are 64-row and 64-column aligned");
  static_assert(descriptor_steps_agree<BM, BK, AK, T>() && descriptor_steps_agree<BN, BK, !BNC, T>(),
                "mma: a descriptor moved on by an add must be the one computed from its address");
  std::uint64_t a, b;
};
template <class T, int BM, int BK, bool AK, int BK2, int BN, bool BNC>
TESSEL_DEVICE ss_operands<T, BM, BK, AK, BN, BNC> ss_operands_at(st<T, swizzle128<BM, BK, AK>> a,
                                                                  st<T, swizzle128<BK2, BN, BNC>> b, int a_row0,
                                                                  int b_col0) {
  static_assert(BK == BK2, "mma: A's K must equal B's K, a multiple of 16");
  const std::uint32_t sa = arch::shared_address(a.data), sb = arch::shared_address(b.data);
  // The stage's part (uniform) and the unit's (a_row0, b_col0: the same every step) apart.
  return {descriptor_plus(operand_descriptor<BM, BK, AK, T>(sa, 0, 0), descriptor_step<BM, BK, AK, T>(a_row0, 0)),
          descriptor_plus(operand_descriptor<BN, BK, !BNC, T>(sb, 0, 0), descriptor_step<BN, BK, !BNC, T>(b_col0, 0))};
}

// The accumulator as the instruction's array, fenced so that no access to it
// moves across the asynchronous wgmma; and back.
template <int TN> TESSEL_DEVICE void to_wgmma(float (&d)[4 * TN], const float (&c)[TN][4]) {
  TESSEL_UNROLL for (int j = 0; j < TN; ++j)
    TESSEL_UNROLL for (int v = 0; v < 4; ++v) {
      d[4 * j + v] = c[j][v];
      arch::fence_register(d[4 * j + v]);
    }
}
template <int TN> TESSEL_DEVICE void from_wgmma(float (&c)[TN][4], float (&d)[4 * TN]) {
  TESSEL_UNROLL for (int j = 0; j < TN; ++j)
    TESSEL_UNROLL for (int v = 0; v < 4; ++v) {
      arch::fence_register(d[4 * j + v]);
      c[j][v] = d[4 * j + v];
    }
}

// Two fp32 results to adjacent columns of a row of dst (p 2-element aligned), rounded like
// convert<TD> (arch/convert.hpp: cvt, bit-exact with it).
template <class TD> TESSEL_DEVICE void store_pair(TD* p, float v0, float v1) {
  if constexpr (std::is_same_v<TD, float>) {
    *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
  } else {
    *reinterpret_cast<std::uint32_t*>(p) = arch::cvt_pack(v0, v1, TD{});
  }
}

}  // namespace sm90_detail

struct sm90_tile_ops : sm80_tile_ops {
  using sm80_tile_ops::load;
  using sm80_tile_ops::mma;
  using sm80_tile_ops::mma_wait;
  using sm80_tile_ops::store;

  // ---- turns (optional, core/tile_ops.hpp): the Units warpgroup units of a -------
  // block (2 or 3) take turns issuing their MMAs, in a ring. Unit i waits on named
  // barrier 16 − Units + i (its own 128 threads bar.sync, the unit before's
  // bar.arrive: 256 in all) and passes the turn by arriving on the next unit's
  // (14 and 15 for two units, 13 to 15 for three). Barriers 1 .. 1 + Consumers
  // are the schedule's (epilogue halves, split partials; schedule_sm90.hpp).
  template <int Units> static constexpr int turn_barrier = 16 - Units;
  template <int Units, class U> TESSEL_DEVICE static void turn_wait(U& u) {
    static_assert(U::lanes == 128 && (Units == 2 || Units == 3), "turn_wait: two or three warpgroup units");
    arch::named_barrier<256>(turn_barrier<Units> + u.unit_index());
  }
  template <int Units, class U> TESSEL_DEVICE static void turn_pass(U& u) {
    static_assert(U::lanes == 128 && (Units == 2 || Units == 3), "turn_pass: two or three warpgroup units");
    const int next = u.unit_index() + 1;
    arch::named_barrier_arrive<256>(turn_barrier<Units> + (next == Units ? 0 : next));
  }

  // ---- the group-scope wgmma atom (atom/wgmma.hpp) ------------------------------
  // C += A·B for a warpgroup (u: a group_scope<4> unit context), A rows
  // a_row0 .. and B columns b_col0 .. of swizzle128 shared tiles, every K slice
  // of the tiles; per 64-row atom tile and K slice, one wgmma per W columns
  // (sm90_detail::wgmma_width: adjacent atom tiles of a row are one wider
  // instruction, m64n128 for two n64 tiles), all in one commit group. Returns
  // with them in flight: mma_wait<n>(c) retires them.
  template <class U, class T, int N, int TM, int TN, int BM, int BK, bool AK, int BK2, int BN, bool BNC>
  TESSEL_DEVICE static void mma(U& u, rt<wgmma_m64k16<T, N>, operand::c, TM, TN>& c, st<T, swizzle128<BM, BK, AK>> a,
                                st<T, swizzle128<BK2, BN, BNC>> b, int a_row0, int b_col0, bool accumulate = true) {
    mma(u, c, sm90_detail::ss_operands_at(a, b, a_row0, b_col0), accumulate);
  }
  // The same in two parts (core/tile_ops.hpp's optional mma_operands): the
  // descriptors first, from the tiles' addresses, held where they are built
  // (a schedule builds them before waiting for the stage: none of their
  // arithmetic is left between the stage's arrival and its first wgmma); then
  // the wgmmas from them.
  template <class T, int N, int TM, int TN, int BM, int BK, bool AK, int BK2, int BN, bool BNC>
  TESSEL_DEVICE static sm90_detail::ss_operands<T, BM, BK, AK, BN, BNC> mma_operands(
      const rt<wgmma_m64k16<T, N>, operand::c, TM, TN>&, st<T, swizzle128<BM, BK, AK>> a,
      st<T, swizzle128<BK2, BN, BNC>> b, int a_row0, int b_col0) {
    auto o = sm90_detail::ss_operands_at(a, b, a_row0, b_col0);
    arch::fence_register(o.a);
    arch::fence_register(o.b);
    return o;
  }
  template <class U, class T, int N, int TM, int TN, int BM, int BK, bool AK, int BN, bool BNC>
  TESSEL_DEVICE static void mma(U& /*u*/, rt<wgmma_m64k16<T, N>, operand::c, TM, TN>& c,
                                const sm90_detail::ss_operands<T, BM, BK, AK, BN, BNC>& o, bool accumulate = true) {
    static_assert(U::lanes == 128, "mma: the wgmma atom runs on a group_scope<4> unit");
    static_assert(N % 64 == 0, "mma: wgmma tiles are 64-row and 64-column aligned");
    constexpr int W = sm90_detail::wgmma_width<N, TN>, per = W / N;
    sm90_detail::fence_tile(c);
    arch::wgmma_fence();
    TESSEL_UNROLL for (int ks = 0; ks < BK / 16; ++ks)
      TESSEL_UNROLL for (int i = 0; i < TM; ++i)
        TESSEL_UNROLL for (int j = 0; j < TN; j += per) {
          const std::uint64_t da =
              sm90_detail::descriptor_plus(o.a, sm90_detail::descriptor_step<BM, BK, AK, T>(64 * i, ks));
          const std::uint64_t db =
              sm90_detail::descriptor_plus(o.b, sm90_detail::descriptor_step<BN, BK, !BNC, T>(N * j, ks));
          arch::wgmma_ss<AK ? 0 : 1, BNC ? 1 : 0>(sm90_detail::wide<W>(c.frag[i][j]), da, db, T{},
                                                  ks == 0 ? int(accumulate) : 1);
        }
    arch::wgmma_commit();
  }
  // C += A·B for a warpgroup, A in registers (the atom's A fragments, 64·TM
  // rows × 16·TK), B rows b_row0 .. and columns b_col0 .. of a swizzle128 shared
  // tile: one wgmma per (64-row tile, W columns, K slice), all in one commit
  // group, in flight on return. Every A register is packed before the first
  // wgmma issues (writing one between them makes ptxas serialise the chain).
  template <class U, class T, int N, int TM, int TN, int TK, int BK, int BN, bool BNC>
  TESSEL_DEVICE static void mma(U& u, rt<wgmma_m64k16<T, N>, operand::c, TM, TN>& c,
                                const rt<wgmma_m64k16<T, N>, operand::a, TM, TK>& a, st<T, swizzle128<BK, BN, BNC>> b,
                                int b_row0, int b_col0) {
    mma_depth<TK>(u, c, a, b, b_row0, b_col0);
  }
  // mma_skipping (core/tile_ops.hpp), O += P·V (masked_a: P is zero where the
  // mask hides): where every row of this warpgroup's 64·TM hides A's second
  // half of K slices, only the first half is issued (attention's BKV 128: the
  // causal diagonal's first unit). The rs wgmma accumulates: C is zeroed first
  // where accumulate is false.
  template <class U, class T, int N, int TM, int TN, int TK, int BK, int BN, bool BNC, class Mask>
  TESSEL_DEVICE static void mma_skipping(U& u, rt<wgmma_m64k16<T, N>, operand::c, TM, TN>& c,
                                         const rt<wgmma_m64k16<T, N>, operand::a, TM, TK>& a,
                                         st<T, swizzle128<BK, BN, BNC>> b, int b_row0, int b_col0, masked_a<Mask> skip,
                                         bool accumulate) {
    if (!accumulate) generic_tile_ops::zero(c);
    if constexpr (TK % 2 == 0) {
      if (skip.mask.hidden_from(64 * TM - 1) <= 16 * (TK / 2)) {
        mma_depth<TK / 2>(u, c, a, b, b_row0, b_col0);
        return;
      }
    }
    mma_depth<TK>(u, c, a, b, b_row0, b_col0);
  }
  // The rs mma over A's first KN K slices.
  template <int KN, class U, class T, int N, int TM, int TN, int TK, int BK, int BN, bool BNC>
  TESSEL_DEVICE static void mma_depth(U& /*u*/, rt<wgmma_m64k16<T, N>, operand::c, TM, TN>& c,
                                      const rt<wgmma_m64k16<T, N>, operand::a, TM, TK>& a,
                                      st<T, swizzle128<BK, BN, BNC>> b, int b_row0, int b_col0) {
    static_assert(U::lanes == 128, "mma: the wgmma atom runs on a group_scope<4> unit");
    static_assert(BN % 64 == 0, "mma: wgmma tiles are 64-column aligned");
    static_assert(KN >= 1 && KN <= TK, "mma: the K slices issued are some of A's");
    constexpr int W = sm90_detail::wgmma_width<N, TN>, per = W / N;
    std::uint32_t ra[TM][KN][4];
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int k = 0; k < KN; ++k)
        TESSEL_UNROLL for (int h = 0; h < 4; ++h)
          ra[i][k][h] = std::uint32_t(a.frag[i][k][2 * h].bits) | (std::uint32_t(a.frag[i][k][2 * h + 1].bits) << 16);
    const std::uint32_t sb = arch::shared_address(b.data);
    sm90_detail::fence_tile(c);
    arch::wgmma_fence();
    TESSEL_UNROLL for (int k = 0; k < KN; ++k)
      TESSEL_UNROLL for (int i = 0; i < TM; ++i)
        TESSEL_UNROLL for (int j = 0; j < TN; j += per) {
          const std::uint64_t db = sm90_detail::operand_descriptor<BN, BK, !BNC, T>(sb, b_col0 + N * j, b_row0 / 16 + k);
          arch::wgmma_rs<BNC ? 1 : 0>(sm90_detail::wide<W>(c.frag[i][j]), ra[i][k], db, T{});
        }
    arch::wgmma_commit();
  }
  // C tile -> A tile in registers (generic_tile_ops::relayout: A value v of
  // k-tile k is C value 8·(k % 4) + v of C atom tile k / 4 at N = 64; in
  // general c_source_of_a), two values per cvt, one NaN test and branch for
  // the whole tile (cvt_pack_groups; one a k-tile cost attention ~7 % of its
  // issue slots, bench/notes/cuda_attention.md Run 8).
  template <class Ctx, class T, int N, int TM, int TN, int TK>
  TESSEL_DEVICE static void relayout(Ctx& /*ctx*/, rt<wgmma_m64k16<T, N>, operand::a, TM, TK>& dst,
                                     const rt<wgmma_m64k16<T, N>, operand::c, TM, TN>& src) {
    using atom = wgmma_m64k16<T, N>;
    static_assert(TK * 16 == TN * N, "relayout: the tiles must have the same shape");
    static_assert(c_source_of_a<atom>(0, 0, 1) == 8 && c_source_of_a<atom>(0, 7, 1) == 15 &&
                      c_source_of_a<atom>(0, 1, 0) == 1 && c_source_of_a<atom>(0, 6, 0) == 6,
                  "relayout: A value v of k-tile k must be C value 8k + v of the row");
    float f[TM * TK][8];
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int k = 0; k < TK; ++k)
        TESSEL_UNROLL for (int v = 0; v < 8; ++v) {
          const int s = 8 * k + v;  // c_source_of_a(lane, v, k), checked above
          f[i * TK + k][v] = src.frag[i][s / atom::c_values][s % atom::c_values];
        }
    std::uint32_t r[TM * TK][4];
    arch::cvt_pack_groups(f, r, T{});
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int k = 0; k < TK; ++k)
        TESSEL_UNROLL for (int h = 0; h < 4; ++h) {
          dst.frag[i][k][2 * h] = T::from_bits(std::uint16_t(r[i * TK + k][h] & 0xffffu));
          dst.frag[i][k][2 * h + 1] = T::from_bits(std::uint16_t(r[i * TK + k][h] >> 16));
        }
  }
  // out[i][v] = op over the row of value v (generic_tile_ops::row_reduce): a
  // lane's values v with (v % 4) / 2 = 0 lie in row g of its warp's 16, the
  // others in row g + 8 (atom/wgmma.hpp); fold each in the lane, then over
  // lanes xor 1, 2. Spelled out because the generic one's constexpr grouping
  // of 32-128 values per atom tile costs the compiler minutes.
  template <class Ctx, class T, int N, int TM, int TN, class Op>
  TESSEL_DEVICE static void row_reduce(Ctx& ctx, col_vector<rt<wgmma_m64k16<T, N>, operand::c, TM, TN>>& out,
                                       const rt<wgmma_m64k16<T, N>, operand::c, TM, TN>& t, Op op) {
    TESSEL_UNROLL for (int i = 0; i < TM; ++i) {
      float acc[2] = {t.frag[i][0][0], t.frag[i][0][2]};
      TESSEL_UNROLL for (int j = 0; j < TN; ++j)
        TESSEL_UNROLL for (int v = 0; v < N / 2; ++v)
          if (j != 0 || (v != 0 && v != 2)) acc[(v % 4) / 2] = op(acc[(v % 4) / 2], t.frag[i][j][v]);
      TESSEL_UNROLL for (int h = 0; h < 2; ++h) {
        acc[h] = op(acc[h], ctx.shfl_xor(acc[h], 1));
        acc[h] = op(acc[h], ctx.shfl_xor(acc[h], 2));
      }
      TESSEL_UNROLL for (int v = 0; v < N / 2; ++v) out.value[i][v] = acc[(v % 4) / 2];
    }
  }
  using sm80_tile_ops::row_reduce;
  // t(r, c) = exp2(t(r, c)·scale − vec[r]) on ex2.approx.ftz, as the sm80 path
  // (same bound) for a wgmma accumulator.
  template <class T, int N, int TM, int TN>
  TESSEL_DEVICE static void broadcast_rows(rt<wgmma_m64k16<T, N>, operand::c, TM, TN>& t,
                                           const col_vector<rt<wgmma_m64k16<T, N>, operand::c, TM, TN>>& vec,
                                           exp2_of_difference f) {
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int j = 0; j < TN; ++j)
        TESSEL_UNROLL for (int v = 0; v < N / 2; ++v)
          t.frag[i][j][v] = arch::ex2_approx(fmaf(t.frag[i][j][v], f.scale, -vec.value[i][wgmma_m64k16<T, N>::c_first_in_row(v)]));
  }
  using sm80_tile_ops::broadcast_rows;
  using sm80_tile_ops::relayout;
  // Waits until at most Pending commit groups of this warpgroup are in flight;
  // the accumulator registers are fenced so no access to them moves above the wait.
  template <int Pending, class T, int N, int TM, int TN>
  TESSEL_DEVICE static void mma_wait(rt<wgmma_m64k16<T, N>, operand::c, TM, TN>& c) {
    arch::wgmma_wait<Pending>();
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int j = 0; j < TN; ++j)
        TESSEL_UNROLL for (int v = 0; v < N / 2; ++v) arch::fence_register(c.frag[i][j][v]);
  }
  // The staged epilogue of one warpgroup's (64·TM) × N accumulator (u: its
  // unit context) into RoundBytes of shared memory at `buf` (1024-byte aligned):
  // panels of R = 64·TM rows × 128 bytes (W = 128 / sizeof(TD) columns), as
  // many as fit (per_round = RoundBytes / (128·R)); round `Round` holds columns
  // [Round·per_round·W, (Round + 1)·per_round·W) of alpha·acc + beta·C as TD,
  // its 16-byte chunks swizzled like a TMA box of that map (chunk ^ row % 8):
  //   (row, col) -> q·128·R + 128·row + 16·(chunk ^ row % 8) + byte % 16
  // with col − Round·per_round·W = q·W + byte / sizeof(TD), chunk = byte / 16.
  // C is read (at row0 + row, col0 + col, inside c only) when beta != 0.
  template <class TD, int TM, int RoundBytes> struct staging {
    static constexpr int rows = 64 * TM, panel_bytes = 128 * rows, per_round = RoundBytes / panel_bytes;
    static constexpr int panel_cols = 128 / int(sizeof(TD)), round_cols = per_round * panel_cols;
    static_assert(per_round >= 1 && per_round * panel_bytes == RoundBytes, "staging: a round holds whole panels");
  };
  template <int Round, int RoundBytes, class U, class T, int N, int TM, class TD>
  TESSEL_DEVICE static void stage_epilogue(U& u, std::uint32_t buf, const rt<wgmma_m64k16<T, N>, operand::c, TM, 1>& t,
                                           const gmatrix<TD>& c, int row0, int col0, float alpha, float beta) {
    if (alpha == 1.0f && beta == 0.0f) stage_epilogue_as<Round, RoundBytes, true>(u, buf, t, c, row0, col0, alpha, beta);
    else stage_epilogue_as<Round, RoundBytes, false>(u, buf, t, c, row0, col0, alpha, beta);
  }
  // Plain: alpha = 1, beta = 0 (C = acc, no multiply, C not read).
  template <int Round, int RoundBytes, bool Plain, class U, class T, int N, int TM, class TD>
  TESSEL_DEVICE static void stage_epilogue_as(U& u, std::uint32_t buf, const rt<wgmma_m64k16<T, N>, operand::c, TM, 1>& t,
                                              const gmatrix<TD>& c, int row0, int col0, float alpha, float beta) {
    using Tile = rt<wgmma_m64k16<T, N>, operand::c, TM, 1>;
    using S = staging<TD, TM, RoundBytes>;
    constexpr int size = int(sizeof(TD));
    const int lane = u.lane();
    // Value pair (v, v + 1) of atom tile i as alpha·acc + beta·C. C widened by
    // cvt (arch::widen: exact, as to_float; element.hpp's integer decode of
    // fp16 made the fp16-C kernels' code twice the bf16-C ones').
    const auto result = [&](int i, int v, float& o0, float& o1) {
      o0 = t.frag[i][0][v];
      o1 = t.frag[i][0][v + 1];
      if constexpr (!Plain) {
        o0 *= alpha;
        o1 *= alpha;
        if (beta != 0.0f) {
          const coord x = Tile::where(lane, i, 0, v);
          const int r = row0 + x.row, col = col0 + x.col;
          if (c.contains(r, col)) o0 += beta * arch::widen(*c.addr(r, col));
          if (c.contains(r, col + 1)) o1 += beta * arch::widen(*c.addr(r, col + 1));
        }
      }
    };
    if constexpr (size == 2) {
      // stmatrix: 8-column slices j, j + 1 (values 4j .. 4j + 7) of atom tile i,
      // rows g and g + 8 of this warp's 16, as four 8 × 8 matrices; lane l
      // addresses row l % 8 of matrix k = l / 8 = (slice j + k / 2, half k % 2).
      // The round's G groups of 8 values are converted by cvt alone, then
      // re-converted with the NaN encoding only where one of all of them is a
      // NaN (one test and branch a round instead of one a group), then stored.
      const int w = (lane / 32) % 4, k = (lane % 32) / 8, r8 = lane % 8;
      constexpr int slices = S::round_cols / 8, first = Round * slices, G = slices / 2;
      static_assert(slices % 2 == 0 && first + slices <= N / 8, "stage_epilogue: a round holds pairs of 8-column slices");
      TESSEL_UNROLL for (int i = 0; i < TM; ++i) {
        float o[G][8];
        std::uint32_t regs[G][4];
        TESSEL_UNROLL for (int g = 0; g < G; ++g) {
          const int j = first + 2 * g;
          TESSEL_UNROLL for (int m = 0; m < 4; ++m)
            result(i, 4 * (j + m / 2) + 2 * (m % 2), o[g][2 * m], o[g][2 * m + 1]);
        }
        arch::cvt_pack_groups(o, regs, TD{});
        TESSEL_UNROLL for (int g = 0; g < G; ++g) {
          const int row = 64 * i + 16 * w + 8 * (k % 2) + r8;
          const int cc = 16 * g + 8 * (k / 2);  // first column of this lane's row, within the round
          const int q = cc / S::panel_cols, chunk = (cc % S::panel_cols) / 8;
          arch::stmatrix_x4(buf + S::panel_bytes * q + 128 * row + 16 * (chunk ^ r8), regs[g]);
        }
      }
    } else {
      TESSEL_UNROLL for (int i = 0; i < TM; ++i)
        TESSEL_UNROLL for (int v = 0; v < N / 2; v += 2) {
          if ((8 * (v / 4)) / S::round_cols != Round) continue;  // this pair's 8-column slice is in another round
          const coord x = Tile::where(lane, i, 0, v);
          float o0, o1;
          result(i, v, o0, o1);
          const int cc = x.col - Round * S::round_cols, q = cc / S::panel_cols, byte = (cc % S::panel_cols) * size;
          arch::st_shared(buf + S::panel_bytes * q + 128 * x.row + 16 * ((byte / 16) ^ (x.row % 8)) + byte % 16, o0, o1);
        }
    }
  }

  // The epilogue of a wgmma accumulator: as the generic store, with the two
  // adjacent columns a lane holds written as one vector where dst's rows are
  // contiguous and the pair lies inside (else element by element).
  template <class U, class T, int N, int TM, int TN, class TD>
  TESSEL_DEVICE static void store(U& u, const gmatrix<TD>& dst, const rt<wgmma_m64k16<T, N>, operand::c, TM, TN>& t,
                                  int row0, int col0, float alpha, float beta) {
    using Tile = rt<wgmma_m64k16<T, N>, operand::c, TM, TN>;
    const int lane = u.lane();
    const bool pairs = dst.col_stride == 1 && dst.row_stride % 2 == 0 &&
                       reinterpret_cast<std::uintptr_t>(dst.ptr) % (2 * sizeof(TD)) == 0;
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int j = 0; j < TN; ++j)
        TESSEL_UNROLL for (int v = 0; v < N / 2; v += 2) {
          const coord x = Tile::where(lane, i, j, v);  // v + 1 is the next column
          const int r = row0 + x.row, col = col0 + x.col;
          if (r >= dst.rows) continue;
          float o0 = alpha * t.frag[i][j][v], o1 = alpha * t.frag[i][j][v + 1];
          if (pairs && col + 1 < dst.cols) {
            TD* p = dst.addr(r, col);
            if (beta != 0.0f) {
              o0 += beta * arch::widen(p[0]);
              o1 += beta * arch::widen(p[1]);
            }
            sm90_detail::store_pair(p, o0, o1);
          } else {
            TESSEL_UNROLL for (int e = 0; e < 2; ++e) {
              if (col + e >= dst.cols) continue;
              TD* p = dst.addr(r, col + e);
              float o = e == 0 ? o0 : o1;
              if (beta != 0.0f) o += beta * arch::widen(*p);
              *p = arch::cvt<TD>(o);
            }
          }
        }
  }

  template <int Pending> TESSEL_DEVICE static void wait() {
    arch::cp_async_wait<Pending>();
    arch::fence_proxy_async();  // this thread's shared writes, for the wgmma that read them after the barrier
  }

  // C += A·B, both from shared memory.
  template <class Ctx, class T, int TN, int BM, int BK, bool AK, int BK2, int BN, bool BNC>
  TESSEL_DEVICE static void mma(Ctx& ctx, rt<mma_m16n8k16<T>, operand::c, 1, TN>& c, st<T, swizzle128<BM, BK, AK>> a,
                                st<T, swizzle128<BK2, BN, BNC>> b, int a_row0, int b_col0) {
    if constexpr (!sm90_detail::wgmma_n<TN>) {
      sm80_tile_ops::mma(ctx, c, a, b, a_row0, b_col0);
    } else {
      static_assert(BK == BK2 && BK % 16 == 0, "mma: A's K must equal B's K, a multiple of 16");
      static_assert(BM % 64 == 0 && BN % 64 == 0, "mma: wgmma tiles are 64-row and 64-column aligned");
      const int m0 = a_row0 - 16 * (ctx.warp() % 4);  // the warpgroup's first row
      if (m0 % 64 != 0 || b_col0 % 64 != 0) arch::trap();
      const std::uint32_t sa = arch::shared_address(a.data), sb = arch::shared_address(b.data);
      float d[4 * TN];
      sm90_detail::to_wgmma<TN>(d, c.frag[0]);
      arch::wgmma_fence();
      TESSEL_UNROLL for (int ks = 0; ks < BK / 16; ++ks) {
        const std::uint64_t da = sm90_detail::operand_descriptor<BM, BK, AK, T>(sa, m0, ks);
        const std::uint64_t db = sm90_detail::operand_descriptor<BN, BK, !BNC, T>(sb, b_col0, ks);
        arch::wgmma_ss<AK ? 0 : 1, BNC ? 1 : 0>(d, da, db, T{});
      }
      arch::wgmma_commit();
      arch::wgmma_wait<0>();
      sm90_detail::from_wgmma<TN>(c.frag[0], d);
    }
  }

  // C += A·B, A in registers (this warp's 16 rows), B rows b_row0 .. from shared memory.
  template <class Ctx, class T, int TN, int TK, int BK, int BN, bool BNC>
  TESSEL_DEVICE static void mma(Ctx& ctx, rt<mma_m16n8k16<T>, operand::c, 1, TN>& c,
                                const rt<mma_m16n8k16<T>, operand::a, 1, TK>& a, st<T, swizzle128<BK, BN, BNC>> b,
                                int b_row0, int b_col0) {
    using atom = mma_m16n8k16<T>;
    if constexpr (!sm90_detail::wgmma_n<TN>) {
      sm80_tile_ops::mma(ctx, c, a, b, b_row0, b_col0);
    } else {
      static_assert(BN % 64 == 0, "mma: wgmma tiles are 64-column aligned");
      if (b_row0 % 16 != 0 || b_col0 % 64 != 0) arch::trap();
      const std::uint32_t sb = arch::shared_address(b.data);
      float d[4 * TN];
      sm90_detail::to_wgmma<TN>(d, c.frag[0]);
      arch::wgmma_fence();
      TESSEL_UNROLL for (int k = 0; k < TK; ++k) {
        const auto& f = a.frag[0][k];
        const std::uint32_t ra[4] = {atom::pack(f[0], f[1]), atom::pack(f[2], f[3]), atom::pack(f[4], f[5]),
                                     atom::pack(f[6], f[7])};
        const int ks = b_row0 / 16 + k;
        arch::wgmma_rs<BNC ? 1 : 0>(d, ra, sm90_detail::operand_descriptor<BN, BK, !BNC, T>(sb, b_col0, ks), T{});
      }
      arch::wgmma_commit();
      arch::wgmma_wait<0>();
      sm90_detail::from_wgmma<TN>(c.frag[0], d);
    }
  }
};

}  // namespace tessel::cuda
