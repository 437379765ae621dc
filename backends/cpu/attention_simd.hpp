// tessel/cpu/attention_simd.hpp — the attention tile ops of the SIMD CPU policy (AVX2 / AVX-512).
//
// simd_attention_ops<Arch, Tuning> is the base of simd_policy (policy_simd.hpp,
// which names the attention_config: attention_config.hpp, where the shared
// layouts below are defined): the fast overloads that the shared attention
// op (ops/attention/kernel.hpp) reaches. Atom: simd_col_atom
// <Arch, M> (an M-row column of vectors times one broadcast value), so every C
// tile rt<atom, c, TM, TN> is M-row panels, column-major inside a panel:
//   frag[i][j][v] is (i·M + v, j)
// which makes row max / row sum vertical vector ops and a col_vector one
// float per row. Shared layouts (all fp32, whatever the input type):
//   col_panels<R, C, M>  (r, c) -> (r/M)·M·C + c·M + r%M     Q (BQ×D) and P (BQ×BKV):
//                        the vector operand; P is a C tile copied as it is
//   key_rows<R, C>       (r, c) -> c·R + r                   Kᵀ (D×BKV): the K rows,
//                        copied as they lie in memory (head_dim contiguous)
//   row_panels<R, C, NB> (r, c) -> (c/NB)·R·NB + r·NB + c%NB V (BKV×D): NB-column panels
// Fast paths (each computes what core/tile_ops.hpp computes on the same layouts
// and atom: fma per k in k order, folds in column order, zeros outside the
// matrix; except the row sum, pairwise here: see row_reduce):
//   load    global -> Q / Kᵀ / V tiles, bf16 / fp16 widened on vectors; Q by 8 × W
//           register transposes; element by element at the edges
//   mma     S += Q·Kᵀ and O += P·V: an M × NB block of C in MV·NB vector
//           registers (MV = M / W) over the whole depth; A by vector loads, B by
//           broadcasts; mma_skipping: the same by W-row vectors, without
//           S's column blocks that a vector's rows all hide and with P·V's
//           depth of each vector up to its last visible key (a causal
//           diagonal's hidden triangle, panels that see no key of a step)
//   store   C tile -> P (a copy) and the epilogue C tile -> global (8 × W
//           transposes, then rows of vectors, fp16 / bf16 rounded like element.hpp)
//   map_rows (power_of_two: W rows' exp2 at once)
//   row_reduce (maximum, plus), broadcast_rows (exp2_of_difference with the
//           SIMD exp2 of arch/exp2.hpp, ~1 ulp like libm's exp2f; multiply,
//           multiply_or_zero)
// ODR: everything is a template on Arch (or always inlined).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tessel/core/math.hpp"
#include "tessel/core/tile_ops.hpp"
#include "tessel/cpu/arch/convert.hpp"
#include "tessel/cpu/arch/exp2.hpp"
#include "tessel/cpu/atom/simd_col.hpp"
#include "tessel/cpu/attention_config.hpp"

namespace tessel::cpu {

template <class Arch, class Tuning> struct simd_attention_ops : generic_tile_ops {
  using generic_tile_ops::broadcast_rows;
  using generic_tile_ops::load;
  using generic_tile_ops::map;
  using generic_tile_ops::map_rows;
  using generic_tile_ops::mma;
  using generic_tile_ops::row_reduce;
  using generic_tile_ops::store;

  using vec = xsimd::batch<float, Arch>;
  static constexpr int W = int(vec::size);
  static constexpr int M = Tuning::M, MV = M / W, NB = Tuning::NB;
  using col_atom = simd_col_atom<Arch, M>;
  static_assert(valid_atom<col_atom>(), "simd column atom: maps must cover its tiles");
  static_assert(M % 8 == 0 && M % W == 0 && Tuning::BQ % M == 0, "attention: M is whole vectors and 8-row groups");
  template <int TM, int TN> using ctile = rt<col_atom, operand::c, TM, TN>;

  static constexpr bool attention_fp32 = true;

  // ---- global -> shared (block scope) ----------------------------------------
  // Q: 8 rows × W columns at a time, transposed into the panels' columns.
  template <class Ctx, int R, int C, class TS>
  static void load(Ctx& ctx, st<float, col_panels<R, C, M>> dst, const gmatrix<TS>& src, int row0, int col0) {
    if (src.col_stride != 1 || C % W != 0) {
      generic_tile_ops::load(ctx, dst, src, row0, col0);
      return;
    }
    using L = col_panels<R, C, M>;
    for (int r = 0; r < R; r += 8)
      for (int c = 0; c < C; c += W) {
        if (row0 + r + 8 > src.rows || col0 + c + W > src.cols || row0 + r < 0 || col0 + c < 0) {
          for (int q = 0; q < 8; ++q)
            for (int k = 0; k < W; ++k) dst.data[L::offset(r + q, c + k)] = src.get(row0 + r + q, col0 + c + k);
          continue;
        }
        vec v[8];
        for (int q = 0; q < 8; ++q) v[q] = load_as_float<Arch>(src.addr(row0 + r + q, col0 + c));
        isa_ops<Arch>::transpose8(v, dst.data + L::offset(r, c), M);  // (q, k) -> column c + k, row r + q
      }
  }
  // Kᵀ (R = head_dim × C keys) from K rows: column c of the tile is row col0 + c of K.
  template <class Ctx, int R, int C, class TS>
  static void load(Ctx& ctx, st<float, key_rows<R, C>> dst, const gmatrix<TS>& src, int row0, int col0) {
    if (src.row_stride != 1 || R % W != 0) {
      generic_tile_ops::load(ctx, dst, src, row0, col0);
      return;
    }
    const bool rows_inside = row0 >= 0 && row0 + R <= src.rows;
    for (int c = 0; c < C; ++c) {
      float* out = dst.data + c * R;
      const int col = col0 + c;
      if (col < 0 || col >= src.cols) {
        for (int r = 0; r < R; r += W) vec(0.0f).store_unaligned(out + r);
      } else if (rows_inside) {
        const TS* in = src.addr(row0, col);
        for (int r = 0; r < R; r += W) load_as_float<Arch>(in + r).store_unaligned(out + r);
      } else {
        for (int r = 0; r < R; ++r) out[r] = src.get(row0 + r, col);
      }
    }
  }
  // V (R keys × C = head_dim): row by row, W columns at a time into NB-column panels.
  template <class Ctx, int R, int C, class TS>
  static void load(Ctx& ctx, st<float, row_panels<R, C, NB>> dst, const gmatrix<TS>& src, int row0, int col0) {
    if (src.col_stride != 1 || C % W != 0 || (NB % W != 0 && W % NB != 0)) {
      generic_tile_ops::load(ctx, dst, src, row0, col0);
      return;
    }
    using L = row_panels<R, C, NB>;
    const bool cols_inside = col0 >= 0 && col0 + C <= src.cols;
    for (int r = 0; r < R; ++r) {
      const int row = row0 + r;
      const bool inside = row >= 0 && row < src.rows;
      if (inside && !cols_inside) {
        for (int c = 0; c < C; ++c) dst.data[L::offset(r, c)] = src.get(row, col0 + c);
        continue;
      }
      for (int c = 0; c < C; c += W) {
        const vec x = inside ? load_as_float<Arch>(src.addr(row, col0 + c)) : vec(0.0f);
        if constexpr (NB % W == 0) {
          x.store_unaligned(dst.data + L::offset(r, c));
        } else {  // W / NB panels
          alignas(64) float tmp[W];
          x.store_aligned(tmp);
          for (int q = 0; q < W; q += NB) std::memcpy(dst.data + L::offset(r, c + q), tmp + q, sizeof(float) * NB);
        }
      }
    }
  }

  // ---- shared -> accumulator (warp scope) --------------------------------------
  // S += Q·Kᵀ: A panels of M rows (vector loads), B = key rows (broadcasts).
  template <class Ctx, int TM, int TN, int R, int K, int RB, int CB>
  static void mma(Ctx& ctx, ctile<TM, TN>& c, st<float, col_panels<R, K, M>> a, st<float, key_rows<RB, CB>> b,
                  int a_row0, int b_col0) {
    static_assert(K == RB, "mma: A's K must equal B's K");
    if (TN % NB != 0 || a_row0 % M != 0) {
      generic_tile_ops::mma(ctx, c, a, b, a_row0, b_col0);
      return;
    }
    for (int i = 0; i < TM; ++i) {
      const float* pa = a.data + (a_row0 / M + i) * (M * K);
      for (int j = 0; j < TN; j += NB) micro_kernel<1, K>(pa, b.data + (b_col0 + j) * K, c.frag[i][j], K, true);
    }
  }
  // O += P·V: A panels of M rows (vector loads), B = NB-column panels (broadcasts).
  template <class Ctx, int TM, int TN, int R, int K, int RB, int CB>
  static void mma(Ctx& ctx, ctile<TM, TN>& c, st<float, col_panels<R, K, M>> a, st<float, row_panels<RB, CB, NB>> b,
                  int a_row0, int b_col0) {
    static_assert(K == RB, "mma: A's K must equal B's K");
    if (TN % NB != 0 || a_row0 % M != 0 || b_col0 % NB != 0) {
      generic_tile_ops::mma(ctx, c, a, b, a_row0, b_col0);
      return;
    }
    for (int j = 0; j < TN; j += NB) {
      const float* pb = b.data + (b_col0 + j) / NB * (K * NB);
      for (int i = 0; i < TM; ++i) micro_kernel<NB, 1>(a.data + (a_row0 / M + i) * (M * K), pb, c.frag[i][j], K, true);
    }
  }
  // The W-row vectors of panel i under a mask: ends[w] is the first column (S)
  // or depth (P) that rows W·w .. W·w + W − 1 all hide (their last row's:
  // hidden_from never falls as the row grows), clamped to [0, n]; so ends
  // never falls as w grows either.
  template <class Mask> static void vector_ends(const Mask& m, int i, int n, int (&ends)[MV]) {
    for (int w = 0; w < MV; ++w) {
      const int e = m.hidden_from(i * M + w * W + W - 1);
      ends[w] = e < 0 ? 0 : e > n ? n : e;
    }
  }

  // mma_skipping (core/tile_ops.hpp), by vectors: S's column block j of panel i
  // on the vectors whose rows do not all hide it (a block no vector needs:
  // skipped, zeroed where accumulate is false), P·V's depth of each vector up
  // to its last visible key (one kernel over the panel, the vectors leaving the
  // k loop as their keys end).
  template <class Ctx, int TM, int TN, int R, int K, int RB, int CB, class Mask>
  static void mma_skipping(Ctx& ctx, ctile<TM, TN>& c, st<float, col_panels<R, K, M>> a, st<float, key_rows<RB, CB>> b,
                           int a_row0, int b_col0, masked_c<Mask> skip, bool accumulate) {
    static_assert(K == RB, "mma: A's K must equal B's K");
    if (TN % NB != 0 || a_row0 % M != 0) {
      if (!accumulate) generic_tile_ops::zero(c);
      generic_tile_ops::mma(ctx, c, a, b, a_row0, b_col0);
      return;
    }
    for (int i = 0; i < TM; ++i) {
      const float* pa = a.data + (a_row0 / M + i) * (M * K);
      int ends[MV];
      vector_ends(skip.mask, i, TN, ends);
      for (int j = 0; j < TN; j += NB) {
        int w0 = 0;  // the vectors before w0 hide the whole block
        while (w0 < MV && ends[w0] <= j) ++w0;
        float* cj = c.frag[i][j];
        const float* bj = b.data + (b_col0 + j) * K;
        if (w0 == MV) {
          if (!accumulate) std::memset(cj, 0, sizeof(float) * M * NB);
        } else {
          from_vector(w0, [&](auto v0) { micro_kernel<1, K, decltype(v0)::value>(pa, bj, cj, K, accumulate); });
        }
      }
    }
  }
  template <class Ctx, int TM, int TN, int R, int K, int RB, int CB, class Mask>
  static void mma_skipping(Ctx& ctx, ctile<TM, TN>& c, st<float, col_panels<R, K, M>> a,
                           st<float, row_panels<RB, CB, NB>> b, int a_row0, int b_col0, masked_a<Mask> skip,
                           bool accumulate) {
    static_assert(K == RB, "mma: A's K must equal B's K");
    if (TN % NB != 0 || a_row0 % M != 0 || b_col0 % NB != 0) {
      if (!accumulate) generic_tile_ops::zero(c);
      generic_tile_ops::mma(ctx, c, a, b, a_row0, b_col0);
      return;
    }
    int ends[TM][MV];
    for (int i = 0; i < TM; ++i) vector_ends(skip.mask, i, K, ends[i]);
    for (int j = 0; j < TN; j += NB) {
      const float* pb = b.data + (b_col0 + j) / NB * (K * NB);
      for (int i = 0; i < TM; ++i) {
        const float* pa = a.data + (a_row0 / M + i) * (M * K);
        if (ends[i][0] == ends[i][MV - 1]) {  // one depth for the whole panel (none: skipped)
          if (ends[i][0] > 0 || !accumulate) micro_kernel<NB, 1>(pa, pb, c.frag[i][j], ends[i][0], accumulate);
        } else {
          micro_kernel_by_vector<NB, 1>(pa, pb, c.frag[i][j], ends[i], accumulate);
        }
      }
    }
  }

  // ---- register -> shared / global (warp scope) -------------------------------
  // A C tile into M-row panels: the same layout, so a copy per panel.
  template <class Ctx, int TM, int TN, int R, int C>
  static void store(Ctx& ctx, st<float, col_panels<R, C, M>> dst, const ctile<TM, TN>& t, int row0, int col0) {
    if (row0 % M != 0) {
      generic_tile_ops::store(ctx, dst, t, row0, col0);
      return;
    }
    for (int i = 0; i < TM; ++i)
      std::memcpy(dst.data + (row0 / M + i) * (M * C) + col0 * M, &t.frag[i][0][0], sizeof(float) * M * TN);
  }
  // The epilogue: dst = alpha·t (+ beta·dst when beta != 0), inside dst only.
  template <class Ctx, int TM, int TN, class TD>
  static void store(Ctx& ctx, const gmatrix<TD>& dst, const ctile<TM, TN>& t, int row0, int col0, float alpha,
                    float beta) {
    if constexpr (TN % 8 != 0) {
      generic_tile_ops::store(ctx, dst, t, row0, col0, alpha, beta);
    } else {
      const vec va(alpha), vb(beta);
      alignas(64) float rows[M * TN];  // one panel, row-major
      for (int i = 0; i < TM; ++i) {
        for (int j = 0; j < TN; j += 8)
          for (int w = 0; w < MV; ++w) {
            vec v[8];
            for (int q = 0; q < 8; ++q) v[q] = vec::load_aligned(&t.frag[i][j + q][w * W]);
            isa_ops<Arch>::transpose8(v, rows + w * W * TN + j, TN);
          }
        const bool vector_cols = dst.col_stride == 1 && TN % W == 0 && col0 >= 0 && col0 + TN <= dst.cols;
        for (int m = 0; m < M; ++m) {
          const int r = row0 + i * M + m;
          if (r < 0 || r >= dst.rows) continue;
          const float* x = rows + m * TN;
          if (vector_cols) {
            TD* p = dst.addr(r, col0);
            for (int n = 0; n < TN; n += W) {
              vec out = va * vec::load_aligned(x + n);
              if (beta != 0.0f) out = out + vb * load_as_float<Arch>(p + n);
              store_from_float<Arch>(p + n, out);
            }
          } else {
            for (int n = 0; n < TN; ++n) {
              if (!dst.contains(r, col0 + n)) continue;
              TD* p = dst.addr(r, col0 + n);
              float out = alpha * x[n];
              if (beta != 0.0f) out += beta * to_float(*p);
              *p = convert<TD>(out);
            }
          }
        }
      }
    }
  }

  // ---- reductions and broadcasts over C tiles (warp scope) -----------------------
  // The row maximum folds a row's columns in order, like the generic one; the
  // panels' vectors are independent chains.
  template <class Ctx, int TM, int TN>
  static void row_reduce(Ctx&, col_vector<ctile<TM, TN>>& out, const ctile<TM, TN>& t, maximum) {
    // fmaxf per lane: b where a is NaN, else a where b is NaN, else the larger.
    fold_rows<TM, TN>(out, t, [](vec a, vec b) { return xsimd::select(a > b || xsimd::isnan(b), a, b); });
  }
  // The row sum pairwise, a tree over the columns (the same adds as a fold, more
  // of them independent): its rounding error grows with log2 of the columns
  // instead of their number, and a sum of equal values (every score the
  // row's maximum) is exact, so l keeps no bias that the fold's roundings
  // would leave in it the same way on every KV tile.
  template <class Ctx, int TM, int TN>
  static void row_reduce(Ctx&, col_vector<ctile<TM, TN>>& out, const ctile<TM, TN>& t, plus) {
    for (int i = 0; i < TM; ++i)
      for (int w = 0; w < MV; ++w) pairwise_sum<TM, TN, 0, TN>(t, i, w).store_unaligned(&out.value[i][w * W]);
  }
  // broadcast_rows for the op's three functors; row_op(f) is f on a vector of a
  // row's values and a vector of its entry (attention_amx.hpp uses them too).
  static auto row_op(exp2_of_difference f) {
    const vec scale(f.scale);
    return [=](vec x, vec m) { return exp2_weight_batch<Arch>(isa_ops<Arch>::fma(x, scale, -m)); };
  }
  static auto row_op(multiply) {
    return [](vec x, vec m) { return x * m; };
  }
  static auto row_op(multiply_or_zero) {
    return [](vec x, vec m) { return xsimd::select(m == vec(0.0f), vec(0.0f), x * m); };
  }
  template <int TM, int TN, class F>
  static auto broadcast_rows(ctile<TM, TN>& t, const col_vector<ctile<TM, TN>>& v, F f) -> decltype(row_op(f), void()) {
    each_row<TM, TN>(t, v, row_op(f));
  }
  // 2^x of the rows' entries (the rescale; one per row, contiguous): W rows at a time.
  template <int TM, int TN> static void map_rows(col_vector<ctile<TM, TN>>& v, power_of_two) {
    for (int i = 0; i < TM; ++i)
      for (int w = 0; w < MV; ++w)
        exp2_batch<Arch>(vec::load_unaligned(&v.value[i][w * W])).store_unaligned(&v.value[i][w * W]);
  }

 private:
  // C (M × NB at c: column n at c + n·M) = A (M × depth panel at a: column k at
  // a + k·M) · B (depth × NB: (k, n) at b[k·BK + n·BN]), + C where accumulate;
  // on the vectors from W0 on (rows W·W0 ..): those before it are left as they
  // are, or zeroed where accumulate is false.
  template <int BK, int BN, int W0 = 0>
  static void micro_kernel(const float* a, const float* b, float* c, int depth, bool accumulate) {
    vec acc[NB][MV];
    for (int n = 0; n < NB; ++n)
      for (int w = W0; w < MV; ++w) acc[n][w] = accumulate ? vec::load_aligned(c + n * M + w * W) : vec(0.0f);
    fma_depth<W0, BK, BN>(a, b, acc, 0, depth);
    for (int n = 0; n < NB; ++n) {
      for (int w = W0; w < MV; ++w) acc[n][w].store_aligned(c + n * M + w * W);
      if (!accumulate)
        for (int w = 0; w < W0; ++w) vec(0.0f).store_aligned(c + n * M + w * W);
    }
  }
  // The same on every vector, vector w's depth ends[w] (never falling as w
  // grows): the k loop in segments, segment V on the vectors from V on.
  template <int BK, int BN>
  static void micro_kernel_by_vector(const float* a, const float* b, float* c, const int (&ends)[MV], bool accumulate) {
    vec acc[NB][MV];
    for (int n = 0; n < NB; ++n)
      for (int w = 0; w < MV; ++w) acc[n][w] = accumulate ? vec::load_aligned(c + n * M + w * W) : vec(0.0f);
    depth_segments<0, BK, BN>(a, b, acc, ends, 0);
    for (int n = 0; n < NB; ++n)
      for (int w = 0; w < MV; ++w) acc[n][w].store_aligned(c + n * M + w * W);
  }
  template <int V, int BK, int BN>
  static void depth_segments(const float* a, const float* b, vec (&acc)[NB][MV], const int (&ends)[MV], int k) {
    fma_depth<V, BK, BN>(a, b, acc, k, ends[V]);
    if constexpr (V + 1 < MV) depth_segments<V + 1, BK, BN>(a, b, acc, ends, k > ends[V] ? k : ends[V]);
  }
  // acc[n][w] += A's column k (vector w) · B(k, n) for k in [k0, k1), on the vectors from V on.
  template <int V, int BK, int BN>
  static void fma_depth(const float* a, const float* b, vec (&acc)[NB][MV], int k0, int k1) {
    for (int k = k0; k < k1; ++k) {
      vec av[MV];
      for (int w = V; w < MV; ++w) av[w] = vec::load_aligned(a + k * M + w * W);
      for (int n = 0; n < NB; ++n) {
        const vec bv(b[k * BK + n * BN]);
        for (int w = V; w < MV; ++w) acc[n][w] = xsimd::fma(av[w], bv, acc[n][w]);
      }
    }
  }
  // f(std::integral_constant<int, w0>) for w0 in [0, MV).
  template <int V = 0, class F> static void from_vector(int w0, F f) {
    if constexpr (V + 1 < MV) {
      if (w0 != V) {
        from_vector<V + 1>(w0, f);
        return;
      }
    }
    f(std::integral_constant<int, V>{});
  }

  template <int TM, int TN, class Op> static void fold_rows(col_vector<ctile<TM, TN>>& out, const ctile<TM, TN>& t, Op op) {
    vec acc[TM][MV];
    for (int i = 0; i < TM; ++i)
      for (int w = 0; w < MV; ++w) acc[i][w] = vec::load_aligned(&t.frag[i][0][w * W]);
    for (int j = 1; j < TN; ++j)
      for (int i = 0; i < TM; ++i)
        for (int w = 0; w < MV; ++w) acc[i][w] = op(acc[i][w], vec::load_aligned(&t.frag[i][j][w * W]));
    for (int i = 0; i < TM; ++i)
      for (int w = 0; w < MV; ++w) acc[i][w].store_unaligned(&out.value[i][w * W]);
  }
  // Σ columns [J, J + N) of panel i's vector w: the halves summed apart, then added.
  template <int TM, int TN, int J, int N> static vec pairwise_sum(const ctile<TM, TN>& t, int i, int w) {
    if constexpr (N == 1) {
      return vec::load_aligned(&t.frag[i][J][w * W]);
    } else {
      return pairwise_sum<TM, TN, J, N / 2>(t, i, w) + pairwise_sum<TM, TN, J + N / 2, N - N / 2>(t, i, w);
    }
  }
  template <int TM, int TN, class F> static void each_row(ctile<TM, TN>& t, const col_vector<ctile<TM, TN>>& v, F f) {
    for (int i = 0; i < TM; ++i) {
      vec m[MV];
      for (int w = 0; w < MV; ++w) m[w] = vec::load_unaligned(&v.value[i][w * W]);
      for (int j = 0; j < TN; ++j)
        for (int w = 0; w < MV; ++w) f(vec::load_aligned(&t.frag[i][j][w * W]), m[w]).store_aligned(&t.frag[i][j][w * W]);
    }
  }
};

}  // namespace tessel::cpu
