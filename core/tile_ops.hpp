// tessel/core/tile_ops.hpp — the tile operations, derived from the atom maps alone.
//
// These are the portable definitions: every backend gets them by inheriting
// `generic_tile_ops` in its policy, and every backend-specific fast path (a
// cp.async copy, an ldmatrix load, a SIMD micro-kernel) must compute exactly
// what the generic one computes — the tests hold them to it. One exception,
// by name: a fast path for a transcendental functor (exp2_of_difference) may
// use the hardware's approximation within a stated bound (CUDA ex2.approx:
// 2 ulp, flushes results below 2^-126 to 0; CPU SIMD exp2: 1 ulp); data
// movement, products, sums and comparisons stay exact.
//
// Scopes: `load(ctx, st, gmatrix, ...)` and `store(ctx, gmatrix, st, ...)` are
// block-scope (all threads of the block take part); the register-tile ops are
// warp-scope: each lane acts on its own fragment, `ctx.lane()` says which.
#pragma once
#include <type_traits>
#include <utility>

#include "tessel/core/global_tile.hpp"
#include "tessel/core/register_tile.hpp"
#include "tessel/core/shared_tile.hpp"

namespace tessel {

namespace detail {
// Element s of an atom's constexpr mask array (c_row_xor / c_col_xor), read in
// a way device code may use: nvcc refuses device reads of a host constexpr
// array, but accepts its elements as template arguments.
template <class Atom, bool Rows, std::size_t... I>
TESSEL_HOST_DEVICE int xor_mask(int s, std::index_sequence<I...>) {
  int m = 0;
  ((m = int(I) == s ? std::integral_constant<int, Rows ? Atom::c_row_xor[I] : Atom::c_col_xor[I]>::value : m), ...);
  return m;
}
template <class Atom> TESSEL_HOST_DEVICE int c_row_xor(int s) {
  return xor_mask<Atom, true>(s, std::make_index_sequence<std::size_t(Atom::c_row_xor_count)>{});
}
template <class Atom> TESSEL_HOST_DEVICE int c_col_xor(int s) {
  return xor_mask<Atom, false>(s, std::make_index_sequence<std::size_t(Atom::c_col_xor_count)>{});
}
}  // namespace detail

struct generic_tile_ops {
  // ---- global <-> shared (block scope) --------------------------------------
  // dst(r, c) = src(row0 + r, col0 + c), converted to dst's type; 0 outside src.
  // Threads walk src's contiguous dimension fastest so global reads coalesce.
  template <class Ctx, class TD, class L, class TS>
  TESSEL_HOST_DEVICE static void load(Ctx& ctx, st<TD, L> dst, const gmatrix<TS>& src, int row0, int col0) {
    constexpr int R = L::rows, C = L::cols;
    const bool by_row = src.row_contiguous();
    for (int idx = ctx.thread(); idx < R * C; idx += ctx.threads()) {
      const int r = by_row ? idx / C : idx % R;
      const int c = by_row ? idx % C : idx / R;
      dst.at(r, c) = convert<TD>(src.get(row0 + r, col0 + c));
    }
  }
  // Completion of loads: generic loads are synchronous, so these only keep the
  // pipeline shape of asynchronous backends.
  TESSEL_HOST_DEVICE static void commit() {}
  template <int Pending> TESSEL_HOST_DEVICE static void wait() {}
  // Completion of mma: a policy whose mma returns with the products still in
  // flight (asynchronous tensor cores) waits here until at most Pending of its
  // mma calls on `acc` are outstanding; the accumulator is readable, and the
  // shared tiles of the retired calls reusable, after mma_wait<0>. The generic
  // mma is synchronous.
  template <int Pending, class Tile> TESSEL_HOST_DEVICE static void mma_wait(Tile&) {}

  // ---- shared -> register (warp scope) --------------------------------------
  // dst = src[row0 : row0 + dst.rows, col0 : col0 + dst.cols]
  template <class Ctx, class Atom, operand Role, int TR, int TC, class TS, class L>
  TESSEL_HOST_DEVICE static void load(Ctx& ctx, rt<Atom, Role, TR, TC>& dst, st<TS, L> src, int row0, int col0) {
    using Tile = rt<Atom, Role, TR, TC>;
    const int lane = ctx.lane();
    TESSEL_UNROLL for (int i = 0; i < TR; ++i)
      TESSEL_UNROLL for (int j = 0; j < TC; ++j)
        TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) {
          const coord x = Tile::where(lane, i, j, v);
          dst.frag[i][j][v] = convert<typename Tile::value_type>(to_float(src.at(row0 + x.row, col0 + x.col)));
        }
  }

  // ---- register tiles (warp scope) ------------------------------------------
  template <class Tile> TESSEL_HOST_DEVICE static void zero(Tile& t) {
    TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i)
      TESSEL_UNROLL for (int j = 0; j < Tile::tiles_c; ++j)
        TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) t.frag[i][j][v] = convert<typename Tile::value_type>(0.0f);
  }
  // t = 0 where `when` holds, else t unchanged: for a rarely taken case (a
  // unit of no steps). A policy may keep it a branch where the compiler would
  // turn it into one select per value.
  template <class Tile> TESSEL_HOST_DEVICE static void zero_if(Tile& t, bool when) {
    if (when) zero(t);
  }
  // t(r, c) = f(t(r, c), r, c) for every element this lane holds.
  template <class Ctx, class Tile, class F> TESSEL_HOST_DEVICE static void map(Ctx& ctx, Tile& t, F f) {
    const int lane = ctx.lane();
    TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i)
      TESSEL_UNROLL for (int j = 0; j < Tile::tiles_c; ++j)
        TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) {
          const coord x = Tile::where(lane, i, j, v);
          t.frag[i][j][v] = f(t.frag[i][j][v], x.row, x.col);
        }
  }

  // C += A · B on register tiles: one atom instruction per (i, j, k) sub-tile.
  template <class Atom, int TM, int TN, int TK>
  TESSEL_HOST_DEVICE static void mma(rt<Atom, operand::c, TM, TN>& c, const rt<Atom, operand::a, TM, TK>& a,
                                     const rt<Atom, operand::b, TK, TN>& b) {
    TESSEL_UNROLL for (int k = 0; k < TK; ++k)
      TESSEL_UNROLL for (int i = 0; i < TM; ++i)
        TESSEL_UNROLL for (int j = 0; j < TN; ++j) Atom::mma(c.frag[i][j], a.frag[i][k], b.frag[k][j]);
  }

  // C += A · B with A and B in shared memory: A is rows [a_row0, +C.rows) of an
  // M×K shared tile, B columns [b_col0, +C.cols) of a K×N one; the whole K of
  // the shared tiles is consumed, one atom-K slice at a time. The transposed
  // variants (AᵀB, ABᵀ, AᵀBᵀ) are the same call on `.transposed()` views.
  template <class Ctx, class Atom, int TM, int TN, class TA, class LA, class TB, class LB>
  TESSEL_HOST_DEVICE static void mma(Ctx& ctx, rt<Atom, operand::c, TM, TN>& c, st<TA, LA> a, st<TB, LB> b,
                                     int a_row0, int b_col0) {
    mma_k_loop<generic_tile_ops, false>(ctx, c, a, b, a_row0, b_col0);
  }

  // C += A · B with A in registers and B in shared memory: B is the
  // (TK·K) × C.cols block of a shared tile at (b_row0, b_col0).
  template <class Ctx, class Atom, int TM, int TN, int TK, class TB, class LB>
  TESSEL_HOST_DEVICE static void mma(Ctx& ctx, rt<Atom, operand::c, TM, TN>& c, const rt<Atom, operand::a, TM, TK>& a,
                                     st<TB, LB> b, int b_row0, int b_col0) {
    mma_k_loop<generic_tile_ops, false>(ctx, c, a, b, b_row0, b_col0);
  }

  // The K loops of the two shared-operand mma forms above, written once, with
  // the fragment loads of policy `Loads` (Loads::load: a policy whose fast
  // fragment loads should feed the same loop calls these with itself).
  // DoubleBuffer: the fragments of K slice k + 1 are loaded before the atoms of
  // slice k issue (two register sets; hides shared-memory latency on GPUs).
  template <class Loads, bool DoubleBuffer, class Ctx, class Atom, int TM, int TN, class TA, class LA, class TB, class LB>
  TESSEL_HOST_DEVICE static void mma_k_loop(Ctx& ctx, rt<Atom, operand::c, TM, TN>& c, st<TA, LA> a, st<TB, LB> b,
                                            int a_row0, int b_col0) {
    static_assert(LA::cols == LB::rows, "mma: A's K (columns) must equal B's K (rows)");
    static_assert(LA::cols % Atom::K == 0, "mma: K of the shared tiles must be a multiple of the atom's K");
    constexpr int slices = LA::cols / Atom::K, sets = DoubleBuffer ? 2 : 1;
    rt<Atom, operand::a, TM, 1> fa[sets];
    rt<Atom, operand::b, 1, TN> fb[sets];
    if constexpr (DoubleBuffer) {
      Loads::load(ctx, fa[0], a, a_row0, 0);
      Loads::load(ctx, fb[0], b, 0, b_col0);
    }
    TESSEL_UNROLL for (int ks = 0; ks < slices; ++ks) {
      const int next = DoubleBuffer ? ks + 1 : ks;  // the slice loaded in this step
      if (next < slices) {
        Loads::load(ctx, fa[next % sets], a, a_row0, next * Atom::K);
        Loads::load(ctx, fb[next % sets], b, next * Atom::K, b_col0);
      }
      mma(c, fa[ks % sets], fb[ks % sets]);
    }
  }
  template <class Loads, bool DoubleBuffer, class Ctx, class Atom, int TM, int TN, int TK, class TB, class LB>
  TESSEL_HOST_DEVICE static void mma_k_loop(Ctx& ctx, rt<Atom, operand::c, TM, TN>& c,
                                            const rt<Atom, operand::a, TM, TK>& a, st<TB, LB> b, int b_row0, int b_col0) {
    constexpr int sets = DoubleBuffer ? 2 : 1;
    rt<Atom, operand::b, 1, TN> fb[sets];
    if constexpr (DoubleBuffer) Loads::load(ctx, fb[0], b, b_row0, b_col0);
    TESSEL_UNROLL for (int k = 0; k < TK; ++k) {
      const int next = DoubleBuffer ? k + 1 : k;
      if (next < TK) Loads::load(ctx, fb[next % sets], b, b_row0 + next * Atom::K, b_col0);
      TESSEL_UNROLL for (int i = 0; i < TM; ++i)
        TESSEL_UNROLL for (int j = 0; j < TN; ++j) Atom::mma(c.frag[i][j], a.frag[i][k], fb[k % sets].frag[0][j]);
    }
  }

  // dst(r, c) = src(r, c), converted to A's element type, without leaving the
  // lane: only for atoms where c_feeds_a holds (atom_traits.hpp).
  template <class Ctx, class Atom, int TM, int TN, int TK>
  TESSEL_HOST_DEVICE static void relayout(Ctx& /*ctx*/, rt<Atom, operand::a, TM, TK>& dst,
                                          const rt<Atom, operand::c, TM, TN>& src) {
    static_assert(c_feeds_a<Atom>(), "relayout: this atom's C fragment is not its A fragment");
    static_assert(TK * Atom::K == TN * Atom::N, "relayout: the tiles must have the same shape");
    TESSEL_UNROLL for (int i = 0; i < TM; ++i)
      TESSEL_UNROLL for (int k = 0; k < TK; ++k)
        TESSEL_UNROLL for (int v = 0; v < Atom::a_values; ++v) {
          const int s = c_source_of_a<Atom>(0, v, k);
          dst.frag[i][k][v] = convert<typename Atom::a_type>(to_float(src.frag[i][s / Atom::c_values][s % Atom::c_values]));
        }
  }

  // ---- register -> global (warp scope): the epilogue ---------------------------
  // dst(row0 + r, col0 + c) = alpha · t(r, c) + beta · dst(...), for the
  // elements inside dst only; dst is not read when beta == 0.
  template <class Ctx, class Tile, class TD>
  TESSEL_HOST_DEVICE static void store(Ctx& ctx, const gmatrix<TD>& dst, const Tile& t, int row0, int col0, float alpha,
                                       float beta) {
    const int lane = ctx.lane();
    TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i)
      TESSEL_UNROLL for (int j = 0; j < Tile::tiles_c; ++j)
        TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) {
          const coord x = Tile::where(lane, i, j, v);
          const int r = row0 + x.row, col = col0 + x.col;
          if (!dst.contains(r, col)) continue;
          TD* p = dst.addr(r, col);
          float out = alpha * to_float(t.frag[i][j][v]);
          if (beta != 0.0f) out += beta * to_float(*p);
          *p = convert<TD>(out);
        }
  }
  // register -> shared (warp scope), plain copy with conversion.
  template <class Ctx, class Tile, class TD, class L>
  TESSEL_HOST_DEVICE static void store(Ctx& ctx, st<TD, L> dst, const Tile& t, int row0, int col0) {
    const int lane = ctx.lane();
    TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i)
      TESSEL_UNROLL for (int j = 0; j < Tile::tiles_c; ++j)
        TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) {
          const coord x = Tile::where(lane, i, j, v);
          dst.at(row0 + x.row, col0 + x.col) = convert<TD>(to_float(t.frag[i][j][v]));
        }
  }

  // ---- reductions and broadcasts over C tiles (warp scope) --------------------
  // out[i][v] = op over the columns of row where(lane, i, ·, v).row. Each lane
  // folds its own values of that row, then combines with the lanes the atom
  // names in c_row_xor (lanes holding other columns of the same rows). Which of
  // a lane's values share a row is the same in every lane (valid_atom checks
  // it), so it is read off lane 0 and every index here is a compile-time
  // constant once the loops unroll: fragments stay in registers on GPUs.
  template <class Ctx, class Tile, class Op>
  TESSEL_HOST_DEVICE static void row_reduce(Ctx& ctx, col_vector<Tile>& out, const Tile& t, Op op) {
    using Atom = typename Tile::atom;
    using G = typename Tile::geometry;
    TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i) {
      TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) {
        if (first_in_row<G>(v) != v) continue;
        float acc = to_float(t.frag[i][0][v]);
        TESSEL_UNROLL for (int j = 0; j < Tile::tiles_c; ++j)
          TESSEL_UNROLL for (int w = 0; w < Tile::values; ++w)
            if ((j != 0 || w != v) && first_in_row<G>(w) == v) acc = op(acc, to_float(t.frag[i][j][w]));
        TESSEL_UNROLL for (int s = 0; s < Atom::c_row_xor_count; ++s) acc = op(acc, ctx.shfl_xor(acc, detail::c_row_xor<Atom>(s)));
        out.value[i][v] = acc;
      }
      TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) out.value[i][v] = out.value[i][first_in_row<G>(v)];
    }
  }
  // out[j][v] = op over the rows of column where(lane, ·, j, v).col.
  template <class Ctx, class Tile, class Op>
  TESSEL_HOST_DEVICE static void col_reduce(Ctx& ctx, row_vector<Tile>& out, const Tile& t, Op op) {
    using Atom = typename Tile::atom;
    static_assert(!c_cols_span_warps<Atom>::value, "col_reduce: this atom's C columns span warps; no lane exchange reaches them");
    using G = typename Tile::geometry;
    TESSEL_UNROLL for (int j = 0; j < Tile::tiles_c; ++j) {
      TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) {
        if (first_in_col<G>(v) != v) continue;
        float acc = to_float(t.frag[0][j][v]);
        TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i)
          TESSEL_UNROLL for (int w = 0; w < Tile::values; ++w)
            if ((i != 0 || w != v) && first_in_col<G>(w) == v) acc = op(acc, to_float(t.frag[i][j][w]));
        TESSEL_UNROLL for (int s = 0; s < Atom::c_col_xor_count; ++s) acc = op(acc, ctx.shfl_xor(acc, detail::c_col_xor<Atom>(s)));
        out.value[j][v] = acc;
      }
      TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) out.value[j][v] = out.value[j][first_in_col<G>(v)];
    }
  }
  // The first of a lane's values that lies in the same row (column) as value v.
  template <class G> TESSEL_HOST_DEVICE static constexpr int first_in_row(int v) { return G::first_in_row(v); }
  template <class G> TESSEL_HOST_DEVICE static constexpr int first_in_col(int v) {
    for (int w = 0; w < v; ++w)
      if (G::at(0, w).col == G::at(0, v).col) return w;
    return v;
  }
  // t(r, c) = f(t(r, c), vec[r]) — a column vector broadcast along each row.
  // Contract (every policy's broadcast_rows): row r's value is read at the
  // row's first value only, vec.value[i][first_in_row(v)]; the other entries
  // may hold anything (row_reduce, too, need only write the first ones).
  template <class Tile, class F> TESSEL_HOST_DEVICE static void broadcast_rows(Tile& t, const col_vector<Tile>& vec, F f) {
    using G = typename Tile::geometry;
    TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i)
      TESSEL_UNROLL for (int j = 0; j < Tile::tiles_c; ++j)
        TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v)
          t.frag[i][j][v] = f(t.frag[i][j][v], vec.value[i][first_in_row<G>(v)]);
  }
  // vec[r] = f(vec[r]) at each row's first value (what broadcast_rows reads);
  // the other entries are left as they are.
  template <class Tile, class F> TESSEL_HOST_DEVICE static void map_rows(col_vector<Tile>& vec, F f) {
    TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i) {
      auto row = [&](int v) { vec.value[i][v] = f(vec.value[i][v]); };
      for_each_row_first<typename Tile::geometry>(row);
    }
  }
  // t(r, c) = f(t(r, c), vec[c]) — a row vector broadcast down each column.
  template <class Tile, class F> TESSEL_HOST_DEVICE static void broadcast_cols(Tile& t, const row_vector<Tile>& vec, F f) {
    TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i)
      TESSEL_UNROLL for (int j = 0; j < Tile::tiles_c; ++j)
        TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) t.frag[i][j][v] = f(t.frag[i][j][v], vec.value[j][v]);
  }

};

// Optional, per policy: mma(ctx, c, a, b, a_row0, b_col0, accumulate) on
// shared A and B, computing C = A·B without reading C where accumulate is
// false (sm90's wgmma: its scale-d operand), so that an op's first step needs
// no zero() of C before it. mma_overwrites says whether policy P has it for
// these operand types; an op without it zeroes C and accumulates.
template <class P, class Ctx, class C, class A, class B, class = void> struct mma_overwrites : std::false_type {};
template <class P, class Ctx, class C, class A, class B>
struct mma_overwrites<P, Ctx, C, A, B,
                      std::void_t<decltype(P::mma(std::declval<Ctx&>(), std::declval<C&>(), std::declval<A>(),
                                                  std::declval<B>(), 0, 0, false))>> : std::true_type {};

// Optional, per policy: mma_skipping(ctx, c, a, b, a_row0, b_col0, skip, accumulate):
// mma's C = A·B (+ C where accumulate), except that products a mask says no one
// needs may be skipped. The mask (core/math.hpp's hide_keys) hides, in row r of
// C (A's row a_row0 + r), the columns from mask.hidden_from(r) on, a bound that
// never falls as r grows. By skip's type:
//   masked_c<Mask>  C's hidden entries (r, c): B's column b_col0 + c, c >=
//                   hidden_from(r) — are overwritten after the call (attention's
//                   S, masked): their values after it are unspecified;
//   masked_a<Mask>  A's hidden entries (r, k): A's row a_row0 + r (of A in
//                   registers, its row r), column k >= hidden_from(r) — are
//                   zero (attention's P): C is the plain
//                   mma's wherever B is finite (a skipped product is one of a zero).
// A policy skips what its layout makes cheap (whole rows of panels, column
// panels, depth slices) or nothing. mma_skipping_of says whether policy P has
// it for these operand types and this skip.
template <class Mask> struct masked_c {
  Mask mask;
};
template <class Mask> struct masked_a {
  Mask mask;
};
template <class P, class Ctx, class C, class A, class B, class Skip, class = void>
struct mma_skipping_of : std::false_type {};
template <class P, class Ctx, class C, class A, class B, class Skip>
struct mma_skipping_of<P, Ctx, C, A, B, Skip,
                       std::void_t<decltype(P::mma_skipping(std::declval<Ctx&>(), std::declval<C&>(), std::declval<A>(),
                                                            std::declval<B>(), 0, 0, std::declval<Skip>(), true))>>
    : std::true_type {};

// Optional, per policy: turn_wait<Units>(u) and turn_pass<Units>(u), for the
// Units consumer units of a block taking turns in a ring (an attention config's
// take_turns): turn_wait blocks unit u until the unit before it (u − 1, unit 0
// after the last) has passed it the turn; turn_pass hands the turn to the next
// unit without waiting. Counts must match: each turn_wait of one unit is
// answered by one turn_pass of the unit before, and a unit passes again only
// after it has waited again, so that no pass finds the last one unanswered
// (sm90: named barriers, two or three units; a barrier counts arrivals).
// Ops take turns through core/turn_ring.hpp, which keeps both.

// Optional, per policy: mma_operands(c, a, b, a_row0, b_col0) -> what
// mma(ctx, c, operands, accumulate) needs of shared A and B (rows a_row0 .. of
// A, columns b_col0 .. of B), computed from their addresses alone, never their
// contents, so that a schedule can have it ready before the stage has landed
// (sm90: the wgmma descriptors). mma_operands_of says whether policy P has it
// for these operand types, and its type; where it does, that mma
// overwrites C where accumulate is false, as mma_overwrites.
template <class P, class C, class A, class B, class = void> struct mma_operands_of : std::false_type {
  struct type {};
};
template <class P, class C, class A, class B>
struct mma_operands_of<P, C, A, B,
                       std::void_t<decltype(P::mma_operands(std::declval<const C&>(), std::declval<A>(),
                                                            std::declval<B>(), 0, 0))>> : std::true_type {
  using type = decltype(P::mma_operands(std::declval<const C&>(), std::declval<A>(), std::declval<B>(), 0, 0));
};

}  // namespace tessel
