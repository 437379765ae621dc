// tessel/cpu/attention_amx.hpp — the attention tile ops of the AMX CPU policy (bf16 in).
//
// amx_attention_ops<Base, Tuning> is Base (a simd_policy, whose SIMD vectors
// these ops use) plus the fast overloads that the shared attention op
// (ops/attention/kernel.hpp) reaches on its tiles; amx_policy (policy_amx.hpp)
// derives from it and adds the loads, the mma and the attention configuration
// for bf16 inputs (attention_config.hpp's amx_attention_config, whose
// schedule runs on the whole policy).
// C tiles rt<amx_atom, c, TM, TN> (S and O) are 16 × 16 row-major fp32 blocks
// (atom/amx.hpp):
//   frag[i][j][16·r + c] is (16·i + r, 16·j + c)
// so a fragment row is 16 / W vectors, and a col_vector keeps row 16·i + r at
// value[i][16·r] (first_in_row). Fast paths (each computes what
// core/tile_ops.hpp computes on the same layouts and atom; the row sum
// pairwise, as the SIMD policy's; the same bits on AVX2 and AVX-512):
//   row_reduce     maximum (fmaxf: NaN skipped), plus (pairwise over the row);
//                  16 rows' last folds at once (isa_ops::fold16)
//   broadcast_rows exp2_of_difference (arch/exp2.hpp's exp2_batch_for_bf16:
//                  2.9e-6 relative, not the fp32 paths' ~1 ulp, since on these
//                  tiles it makes P, which is rounded to bf16 next), multiply
//                  (rows whose factor is exactly 1 skipped), multiply_or_zero
//   map_rows       power_of_two (the rescale): 16 rows at once by the SIMD exp2
//   map            hide_keys (the mask): each row's hidden columns by vector
//                  selects, from the first fragment holding one
//   store          C tile -> the P panel (amx_a): rounded to bf16 to nearest
//                  even, 16 values at a time into the sub-tiles' rows; on 16
//                  lanes by AVX512_BF16's vcvtneps2bf16, which flushes
//                  subnormals to zero, elsewhere like element.hpp, which keeps
//                  them: tdpbf16ps reads subnormal bf16 as zero, so out is the
//                  same bits either way
// ODR: everything is a template on Base.
#pragma once
#include <type_traits>

#include "tessel/core/math.hpp"
#include "tessel/core/tile_ops.hpp"
#include "tessel/cpu/arch/convert.hpp"
#include "tessel/cpu/arch/exp2.hpp"
#include "tessel/cpu/arch/isa_ops.hpp"  // specialised by Base's arch header
#include "tessel/cpu/atom/amx.hpp"
#include "tessel/cpu/attention_config.hpp"

namespace tessel::cpu {

template <class Base, class Tuning> struct amx_attention_ops : Base {
  using Base::broadcast_rows;
  using Base::map;
  using Base::map_rows;
  using Base::row_reduce;
  using Base::store;

  using vec = typename Base::vec;
  using arch = typename vec::arch_type;
  static constexpr int W = int(vec::size);
  static constexpr int RV = 16 / W;  // vectors per fragment row
  static_assert(16 % W == 0, "amx attention: a fragment row is whole vectors");
  template <int TM, int TN> using ctile = rt<amx_atom, operand::c, TM, TN>;

  // ---- reductions and broadcasts over C tiles ----------------------------------
  // Per column c of the fragments a fold over the TN fragments (the maximum in
  // fragment order, the sum as a pairwise tree), then the 16 columns of each
  // row as a tree (isa_ops::fold16, 16 rows at once). The same operations
  // whatever W is (AVX2 and AVX-512 give the same bits).
  template <class Ctx, int TM, int TN>
  static void row_reduce(Ctx&, col_vector<ctile<TM, TN>>& out, const ctile<TM, TN>& t, maximum) {
    // fmaxf per lane: b where a is NaN, else a where b is NaN, else the larger.
    const auto op = [](vec a, vec b) { return xsimd::select(a > b || xsimd::isnan(b), a, b); };
    for (int i = 0; i < TM; ++i) {
      vec x[16 * RV];
      for (int r = 0; r < 16; ++r)
        for (int w = 0; w < RV; ++w) {
          vec acc = vec::load_aligned(&t.frag[i][0][16 * r + w * W]);
          for (int j = 1; j < TN; ++j) acc = op(acc, vec::load_aligned(&t.frag[i][j][16 * r + w * W]));
          x[r * RV + w] = acc;
        }
      fold_rows(x, op, out, i);
    }
  }
  template <class Ctx, int TM, int TN>
  static void row_reduce(Ctx&, col_vector<ctile<TM, TN>>& out, const ctile<TM, TN>& t, plus) {
    for (int i = 0; i < TM; ++i) {
      vec x[16 * RV];
      for (int r = 0; r < 16; ++r)
        for (int w = 0; w < RV; ++w) x[r * RV + w] = pairwise_sum<TM, TN, 0, TN>(t, i, 16 * r + w * W);
      fold_rows(x, [](vec a, vec b) { return a + b; }, out, i);
    }
  }
  // The SIMD policy's vector bodies (attention_simd.hpp's row_op) on each fragment row.
  template <int TM, int TN, class F>
  static auto broadcast_rows(ctile<TM, TN>& t, const col_vector<ctile<TM, TN>>& v, F f)
      -> decltype(Base::row_op(f), void()) {
    each_row<TM, TN>(t, v, Base::row_op(f));
  }
  // x · m, rows whose m is exactly 1 left as they are (x · 1 is x, bit for bit,
  // but for a signalling NaN, which arithmetic never leaves in a C tile): the
  // attention's rescale of O, 1 on every row whose maximum stood still.
  template <int TM, int TN>
  static void broadcast_rows(ctile<TM, TN>& t, const col_vector<ctile<TM, TN>>& v, multiply f) {
    each_row<TM, TN, true>(t, v, Base::row_op(f));
  }
  // 2^x of the rows' entries (the rescale), 16 rows at a time by the SIMD exp2
  // (~1 ulp, like the libm exp2f of the generic map_rows).
  template <int TM, int TN> static void map_rows(col_vector<ctile<TM, TN>>& v, power_of_two) {
    alignas(64) float x[16];
    for (int i = 0; i < TM; ++i) {
      for (int r = 0; r < 16; ++r) x[r] = v.value[i][16 * r];
      for (int w = 0; w < RV; ++w) exp2_batch<arch>(vec::load_aligned(x + w * W)).store_aligned(x + w * W);
      for (int r = 0; r < 16; ++r) v.value[i][16 * r] = x[r];
    }
  }
  // The attention's mask: each row's hidden columns [hidden_from(r), 16·TN) set
  // to −∞ a vector at a time, from the first fragment that holds one.
  template <class Ctx, int TM, int TN> static void map(Ctx&, ctile<TM, TN>& t, hide_keys f) {
    alignas(64) float lane[W];
    for (int l = 0; l < W; ++l) lane[l] = float(l);
    const vec iota = vec::load_aligned(lane), hidden(neg_infinity());
    for (int i = 0; i < TM; ++i)
      for (int r = 0; r < 16; ++r) {
        const int from = f.hidden_from(16 * i + r);
        if (from >= 16 * TN) continue;
        const vec first(float(from < 0 ? 0 : from));
        for (int j = from > 0 ? from / 16 : 0; j < TN; ++j)
          for (int w = 0; w < RV; ++w) {
            float* x = &t.frag[i][j][16 * r + w * W];
            xsimd::select(iota + vec(float(16 * j + w * W)) >= first, hidden, vec::load_aligned(x)).store_aligned(x);
          }
      }
  }
  // exp2 to 2.9e-6 relative (arch/exp2.hpp's exp2_weight_batch_for_bf16: +0
  // below 2^-125, where tdpbf16ps reads P's subnormals as zero anyway, so that
  // a masked score's −inf never underflows): on these tiles it makes the
  // attention's P, which is rounded to bf16 (2^-9) next.
  template <int TM, int TN>
  static void broadcast_rows(ctile<TM, TN>& t, const col_vector<ctile<TM, TN>>& v, exp2_of_difference f) {
    const vec scale(f.scale);
    each_row<TM, TN>(t, v,
                     [=](vec x, vec m) { return exp2_weight_batch_for_bf16<arch>(isa_ops<arch>::fma(x, scale, -m)); });
  }

  // ---- C tile -> the P panel (warp scope) --------------------------------------
  // Rows row0.. and columns col0.. of the panel; the panel's extent becomes its
  // whole R × C (rows past the query rows hold what their zero Q rows gave,
  // which no store reads; columns past the keys hold exp2(−inf) = 0).
  template <class Ctx, int TM, int TN, int R, int C>
  static void store(Ctx& ctx, st<bf16, amx_a<R, C>> dst, const ctile<TM, TN>& t, int row0, int col0) {
    if (row0 % 16 != 0 || col0 % 16 != 0) {
      generic_tile_ops::store(ctx, dst, t, row0, col0);
    } else {
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) {
          const int r0 = row0 + 16 * i, c0 = col0 + 16 * j;
          bf16* sub = dst.data + ((r0 / 16) * (C / 32) + c0 / 32) * 512 + c0 % 32;
          for (int r = 0; r < 16; ++r)
            for (int w = 0; w < RV; ++w)
              store_p(sub + 32 * r + w * W, vec::load_aligned(&t.frag[i][j][16 * r + w * W]));
        }
    }
    amx_a<R, C>::extent::set(dst.data, R, C);
  }

 private:
  // P to bf16 (see store above): the instruction on 16 lanes (every CPU with
  // AMX has AVX512_BF16), element.hpp's rounding on vectors elsewhere.
  static void store_p(bf16* dst, vec x) {
    if constexpr (W == 16) isa_ops<arch>::store_bf16_ne(reinterpret_cast<std::uint16_t*>(dst), x);
    else store_from_float<arch>(dst, x);
  }
  // out's rows of tile row i (their first values 16 · r) = the 16 rows of x folded.
  template <class Op, class Tile> static void fold_rows(const vec (&x)[16 * RV], Op op, col_vector<Tile>& out, int i) {
    alignas(64) float folded[16];
    isa_ops<arch>::fold16(x, op, folded);
    for (int r = 0; r < 16; ++r) out.value[i][16 * r] = folded[r];
  }
  // Σ over fragments j in [J, J + N) of tile row i of the vector at value v:
  // the halves summed apart, then added.
  template <int TM, int TN, int J, int N> static vec pairwise_sum(const ctile<TM, TN>& t, int i, int v) {
    if constexpr (N == 1) {
      return vec::load_aligned(&t.frag[i][J][v]);
    } else {
      return pairwise_sum<TM, TN, J, N / 2>(t, i, v) + pairwise_sum<TM, TN, J + N / 2, N - N / 2>(t, i, v);
    }
  }
  // f(x, m) over each fragment row, m its entry of v; with SkipOnes, rows whose
  // entry is exactly 1 are left as they are.
  template <int TM, int TN, bool SkipOnes = false, class F>
  static void each_row(ctile<TM, TN>& t, const col_vector<ctile<TM, TN>>& v, F f) {
    for (int i = 0; i < TM; ++i)
      for (int r = 0; r < 16; ++r) {
        if (SkipOnes && v.value[i][16 * r] == 1.0f) continue;
        const vec m(v.value[i][16 * r]);
        for (int j = 0; j < TN; ++j)
          for (int w = 0; w < RV; ++w) {
            float* x = &t.frag[i][j][16 * r + w * W];
            f(vec::load_aligned(x), m).store_aligned(x);
          }
      }
  }
};

}  // namespace tessel::cpu
