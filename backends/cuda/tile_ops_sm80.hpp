// tessel/cuda/tile_ops_sm80.hpp — the sm_80 fast paths of the tile ops (cp.async, ldmatrix, mma.sync).
//
// Contract: each overload computes exactly what the generic_tile_ops
// definition computes for the same arguments, and takes only the shapes it is
// written for (16-bit elements in swizzle128 shared tiles, the mma_m16n8k16
// atom); everything else resolves to the generic definitions, which these
// overloads also call when a run-time precondition (alignment) fails.
//   load  global -> shared: 16-byte cp.async along the contiguous dimension when
//         gmatrix::vec16 holds and the tile is contiguous the same way; edge
//         vectors read only their in-bounds bytes and are zero-filled.
//   commit / wait<N>: cp.async groups.
//   load  shared -> register: ldmatrix.x4 (.trans where the tile's contiguous
//         dimension is not the one the fragment pairs run along).
//   mma   shared × shared: generic_tile_ops::mma_k_loop on the ldmatrix loads,
//         double-buffered (the next K slice loads while this one feeds mma.sync).
//   store register -> global: two adjacent columns per access when C is
//         row-major and 16-byte aligned (gmatrix::vec16), else element-wise;
//         rounding by cvt (arch/convert.hpp, bit-exact with convert<T>).
//   mma   registers × shared: the same, A held in registers;
//   relayout C -> A in registers by cvt pairs; broadcast_rows with
//         exp2_of_difference on ex2.approx.ftz (see its note).
// One exception to "exactly": a signalling-NaN input is copied by cp.async
// as it is, where the generic float round trip would quiet it.
#pragma once
#include <cstdint>
#include <type_traits>

#include "tessel/core/math.hpp"
#include "tessel/core/tile_ops.hpp"
#include "tessel/cuda/arch/branch.hpp"
#include "tessel/cuda/arch/convert.hpp"
#include "tessel/cuda/arch/cp_async.hpp"
#include "tessel/cuda/arch/ex2.hpp"
#include "tessel/cuda/arch/ldmatrix.hpp"
#include "tessel/cuda/atom/mma_m16n8k16.hpp"
#include "tessel/cuda/swizzle.hpp"

namespace tessel::cuda {

namespace sm80_detail {

// ldmatrix.x4 reads one 16×16 operand block (A: m×k, B: k×n) as four 8×8
// matrices; matrix j covers rows 8·(j%2) .. +8 and columns 8·(j/2) .. +8.
// Lane l gives the address of row l%8 of matrix l/8; that 16-byte row runs
// along the block's columns when they are contiguous in shared memory, else
// along its rows. Its first element, (lane) -> (row, col):
TESSEL_HOST_DEVICE constexpr coord x4_row_start(int lane, bool cols_contiguous) {
  const int j = lane / 8, r8 = lane % 8;
  return cols_contiguous ? coord{8 * (j % 2) + r8, 8 * (j / 2)} : coord{8 * (j % 2), 8 * (j / 2) + r8};
}

// The block element that half e of register j of `lane` receives (arch/ldmatrix.hpp's rule).
constexpr coord x4_element(int lane, int j, int e, bool cols_contiguous, bool trans) {
  const int src_lane = 8 * j + (trans ? 2 * (lane % 4) + e : lane / 4);
  const int pos = trans ? lane / 4 : 2 * (lane % 4) + e;
  const coord s = x4_row_start(src_lane, cols_contiguous);
  return cols_contiguous ? coord{s.row, s.col + pos} : coord{s.row + pos, s.col};
}

// A: register j, half e is value 2j + e of the 16×16 atom tile; plain load when
// A's columns (k) are contiguous, .trans otherwise.
template <class Atom> constexpr bool x4_gives_a(bool cols_contiguous) {
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < 4; ++j)
      for (int e = 0; e < 2; ++e) {
        const coord x = x4_element(l, j, e, cols_contiguous, !cols_contiguous);
        const coord y = Atom::a_coord(l, 2 * j + e);
        if (x.row != y.row || x.col != y.col) return false;
      }
  return true;
}
// B: the block is two 16×8 atom tiles side by side; register j, half e is value
// 2·(j%2) + e of tile j/2. Plain load when B's rows (k) are contiguous.
template <class Atom> constexpr bool x4_gives_b(bool cols_contiguous) {
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < 4; ++j)
      for (int e = 0; e < 2; ++e) {
        const coord x = x4_element(l, j, e, cols_contiguous, cols_contiguous);
        const coord y = Atom::b_coord(l, 2 * (j % 2) + e);
        if (x.row != y.row || x.col != y.col + 8 * (j / 2)) return false;
      }
  return true;
}
static_assert(x4_gives_a<mma_m16n8k16<bf16>>(true) && x4_gives_a<mma_m16n8k16<bf16>>(false),
              "ldmatrix addressing must reproduce the A fragment of mma_m16n8k16");
static_assert(x4_gives_b<mma_m16n8k16<bf16>>(true) && x4_gives_b<mma_m16n8k16<bf16>>(false),
              "ldmatrix addressing must reproduce the B fragment of mma_m16n8k16");

// Two adjacent elements of C, in one access (the address is 2·sizeof(T)-aligned).
TESSEL_DEVICE void load_pair(const float* p, float& v0, float& v1) {
  const float2 v = *reinterpret_cast<const float2*>(p);
  v0 = v.x, v1 = v.y;
}
template <class T> TESSEL_DEVICE void load_pair(const T* p, float& v0, float& v1) {
  const std::uint32_t r = *reinterpret_cast<const std::uint32_t*>(p);
  v0 = arch::widen(T::from_bits(std::uint16_t(r & 0xffffu)));
  v1 = arch::widen(T::from_bits(std::uint16_t(r >> 16)));
}
TESSEL_DEVICE void store_pair(float* p, float v0, float v1) { *reinterpret_cast<float2*>(p) = float2{v0, v1}; }
template <class T> TESSEL_DEVICE void store_pair(T* p, float v0, float v1) {
  *reinterpret_cast<std::uint32_t*>(p) = arch::cvt_pack(v0, v1, T{});
}

// The block size when the context fixes it at compile time (launch.hpp's fixed_context), else 0.
template <class Ctx, class = void> struct threads_of {
  static constexpr int value = 0;
};
template <class Ctx> struct threads_of<Ctx, std::void_t<decltype(Ctx::block_threads)>> {
  static constexpr int value = Ctx::block_threads;
};

}  // namespace sm80_detail

struct sm80_tile_ops : generic_tile_ops {
  using generic_tile_ops::load;
  using generic_tile_ops::mma;
  using generic_tile_ops::store;
  using generic_tile_ops::relayout;
  using generic_tile_ops::broadcast_rows;

  // t = 0 where `when` holds: a branch (the default's `if` becomes one select
  // per value, 128 a lane for the sm90 GEMM's accumulator, in every epilogue).
  template <class Tile> TESSEL_DEVICE static void zero_if(Tile& t, bool when) {
    if (when) {
      arch::keep_branch();
      zero(t);
    }
  }

  // ---- global -> shared: cp.async ------------------------------------------------
  template <class Ctx, class T, int R, int C, bool CC>
  TESSEL_DEVICE static void load(Ctx& ctx, st<T, swizzle128<R, C, CC>> dst, const gmatrix<const T>& src, int row0,
                                 int col0) {
    if (!src.vec16 || src.row_contiguous() != CC) {
      generic_tile_ops::load(ctx, dst, src, row0, col0);
      return;
    }
    using L = swizzle128<R, C, CC>;
    constexpr int per_line = L::inner / L::chunk, total = L::outer * per_line;
    constexpr int threads = sm80_detail::threads_of<Ctx>::value;
    // (o, i): the tile's line and element along it; its source is element
    // (out0 + o, in0 + i) of src seen as outer × inner, `lead` elements per line.
    const int in0 = CC ? col0 : row0, out0 = CC ? row0 : col0;
    const int in_ext = CC ? src.cols : src.rows, out_ext = CC ? src.rows : src.cols;
    const std::int64_t lead = CC ? src.row_stride : src.col_stride;
    // Bytes of the 16 at element `in0 + i` of a line that lie inside src.
    auto in_bytes = [&](int i) {
      const int b = (in_ext - (in0 + i)) * int(sizeof(T));
      return b < 0 ? 0 : b > 16 ? 16 : b;
    };
    if constexpr (threads > 0 && threads % per_line == 0 && total % threads == 0) {
      // Thread t copies chunk column i of lines o0, o0 + step, ...: one pointer
      // increment per chunk; the tile-uniform interior case needs no masking.
      constexpr int step = threads / per_line;
      const int o0 = ctx.thread() / per_line, i = (ctx.thread() % per_line) * L::chunk;
      const T* g = src.ptr + (out0 + o0) * lead + (in0 + i);  // dereferenced only inside src
      const std::int64_t g_step = step * lead;
      const std::uint32_t s = arch::shared_address(dst.data);
      if (out0 + L::outer <= out_ext && in0 + L::inner <= in_ext) {
        TESSEL_UNROLL for (int j = 0; j < total / threads; ++j)
          arch::cp_async_16(s + sizeof(T) * L::offset_oi(o0 + j * step, i), g + j * g_step, 16);
      } else {
        const int b = in_bytes(i);
        TESSEL_UNROLL for (int j = 0; j < total / threads; ++j) {
          const int bytes = out0 + o0 + j * step < out_ext ? b : 0;
          arch::cp_async_16(s + sizeof(T) * L::offset_oi(o0 + j * step, i), bytes ? g + j * g_step : src.ptr, bytes);
        }
      }
    } else {
      for (int idx = ctx.thread(); idx < total; idx += ctx.threads()) {
        const int o = idx / per_line, i = (idx % per_line) * L::chunk, bytes = out0 + o < out_ext ? in_bytes(i) : 0;
        const T* g = bytes ? src.ptr + (out0 + o) * lead + (in0 + i) : src.ptr;  // nothing is read when bytes == 0
        arch::cp_async_16(arch::shared_address(dst.data + L::offset_oi(o, i)), g, bytes);
      }
    }
  }
  TESSEL_DEVICE static void commit() { arch::cp_async_commit(); }
  template <int Pending> TESSEL_DEVICE static void wait() { arch::cp_async_wait<Pending>(); }

  // ---- shared -> register: ldmatrix --------------------------------------------------
  // A fragments: TR × TC atom tiles of 16×16, one ldmatrix.x4 each.
  template <class Ctx, class T, int TR, int TC, int R, int C, bool CC>
  TESSEL_DEVICE static void load(Ctx& ctx, rt<mma_m16n8k16<T>, operand::a, TR, TC>& dst, st<T, swizzle128<R, C, CC>> src,
                                 int row0, int col0) {
    using atom = mma_m16n8k16<T>;
    if ((CC ? col0 : row0) % 8 != 0) {  // ldmatrix rows must start on a 16-byte chunk
      generic_tile_ops::load(ctx, dst, src, row0, col0);
      return;
    }
    const coord s = sm80_detail::x4_row_start(ctx.lane(), CC);
    TESSEL_UNROLL for (int i = 0; i < TR; ++i)
      TESSEL_UNROLL for (int k = 0; k < TC; ++k) {
        std::uint32_t r[4];
        const std::uint32_t addr = arch::shared_address(&src.at(row0 + 16 * i + s.row, col0 + 16 * k + s.col));
        if constexpr (CC) arch::ldmatrix_x4(r, addr);
        else arch::ldmatrix_x4_trans(r, addr);
        TESSEL_UNROLL for (int j = 0; j < 4; ++j) atom::unpack(r[j], dst.frag[i][k][2 * j], dst.frag[i][k][2 * j + 1]);
      }
  }
  // B fragments: TR × TC atom tiles of 16×8, two side by side per ldmatrix.x4.
  template <class Ctx, class T, int TR, int TC, int R, int C, bool CC>
  TESSEL_DEVICE static void load(Ctx& ctx, rt<mma_m16n8k16<T>, operand::b, TR, TC>& dst, st<T, swizzle128<R, C, CC>> src,
                                 int row0, int col0) {
    using atom = mma_m16n8k16<T>;
    if (TC % 2 != 0 || (CC ? col0 : row0) % 8 != 0) {
      generic_tile_ops::load(ctx, dst, src, row0, col0);
      return;
    }
    const coord s = sm80_detail::x4_row_start(ctx.lane(), CC);
    TESSEL_UNROLL for (int k = 0; k < TR; ++k)
      TESSEL_UNROLL for (int n = 0; n < TC / 2; ++n) {
        std::uint32_t r[4];
        const std::uint32_t addr = arch::shared_address(&src.at(row0 + 16 * k + s.row, col0 + 16 * n + s.col));
        if constexpr (CC) arch::ldmatrix_x4_trans(r, addr);
        else arch::ldmatrix_x4(r, addr);
        TESSEL_UNROLL for (int j = 0; j < 4; ++j)
          atom::unpack(r[j], dst.frag[k][2 * n + j / 2][2 * (j % 2)], dst.frag[k][2 * n + j / 2][2 * (j % 2) + 1]);
      }
  }

  // ---- C += A·B from shared tiles (ldmatrix fragments) -----------------------------------
  // The generic K loops, fed by the ldmatrix loads above, double-buffered: the
  // fragments of slice k + 1 are loaded while slice k feeds mma.sync.
  template <class Ctx, class T, int TM, int TN, int BM, int BK, bool AK, int BK2, int BN, bool BNC>
  TESSEL_DEVICE static void mma(Ctx& ctx, rt<mma_m16n8k16<T>, operand::c, TM, TN>& c, st<T, swizzle128<BM, BK, AK>> a,
                                st<T, swizzle128<BK2, BN, BNC>> b, int a_row0, int b_col0) {
    mma_k_loop<sm80_tile_ops, true>(ctx, c, a, b, a_row0, b_col0);
  }
  // A in registers, B from a shared tile.
  template <class Ctx, class T, int TM, int TN, int TK, int BK, int BN, bool BNC>
  TESSEL_DEVICE static void mma(Ctx& ctx, rt<mma_m16n8k16<T>, operand::c, TM, TN>& c,
                                const rt<mma_m16n8k16<T>, operand::a, TM, TK>& a, st<T, swizzle128<BK, BN, BNC>> b,
                                int b_row0, int b_col0) {
    mma_k_loop<sm80_tile_ops, true>(ctx, c, a, b, b_row0, b_col0);
  }

  // C tile -> A tile in registers (generic_tile_ops::relayout), two values per
  // cvt: A values 2h, 2h+1 are C values (2h % 4), +1 of n-tile 2k + h / 2; one
  // NaN test and branch for the whole tile (cvt_pack_groups), as sm90's.
  template <class Ctx, class T, int TM, int TN, int TK>
  TESSEL_DEVICE static void relayout(Ctx& /*ctx*/, rt<mma_m16n8k16<T>, operand::a, TM, TK>& dst,
                                     const rt<mma_m16n8k16<T>, operand::c, TM, TN>& src) {
    using atom = mma_m16n8k16<T>;
    static_assert(TK * 16 == TN * 8, "relayout: the tiles must have the same shape");
    static_assert(c_source_of_a<atom>(0, 0) == 0 && c_source_of_a<atom>(0, 1) == 1 && c_source_of_a<atom>(0, 2) == 2 &&
                      c_source_of_a<atom>(0, 3) == 3 && c_source_of_a<atom>(0, 4) == 4 &&
                      c_source_of_a<atom>(0, 5) == 5 && c_source_of_a<atom>(0, 6) == 6 && c_source_of_a<atom>(0, 7) == 7,
                  "relayout: A value v must be value v % 4 of C n-tile v / 4");
    float f[TM * TK][8];
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int k = 0; k < TK; ++k)
        TESSEL_UNROLL for (int v = 0; v < 8; ++v) f[i * TK + k][v] = src.frag[i][2 * k + v / 4][v % 4];
    std::uint32_t r[TM * TK][4];
    arch::cvt_pack_groups(f, r, T{});
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int k = 0; k < TK; ++k)
        TESSEL_UNROLL for (int h = 0; h < 4; ++h)
          atom::unpack(r[i * TK + k][h], dst.frag[i][k][2 * h], dst.frag[i][k][2 * h + 1]);
  }

  // t(r, c) = exp2(t(r, c)·scale − vec[r]) on ex2.approx.ftz (what FlashAttention
  // uses). The second exception to "exactly": it differs from exp2f by at most
  // 2 ulp (exp2f's own documented bound) and flushes results below 2^-126 to 0.
  template <class T, int TM, int TN>
  TESSEL_DEVICE static void broadcast_rows(rt<mma_m16n8k16<T>, operand::c, TM, TN>& t,
                                           const col_vector<rt<mma_m16n8k16<T>, operand::c, TM, TN>>& vec,
                                           exp2_of_difference f) {
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int j = 0; j < TN; ++j)
        TESSEL_UNROLL for (int v = 0; v < 4; ++v)  // vec read at each row's first value
          t.frag[i][j][v] = arch::ex2_approx(fmaf(t.frag[i][j][v], f.scale, -vec.value[i][mma_m16n8k16<T>::c_first_in_row(v)]));
  }
  template <class Tile, class F> TESSEL_HOST_DEVICE static void broadcast_rows(Tile& t, const col_vector<Tile>& vec, F f) {
    generic_tile_ops::broadcast_rows(t, vec, f);
  }

  // ---- register -> global: the epilogue -------------------------------------------------
  template <class Ctx, class T, int TM, int TN, class TD>
  TESSEL_DEVICE static void store(Ctx& ctx, const gmatrix<TD>& dst, const rt<mma_m16n8k16<T>, operand::c, TM, TN>& t,
                                  int row0, int col0, float alpha, float beta) {
    using Tile = rt<mma_m16n8k16<T>, operand::c, TM, TN>;
    const int lane = ctx.lane();
    // Values 2h and 2h+1 of a lane are columns c and c+1 of one row, c even.
    const bool pairs = dst.col_stride == 1 && dst.vec16;
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int j = 0; j < TN; ++j)
        TESSEL_UNROLL for (int h = 0; h < 2; ++h) {
          const coord x = Tile::where(lane, i, j, 2 * h);
          const int r = row0 + x.row, col = col0 + x.col;
          if (r >= dst.rows || col >= dst.cols) continue;
          float v0 = alpha * t.frag[i][j][2 * h], v1 = alpha * t.frag[i][j][2 * h + 1];
          TD* p = dst.addr(r, col);
          if (pairs && col + 1 < dst.cols) {
            if (beta != 0.0f) {
              float o0, o1;
              sm80_detail::load_pair(p, o0, o1);
              v0 += beta * o0;
              v1 += beta * o1;
            }
            sm80_detail::store_pair(p, v0, v1);
            continue;
          }
          if (beta != 0.0f) v0 += beta * arch::widen(*p);
          *p = arch::cvt<TD>(v0);
          if (col + 1 < dst.cols) {
            TD* q = dst.addr(r, col + 1);
            if (beta != 0.0f) v1 += beta * arch::widen(*q);
            *q = arch::cvt<TD>(v1);
          }
        }
  }
};

}  // namespace tessel::cuda
