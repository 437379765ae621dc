// tessel/hip/tile_ops_cdna.hpp — CDNA fast paths of the tile ops (configurations: gemm_config.hpp, attention_config.hpp).
//
// Contract: every overload here computes what generic_tile_ops computes for
// the same arguments (one exception: NaN inputs keep their payload, where the
// generic float round trip would quiet them); anything the fast paths do not
// cover falls through to the generic definitions. Host-parseable, with the
// context a template parameter, so tests run these exact paths on the CPU
// with emulated lanes and threads.
//
// Shared tiles are padded row- or column-major (no swizzle): for MFMA inputs
// both operands are stored K-contiguous, so a lane's 4 fragment values
//   A: (l, e) -> (l % 32, 4·(l / 32) + e),  B: (l, e) -> (4·(l / 32) + e, l % 32)
// are one 8-byte LDS read. Global -> LDS copies move 16 bytes per thread along
// the matrix's contiguous dimension when gmatrix::vec16 allows; when LDS is
// contiguous along the other dimension (a transposing copy) they are stored
// element by element. The fast paths assume what every tessel arena gives:
// shared tiles start 16-byte aligned (smem_allocator and the GEMM's stages
// align to 128 bytes).
#pragma once
#include <cstdint>
#include <type_traits>

#include "tessel/core/tile_ops.hpp"
#include "tessel/hip/atom/mfma_32x32x8.hpp"
#include "tessel/hip/atom/scalar.hpp"

namespace tessel::hip {

namespace detail {
template <class L> struct padded_layout : std::false_type {};
template <int R, int C, int P> struct padded_layout<row_major<R, C, P>> : std::true_type {
  static constexpr int line = C + P;  // elements between consecutive rows
};
template <int R, int C, int P> struct padded_layout<col_major<R, C, P>> : std::true_type {
  static constexpr int line = R + P;  // elements between consecutive columns
};

// N elements moved as one access. The access is typed (an aligned aggregate of
// T, which may alias T) so that the compiler sees the alignment on the
// instruction itself: global_load_dwordx4 / ds_write_b128 / ds_read_b64.
template <class T, int N> struct alignas(sizeof(T) * N) pack {
  T v[N];
};
template <class T, int N> TESSEL_HOST_DEVICE pack<T, N> load_pack(const T* p) {
  return *reinterpret_cast<const pack<T, N>*>(p);
}
template <class T, int N> TESSEL_HOST_DEVICE void store_pack(T* p, const pack<T, N>& r) {
  *reinterpret_cast<pack<T, N>*>(p) = r;
}

// Whether the C values of a lane lie in pairwise different rows (in every lane).
template <class Atom> constexpr bool c_rows_distinct() {
  for (int l = 0; l < Atom::lanes; ++l)
    for (int v = 0; v < Atom::c_values; ++v)
      for (int w = 0; w < v; ++w)
        if (Atom::c_coord(l, v).row == Atom::c_coord(l, w).row) return false;
  return true;
}

// convert<T>(f) for bf16 / fp16 with the NaN case as a select: the same bits as
// core/element.hpp's to_bf16 / to_fp16 (whose early return for NaN becomes an
// exec-mask branch per element on the GPU).
template <class T> TESSEL_HOST_DEVICE T convert_select(float f) {
  const std::uint32_t u = float_bits(f);
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  if constexpr (std::is_same_v<T, bf16>) {
    const std::uint16_t rounded = std::uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    return bf16::from_bits(nan ? std::uint16_t((u >> 16) | 0x40u) : rounded);
  } else {
    return convert<T>(f);
  }
}
}  // namespace detail

struct cdna_tile_ops : generic_tile_ops {
  using generic_tile_ops::load;
  using generic_tile_ops::mma;
  using generic_tile_ops::row_reduce;
  using generic_tile_ops::store;

  // ---- global -> shared, 16 bytes per thread (block scope) ------------------
  // Same element type in and out, padded row/col-major destination, the tile
  // wholly inside the matrix (edge tiles take the generic, masked path).
  template <class Ctx, class T, class L, std::enable_if_t<detail::padded_layout<L>::value, int> = 0>
  TESSEL_HOST_DEVICE static void load(Ctx& ctx, st<T, L> dst, const gmatrix<const T>& src, int row0, int col0) {
    constexpr int V = 16 / int(sizeof(T));
    constexpr int R = L::rows, C = L::cols;
    static_assert(R % V == 0 && C % V == 0, "cdna load: tile sides must be multiples of a 16-byte vector");
    const bool by_row = src.row_contiguous();
    const bool inside = row0 + R <= src.rows && col0 + C <= src.cols;
    if (!src.vec16 || !inside || (by_row ? col0 : row0) % V != 0) {
      generic_tile_ops::load(ctx, dst, src, row0, col0);
      return;
    }
    if (by_row) copy_vec16<true>(ctx, dst, src, row0, col0);
    else copy_vec16<false>(ctx, dst, src, row0, col0);
  }

 private:
  // The copy with the global majorness known at compile time, so that each
  // loop is straight-line: 16-byte global load, then one 16-byte LDS store
  // when LDS is contiguous along the same dimension (and its padded lines keep
  // 16-byte alignment), else V 2- or 4-byte stores (a transposing copy).
  template <bool ByRow, class Ctx, class T, class L>
  TESSEL_HOST_DEVICE static void copy_vec16(Ctx& ctx, st<T, L> dst, const gmatrix<const T>& src, int row0, int col0) {
    constexpr int V = 16 / int(sizeof(T));
    constexpr int R = L::rows, C = L::cols, per_line = (ByRow ? C : R) / V;
    constexpr bool vector_store =
        L::contiguous_cols == ByRow && detail::padded_layout<L>::line * int(sizeof(T)) % 16 == 0;
    for (int idx = ctx.thread(); idx < R * C / V; idx += ctx.threads()) {
      const int o = idx / per_line, x = idx % per_line * V;  // line, position along it
      const int r = ByRow ? o : x, c = ByRow ? x : o;
      const detail::pack<T, V> chunk = detail::load_pack<T, V>(src.addr(row0 + r, col0 + c));
      if constexpr (vector_store) {
        detail::store_pack<T, V>(&dst.at(r, c), chunk);
      } else {
        TESSEL_UNROLL for (int e = 0; e < V; ++e) dst.at(r + (ByRow ? 0 : e), c + (ByRow ? e : 0)) = chunk.v[e];
      }
    }
  }

 public:
  // ---- shared -> register for the MFMA atom: one 8-byte read per fragment ---
  // A from a K-contiguous (row-major) M×K tile.
  template <class Ctx, class T, int TR, int TC, int R, int C, int P>
  TESSEL_HOST_DEVICE static void load(Ctx& ctx, rt<mfma_32x32x8<T>, operand::a, TR, TC>& dst,
                                      st<T, row_major<R, C, P>> src, int row0, int col0) {
    if constexpr ((C + P) % 4 != 0) {
      generic_tile_ops::load(ctx, dst, src, row0, col0);
    } else {
      if (col0 % 4 != 0) return generic_tile_ops::load(ctx, dst, src, row0, col0);
      const int l = ctx.lane();
      TESSEL_UNROLL for (int i = 0; i < TR; ++i)
        TESSEL_UNROLL for (int j = 0; j < TC; ++j) {
          const auto p = detail::load_pack<T, 4>(&src.at(row0 + 32 * i + l % 32, col0 + 8 * j + 4 * (l / 32)));
          TESSEL_UNROLL for (int e = 0; e < 4; ++e) dst.frag[i][j][e] = p.v[e];
        }
    }
  }
  // B from a K-contiguous (column-major) K×N tile.
  template <class Ctx, class T, int TR, int TC, int R, int C, int P>
  TESSEL_HOST_DEVICE static void load(Ctx& ctx, rt<mfma_32x32x8<T>, operand::b, TR, TC>& dst,
                                      st<T, col_major<R, C, P>> src, int row0, int col0) {
    if constexpr ((R + P) % 4 != 0) {
      generic_tile_ops::load(ctx, dst, src, row0, col0);
    } else {
      if (row0 % 4 != 0) return generic_tile_ops::load(ctx, dst, src, row0, col0);
      const int l = ctx.lane();
      TESSEL_UNROLL for (int i = 0; i < TR; ++i)
        TESSEL_UNROLL for (int j = 0; j < TC; ++j) {
          const auto p = detail::load_pack<T, 4>(&src.at(row0 + 8 * i + 4 * (l / 32), col0 + 32 * j + l % 32));
          TESSEL_UNROLL for (int e = 0; e < 4; ++e) dst.frag[i][j][e] = p.v[e];
        }
    }
  }

  // ---- C += A · B from shared tiles, through the fragment loads above -------
  // (the generic K loop, single-buffered, fed by this policy's loads).
  template <class Ctx, class T, int TM, int TN, class LA, class LB>
  TESSEL_HOST_DEVICE static void mma(Ctx& ctx, rt<mfma_32x32x8<T>, operand::c, TM, TN>& c, st<T, LA> a, st<T, LB> b,
                                     int a_row0, int b_col0) {
    mma_k_loop<cdna_tile_ops, false>(ctx, c, a, b, a_row0, b_col0);
  }

  // ---- register -> LDS: an MFMA C tile into a padded row-major tile ----------
  // (attention's P, written as the A operand of P·V.) Lane l holds column
  // l % 32 of rows 8·(r/4) + 4·(l/32) + r%4: one lane base address, and every
  // value at a compile-time offset from it (ds_write_b16 with an immediate
  // offset), where the generic store keeps an address per value. The
  // conversion is the generic one, with its NaN test as a select, not a branch.
  template <class Ctx, class T, int TR, int TC, int R, int C, int P>
  TESSEL_HOST_DEVICE static void store(Ctx& ctx, st<T, row_major<R, C, P>> dst,
                                       const rt<mfma_32x32x8<T>, operand::c, TR, TC>& t, int row0, int col0) {
    constexpr int line = C + P;
    const int l = ctx.lane();
    T* base = &dst.at(row0 + 4 * (l / 32), col0 + l % 32);
    TESSEL_UNROLL for (int i = 0; i < TR; ++i)
      TESSEL_UNROLL for (int j = 0; j < TC; ++j)
        TESSEL_UNROLL for (int v = 0; v < 16; ++v)
          base[(32 * i + 8 * (v / 4) + v % 4) * line + 32 * j] = detail::convert_select<T>(t.frag[i][j][v]);
  }

  // ---- row reduction of an MFMA C tile (warp scope) --------------------------
  // In the 32×32 C map every value r of a lane lies in its own row
  // (8·(r/4) + 4·(l/32) + r%4) and column l % 32, so a row of the tile is value
  // r of sub-tiles (i, 0..TC-1) in the 32 lanes of one half-wave. Folded in the
  // generic order (sub-tile 0 first, then j = 1, 2, ...; then c_row_xor's masks
  // in order), with every fragment index a literal: the generic loop nest
  // (first_in_row searched per value) is too large for the unroller at 16
  // values per lane and ends up indexing the fragment at run time (scratch).
  template <class Ctx, class T, int TR, int TC, class Op>
  TESSEL_HOST_DEVICE static void row_reduce(Ctx& ctx, col_vector<rt<mfma_32x32x8<T>, operand::c, TR, TC>>& out,
                                            const rt<mfma_32x32x8<T>, operand::c, TR, TC>& t, Op op) {
    using Atom = mfma_32x32x8<T>;
    static_assert(detail::c_rows_distinct<Atom>(), "cdna row_reduce: each C value of a lane must lie in its own row");
    TESSEL_UNROLL for (int i = 0; i < TR; ++i)
      TESSEL_UNROLL for (int v = 0; v < Atom::c_values; ++v) {
        float acc = t.frag[i][0][v];
        TESSEL_UNROLL for (int j = 1; j < TC; ++j) acc = op(acc, t.frag[i][j][v]);
        TESSEL_UNROLL for (int s = 0; s < Atom::c_row_xor_count; ++s)
          acc = op(acc, ctx.shfl_xor(acc, Atom::c_row_xor[s]));
        out.value[i][v] = acc;
      }
  }
};

}  // namespace tessel::hip
